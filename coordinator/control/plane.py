"""ServerControl: the ControlPlane (plane_api.py) of a running server, in its trio loop.

It acts only through the parts a request would use or that own the change: the controller for
brokers and leaders (a moved __consumer_offsets partition reloads in its runtime), the group
service of the group's coordinator for forced expiries and rebalances (so they write what a
timeout or a rejoin writes), the fault rules, the request log, the version limits, and the
clock. A manual clock advances in steps, from timer deadline to deadline across every runtime,
firing each timer at its own time and waiting for its records, so `advance` returns with every
effect in place. Refusals are ControlError with one line (404 unknown, 409 not possible now).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from coordinator.broker.topics import TopicRegistry
from coordinator.cluster.cluster import Cluster, ClusterError, LeaderChange
from coordinator.cluster.controller import Controller
from coordinator.control import security_control, share_control, telemetry_control
from coordinator.control.errors import ControlError, conflict, not_found, unavailable
from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import FaultRules, FaultView
from coordinator.control.plane_api import (
    BrokerView,
    ClockView,
    GroupView,
    MemberView,
    PartitionView,
    TimerWait,
    consumer_assignment,
    consumer_subscription,
    to_jsonable,
)
from coordinator.control.security_control import AclSpec, ScramUserSpec
from coordinator.control.share_view import share_group_view
from coordinator.control.tracking import RequestLog, RequestsPage
from coordinator.control.transitions import TransitionLog, TransitionsPage
from coordinator.control.versions import VersionLimits, VersionView
from coordinator.control.waits import waits_of
from coordinator.groups.group import ClassicGroup
from coordinator.groups.placement import partition_for
from coordinator.groups.service import GroupService
from coordinator.groups.shard import GroupShard
from coordinator.groups.share.group import ShareGroup
from coordinator.runtime.clock import ManualClock, TimerClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime, PartitionState
from coordinator.runtime.timers import Timers
from coordinator.share.service import ShareService
from coordinator.share.settings import ShareSettings
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from coordinator.admin.configs import ConfigService
    from coordinator.telemetry.wiring import TelemetryParts


class TimerSource(Protocol):
    """Anything whose timers the manual clock's advance fires (coordinator runtimes, the share
    partitions' acquisition locks)."""

    @property
    def timers(self) -> Timers: ...

    async def fire_due(self) -> int: ...


