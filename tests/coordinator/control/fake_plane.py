"""FakeControlPlane: the ControlPlane interface over in-memory state, for testing the HTTP API
and the CLI without a server. Fault rules, the request log, version limits and the manual clock
are the real ones; brokers, groups and partitions are plain data with the same refusals a real
plane gives (unknown -> 404, a move to a down broker -> 409, advancing a system clock -> 409)."""

from __future__ import annotations

from typing import Any

from coordinator.control import share_control
from coordinator.control.errors import ControlError, bad_request, conflict, not_found
from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import FaultRules, FaultView
from coordinator.control.plane_api import (
    BrokerView,
    ClockView,
    GroupView,
    MemberView,
    PartitionView,
    TopicPartitions,
    to_jsonable,
)
from coordinator.control.security_control import AclSpec, ScramUserSpec
from coordinator.control.tracking import RequestLog, RequestsPage
from coordinator.control.transitions import TransitionLog, TransitionsPage
from coordinator.control.versions import VersionLimits, VersionView
from coordinator.runtime.clock import ManualClock
from coordinator.share.settings import ShareSettings


class FakeControlPlane:
    def __init__(self, brokers: int = 3, manual: bool = True) -> None:
        self.clock_ = ManualClock(1_700_000_000_000)
        self.manual = manual
        self.acl_list: list[dict[str, object]] = []
        self.scram_users: list[str] = []
        self.brokers_ = {n: BrokerView(n, "127.0.0.1", 9092 + n, True) for n in range(brokers)}
        self.rules = FaultRules(self.clock_, node_ids=lambda: self.brokers_)
        self.log = RequestLog(100)
        self.transition_log = TransitionLog(self.clock_)
        self.limits = VersionLimits()
        self.load_delay_ms = 0
        self.share = ShareSettings()
        self.calls: list[tuple[Any, ...]] = []  # actions, in order, for tests to check
        self.partitions = {
            ("orders", p): PartitionView("orders", p, p % brokers, 0, list(range(brokers))) for p in range(3)
        }
        self.groups = {
            "a/b": GroupView("a/b", "classic", "Empty", 0, 0, None, None, None, []),
            "g": GroupView(
                "g",
                "classic",
                "Stable",
                3,
                1,
                "consumer",
                "range",
                "m-1",
                [
                    MemberView(
                        "m-1",
                        None,
                        "app",
                        "/127.0.0.1",
                        45_000,
                        300_000,
                        ["orders"],
                        [TopicPartitions("orders", [0, 1])],
                    ),
                    MemberView(
                        "m-2",
                        "static-2",
                        "app",
                        "/127.0.0.1",
                        45_000,
                        300_000,
                        ["orders"],
                        [TopicPartitions("orders", [2])],
                    ),
                ],
            ),
        }
        self.groups["a/b/rebalance"] = GroupView("a/b/rebalance", "classic", "Empty", 0, 0, None, None, None, [])

    def _broker(self, node_id: int) -> BrokerView:
        if node_id not in self.brokers_:
            raise not_found(f"unknown broker {node_id}")
        return self.brokers_[node_id]

    def _group(self, group_id: str) -> GroupView:
        if group_id not in self.groups:
            raise not_found(f"unknown group {group_id!r}")
        return self.groups[group_id]

    def _partition(self, topic: str, partition: int) -> PartitionView:
        if (topic, partition) not in self.partitions:
            raise not_found(f"unknown partition {topic}-{partition}")
        return self.partitions[(topic, partition)]

    def brokers(self) -> list[BrokerView]:
        return list(self.brokers_.values())

    async def broker_down(self, node_id: int) -> BrokerView:
        old = self._broker(node_id)
        self.calls.append(("down", node_id))
        self.brokers_[node_id] = BrokerView(old.node_id, old.host, old.port, False)
        return self.brokers_[node_id]

    async def broker_up(self, node_id: int) -> BrokerView:
        old = self._broker(node_id)
        self.calls.append(("up", node_id))
        self.brokers_[node_id] = BrokerView(old.node_id, old.host, old.port, True)
        return self.brokers_[node_id]

    def add_fault(self, spec: FaultSpec) -> int:
        return self.rules.add(spec)

    def faults(self) -> list[FaultView]:
        return self.rules.list()

    def remove_fault(self, fault_id: int) -> None:
        self.rules.remove(fault_id)

    def clear_faults(self) -> int:
        return self.rules.clear()

    def group(self, group_id: str) -> GroupView:
        return self._group(group_id)

    async def move_coordinator(self, group_id: str, node_id: int) -> PartitionView:
        self._group(group_id)
        if not self._broker(node_id).up:
            raise conflict(f"broker {node_id} is down")
        self.calls.append(("move_coordinator", group_id, node_id))
        return PartitionView("__consumer_offsets", 7, node_id, 1, sorted(self.brokers_))

    async def expire_member(self, group_id: str, member_id: str) -> None:
        if member_id not in {m.member_id for m in self._group(group_id).members}:
            raise not_found(f"group {group_id!r} has no member {member_id!r}")
        self.calls.append(("expire", group_id, member_id))

    async def rebalance(self, group_id: str) -> None:
        self._group(group_id)
        self.calls.append(("rebalance", group_id))

    async def move_leader(self, topic: str, partition: int, node_id: int) -> PartitionView:
        old = self._partition(topic, partition)
        if not self._broker(node_id).up:
            raise conflict(f"broker {node_id} is down")
        new = PartitionView(topic, partition, node_id, old.leader_epoch + 1, old.replicas)
        self.partitions[(topic, partition)] = new
        return new

    async def make_leaderless(self, topic: str, partition: int) -> PartitionView:
        old = self._partition(topic, partition)
        new = PartitionView(topic, partition, -1, old.leader_epoch + 1, old.replicas)
        self.partitions[(topic, partition)] = new
        return new

    def set_coordinator_load_delay(self, ms: int) -> None:
        if ms < 0:
            raise bad_request("ms must be non-negative")
        self.load_delay_ms = ms

    def versions(self) -> list[VersionView]:
        return self.limits.views()

    def limit_version(self, api: str | int, max_version: int, min_version: int | None = None) -> VersionView:
        return self.limits.limit(api, max_version, min_version)

    def clear_versions(self) -> None:
        self.limits.clear()

    def clock(self) -> ClockView:
        return ClockView("manual" if self.manual else "system", self.clock_.time_ms())

    async def advance_clock(self, ms: int) -> ClockView:
        if not self.manual:
            raise ControlError(409, "the clock is the system clock: start with clock.mode=manual to advance it")
        self.clock_.set_time(self.clock_.time_ms() + ms)
        return self.clock()

    def requests(
        self, since: int = 0, api: str | int | None = None, group: str | None = None, limit: int = 100
    ) -> RequestsPage:
        return self.log.page(since, api, group, limit)

    def clear_requests(self) -> None:
        self.log.clear()

    def transitions(self, since: int = 0, group: str | None = None, limit: int = 200) -> TransitionsPage:
        return self.transition_log.page(since, group, limit)

    def share_settings(self) -> dict[str, Any]:
        return share_control.settings_view(self.share)

    def set_share_settings(self, changes: dict[str, Any]) -> dict[str, Any]:
        return share_control.apply_settings(self.share, changes)

    def share_partitions(self, group_id: str) -> list[dict[str, Any]]:
        return []

    def security(self) -> dict[str, Any]:
        return {"listeners": [], "acls": len(self.acl_list)}

    def acls(self) -> list[dict[str, object]]:
        return list(self.acl_list)

    def add_acl(self, spec: AclSpec) -> dict[str, object]:
        entry = dict(vars(spec))
        self.acl_list.append(entry)
        return entry

    def add_scram_user(self, spec: ScramUserSpec) -> dict[str, object]:
        self.scram_users.append(spec.user)
        return {"user": spec.user, "mechanism": spec.mechanism, "iterations": spec.iterations}

    def snapshot(self) -> dict[str, Any]:
        return {
            "clock": to_jsonable(self.clock()),
            "brokers": to_jsonable(self.brokers()),
            "groups": [to_jsonable(g) for g in self.groups.values()],
            "offsets": {"g": {"orders": {"0": {"offset": 42, "leader_epoch": 0, "metadata": ""}}}},
            "topics": [{"name": "orders", "partitions": [to_jsonable(p) for p in self.partitions.values()]}],
        }