class ServerControl:
    def __init__(
        self,
        *,
        cluster: Cluster,
        controller: Controller,
        topics: TopicRegistry,
        services: dict[int, GroupService],
        group_runtime: CoordinatorRuntime[GroupShard],
        runtimes: Sequence[CoordinatorRuntime[Any]],
        rules: FaultRules,
        log: RequestLog,
        transitions: TransitionLog,
        limits: VersionLimits,
        clock: TimerClock,
        timer_sources: Sequence[TimerSource] = (),
        share_settings: ShareSettings | None = None,
        shares: Mapping[int, ShareService] | None = None,
        security: Any = None,
        telemetry: TelemetryParts | None = None,
        configs: ConfigService | None = None,
    ) -> None:
        """`security`: the server's listeners, credentials and ACLs (coordinator/security/setup.py)."""
        self._cluster = cluster
        self._controller = controller
        self._topics = topics
        self._services = services  # node id -> that broker's GroupService
        self._group_runtime = group_runtime
        self._runtimes = list(runtimes)
        self.rules = rules
        self.log = log
        self._transitions = transitions
        self.limits = limits
        self._clock = clock
        # What else runs timers on the injected clock (share-partition acquisition locks).
        self._timer_sources: list[TimerSource] = [*runtimes, *timer_sources]
        self._share_settings = share_settings if share_settings is not None else ShareSettings()
        self._shares = dict(shares or {})
        self._security = security
        self._telemetry, self._configs = telemetry, configs  # KIP-714 (telemetry_control.py)

    # -- brokers ---------------------------------------------------------------------------------
    def brokers(self) -> list[BrokerView]:
        self._cluster.catch_up()  # cluster.processes: what the other broker processes decided
        return [BrokerView(n.node_id, n.host, n.port, n.up) for n in self._cluster.nodes.values()]

    def _broker(self, node_id: int) -> BrokerView:
        node = self._cluster.nodes.get(node_id)
        if node is None:
            raise not_found(f"no broker {node_id} (brokers are {sorted(self._cluster.nodes)})")
        return BrokerView(node.node_id, node.host, node.port, node.up)

    async def broker_down(self, node_id: int) -> BrokerView:
        self._broker(node_id)
        await self._controller.broker_down(node_id)
        return self._broker(node_id)

    async def broker_up(self, node_id: int) -> BrokerView:
        self._broker(node_id)
        await self._controller.broker_up(node_id)
        return self._broker(node_id)

    # -- fault rules -----------------------------------------------------------------------------
    def add_fault(self, spec: FaultSpec) -> int:
        return self.rules.add(spec)

    def faults(self) -> list[FaultView]:
        return self.rules.list()

    def remove_fault(self, fault_id: int) -> None:
        self.rules.remove(fault_id)

    def clear_faults(self) -> int:
        return self.rules.clear()

    # -- groups ----------------------------------------------------------------------------------
    def _coordinator(self, group_id: str) -> int:
        return self._controller.coordinator_of(group_id)

    def _live_group(self, group_id: str) -> Any:
        runtime = self._group_runtime
        shard = runtime.shard(partition_for(group_id, runtime.num_partitions))
        return None if shard is None else shard.groups.get(group_id)

    def group(self, group_id: str) -> GroupView:
        group = self._live_group(group_id)
        if group is None:
            runtime = self._group_runtime
            partition = partition_for(group_id, runtime.num_partitions)
            state = runtime.state(partition)
            if state is PartitionState.LOADING or state is PartitionState.FAILED:
                # What a client hears as COORDINATOR_LOAD_IN_PROGRESS: the group may well exist.
                raise unavailable(f"group {group_id!r}: __consumer_offsets-{partition} is {state.value}, retry")
            if state is PartitionState.UNLOADED:
                raise conflict(f"group {group_id!r}: no broker leads __consumer_offsets-{partition}")
            raise not_found(f"no group {group_id!r}")
        return group_view(group, self._coordinator(group_id), self._topic_name, self._waits(group_id))

    def _topic_name(self, topic_id: Any) -> str | None:
        topic = self._topics.by_id(topic_id)
        return None if topic is None else topic.name

    def _waits(self, group_id: str) -> list[TimerWait]:
        """The timers the group waits on; only a manual clock leaves anyone waiting on one."""
        if not isinstance(self._clock, ManualClock):
            return []
        return waits_of(self._group_runtime, self._clock)(group_id)

    def group_state(self, group_id: str) -> str | None:
        """The group's state name for fault rules that wait for one (None: no such group)."""
        group = self._live_group(group_id)
        return None if group is None else str(group.state)

    async def move_coordinator(self, group_id: str, node_id: int) -> PartitionView:
        self._broker(node_id)
        change = self._move(lambda: self._controller.move_coordinator(group_id, node_id))
        return self._partition(change.topic, change.partition)

    async def expire_member(self, group_id: str, member_id: str) -> None:
        await self._forced(group_id, lambda service: service.expire_member(group_id, member_id))

    async def rebalance(self, group_id: str) -> None:
        await self._forced(group_id, lambda service: service.rebalance(group_id))

    async def _forced(self, group_id: str, act: Any) -> None:
        node = self._coordinator(group_id)
        if node < 0:
            raise conflict(f"group {group_id!r} has no coordinator: its partition has no leader")
        error = await act(self._services[node])
        if error == ErrorCode.UNKNOWN_MEMBER_ID:
            raise not_found(f"no such member in group {group_id!r}")
        if error == ErrorCode.GROUP_ID_NOT_FOUND:
            raise not_found(f"no group {group_id!r}")
        if error not in (ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS):
            raise conflict(f"group {group_id!r}: {ErrorCode(error).name}")

    # -- partitions ------------------------------------------------------------------------------
    def _partition(self, topic: str, partition: int) -> PartitionView:
        self._cluster.catch_up()
        lead = self._cluster.leadership(topic, partition)
        if lead is None:
            raise not_found(f"no partition {topic}-{partition}")
        return PartitionView(topic, partition, lead.leader, lead.epoch, list(lead.replicas))

    def _move(self, act: Any) -> LeaderChange:
        try:
            change: LeaderChange = act()
        except ClusterError as exc:
            text = str(exc)
            raise (conflict(text) if "down" in text else not_found(text)) from None
        return change

    async def move_leader(self, topic: str, partition: int, node_id: int) -> PartitionView:
        self._partition(topic, partition)
        self._broker(node_id)
        self._move(lambda: self._controller.move_leader(topic, partition, node_id))
        return self._partition(topic, partition)

    async def make_leaderless(self, topic: str, partition: int) -> PartitionView:
        self._partition(topic, partition)
        self._move(lambda: self._controller.make_leaderless(topic, partition))
        return self._partition(topic, partition)

    def set_coordinator_load_delay(self, ms: int) -> None:
        for runtime in self._runtimes:
            runtime.load_delay_ms = ms

    # -- share groups ------------------------------------------------------------------------------
    def share_settings(self) -> dict[str, Any]:
        return share_control.settings_view(self._share_settings)

    def set_share_settings(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        return share_control.apply_settings(self._share_settings, changes)

    def share_partitions(self, group_id: str) -> list[dict[str, Any]]:
        return share_control.share_partitions(self._shares, group_id)

    # -- client telemetry (KIP-714) -----------------------------------------------------------------
    def _parts(self) -> tuple[TelemetryParts, ConfigService]:
        if self._telemetry is None or self._configs is None:
            raise conflict("this server does not serve client telemetry")
        return self._telemetry, self._configs

    def telemetry_clients(self) -> list[dict[str, Any]]:
        return telemetry_control.clients(self._parts()[0].store)

    def telemetry_client(self, key: str, prefix: str = "") -> dict[str, Any]:
        return telemetry_control.client(self._parts()[0].store, key, prefix)

    def telemetry_subscriptions(self) -> list[dict[str, Any]]:
        return telemetry_control.subscriptions_view(self._parts()[0].subscriptions)

    def set_telemetry_subscription(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return telemetry_control.set_subscription(self._parts()[1], name, body, min(self._cluster.nodes))

    def delete_telemetry_subscription(self, name: str) -> None:
        telemetry_control.delete_subscription(self._parts()[1], name, min(self._cluster.nodes))

    # -- advertised versions -----------------------------------------------------------------------
    def versions(self) -> list[VersionView]:
        return self.limits.views()

    def limit_version(self, api: str | int, max_version: int, min_version: int | None = None) -> VersionView:
        return self.limits.limit(api, max_version, min_version)

    def clear_versions(self) -> None:
        self.limits.clear()

    # -- clock -----------------------------------------------------------------------------------
    def clock(self) -> ClockView:
        return ClockView("manual" if isinstance(self._clock, ManualClock) else "system", self._clock.time_ms())

    async def advance_clock(self, ms: int) -> ClockView:
        clock = self._clock
        if not isinstance(clock, ManualClock):
            raise conflict("the clock is the system clock: start with clock.mode=manual to advance it")
        if ms < 0:
            raise ControlError(400, "time does not go backwards")
        target = clock.time_ms() + ms
        while True:  # deadline by deadline: each timer fires at its own time, in order
            due = [d for r in self._timer_sources if (d := r.timers.next_deadline()) is not None and d <= target]
            if not due:
                break
            clock.set_time(max(clock.time_ms(), min(due)))
            for source in self._timer_sources:
                await source.fire_due()
        clock.set_time(target)
        return self.clock()

    # -- request log and state ---------------------------------------------------------------------
    def requests(
        self, since: int = 0, api: str | int | None = None, group: str | None = None, limit: int = 100
    ) -> RequestsPage:
        return self.log.page(since, api, group, limit)

    def clear_requests(self) -> None:
        self.log.clear()

    def transitions(self, since: int = 0, group: str | None = None, limit: int = 200) -> TransitionsPage:
        return self._transitions.page(since, group, limit)

    def acls(self) -> list[dict[str, object]]:
        return security_control.acls(self._security)

    def add_acl(self, spec: AclSpec) -> dict[str, object]:
        return security_control.add_acl(self._security, spec)

    def add_scram_user(self, spec: ScramUserSpec) -> dict[str, object]:
        return security_control.add_scram_user(self._security, spec)

    def security(self) -> dict[str, Any]:
        """Each listener's protocol, authentication counters and open connections (principal and
        mechanism), and the ACL count: nothing secret (no password, token or key)."""
        security = self._security
        if security is None:
            return {"listeners": [], "acls": None}
        authorizer = security.authorizer
        return {
            "listeners": [plan.view() for plan in security.plans],
            "acls": None if authorizer is None else len(authorizer.acls()),
        }

    def snapshot(self) -> dict[str, Any]:
        groups, offsets = [], {}
        for shard in self._group_runtime.shards():
            for group_id, group in list(shard.groups.items()):
                view = group_view(group, self._coordinator(group_id), self._topic_name, self._waits(group_id))
                groups.append(to_jsonable(view))
            for group_id, committed in list(shard.offsets.groups.items()):
                offsets[group_id] = {
                    f"{t}-{p}": {"offset": r.offset, "leader_epoch": r.leader_epoch, "metadata": r.metadata}
                    for (t, p), r in sorted(committed.items())
                }
        topics = []
        for topic in self._topics.all():
            topics.append(
                {
                    "name": topic.name,
                    "topic_id": topic.topic_id_text,
                    "internal": topic.internal,
                    "replication_factor": topic.replication_factor,
                    "partitions": [to_jsonable(self._partition(topic.name, p)) for p in range(topic.partitions)],
                }
            )
        return {
            "security": self.security(),
            "clock": to_jsonable(self.clock()),
            "brokers": to_jsonable(self.brokers()),
            "groups": groups,
            "offsets": offsets,
            "topics": topics,
            "transactions": self._transactions(),
        }

    def _transactions(self) -> list[dict[str, Any]]:
        """Every transactional id of the __transaction_state runtime, and the offsets each open
        transaction holds pending in __consumer_offsets."""
        pending: dict[int, dict[str, list[str]]] = {}
        for shard in self._group_runtime.shards():
            for pid, by_group in list(shard.txn_offsets.pending.items()):
                for group_id, offsets in by_group.items():
                    pending.setdefault(pid, {})[group_id] = [f"{t}-{p}" for t, p in sorted(offsets)]
        out = []
        for runtime in self._runtimes:
            if runtime.kind.topic != "__transaction_state":
                continue
            for shard in runtime.shards():
                for meta in list(shard.transactions.values()):
                    out.append(
                        {
                            "transactional_id": meta.transactional_id,
                            "state": str(meta.state),
                            "producer_id": meta.producer_id,
                            "producer_epoch": meta.producer_epoch,
                            "timeout_ms": meta.timeout_ms,
                            "start_ms": meta.start_ms,
                            "partitions": [f"{t}-{p}" for t, p in meta.sorted_partitions()],
                            "pending_offsets": pending.get(meta.producer_id, {}),
                        }
                    )
        return sorted(out, key=lambda t: t["transactional_id"])


def group_view(
    group: Any,
    coordinator: int,
    topic_name: Callable[[Any], str | None] | None = None,
    waiting: Sequence[TimerWait] = (),
) -> GroupView:
    """A group as the control plane shows it: a classic group's members with their
    consumer-protocol data decoded, a share group's with their subscriptions, epochs and
    assignments (topics by name through `topic_name`, else by id), with the timers it waits on
    under a manual clock."""
    if isinstance(group, ShareGroup):
        return share_group_view(group, coordinator, topic_name or (lambda _: None))
    if isinstance(group, ClassicGroup):
        members = [
            MemberView(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.session_timeout_ms,
                m.rebalance_timeout_ms,
                consumer_subscription(m.metadata(group.protocol_name)) if group.protocol_name else None,
                consumer_assignment(m.assignment),
            )
            for m in group.members.values()
        ]
        return GroupView(
            group.group_id,
            "classic",
            str(group.state),
            group.generation_id,
            coordinator,
            group.protocol_type,
            group.protocol_name,
            group.leader_id,
            members,
            list(waiting),
        )
    return GroupView(
        getattr(group, "group_id", "?"),
        "consumer",
        str(getattr(group, "state", "?")),
        int(getattr(group, "group_epoch", 0)),
        coordinator,
        "consumer",
        None,
        None,
        [],
        list(waiting),
    )


__all__ = ["ServerControl", "group_view"]
