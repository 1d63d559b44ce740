"""Control: the in-process `.control` of the embedded server and the pytest fixture.

Sync methods over any ControlPlane, for test code on another thread than the server's trio loop:
every call goes through `call(fn, *args)`, which runs `fn` in the server's loop and awaits it
there when it is async (`thread_call(trio_token)` builds that for EmbeddedServer). Trio code in
the server's own loop uses the plane directly (`await plane.advance_clock(ms)`).

    control.fail("OffsetCommit", errors=["NOT_COORDINATOR"], count=1)
    control.delay("Heartbeat", ms=500)
    control.broker(1).down()
    control.clock.advance(30_000)
    control.requests(api="JoinGroup").requests
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import trio

from coordinator.control.errors import ControlError
from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import FaultView
from coordinator.control.plane_api import BrokerView, ClockView, ControlPlane, GroupView, PartitionView
from coordinator.control.security_control import AclSpec, ScramUserSpec
from coordinator.control.share_control import SETTINGS as SHARE_SETTINGS
from coordinator.control.tracking import RequestsPage
from coordinator.control.versions import VersionView

Call = Callable[..., Any]  # call(fn, *args) -> fn's result, run (and awaited) in the server's loop


def thread_call(token: trio.lowlevel.TrioToken) -> Call:
    """A `call` for code on another thread than the server's trio loop."""

    def call(fn: Callable[..., Any], *args: Any) -> Any:
        async def run() -> Any:
            result = fn(*args)
            return await result if inspect.isawaitable(result) else result

        return trio.from_thread.run(run, trio_token=token)

    return call


class Broker:
    def __init__(self, control: Control, node_id: int) -> None:
        self._control, self.node_id = control, node_id

    def down(self) -> BrokerView:
        return self._control._call(self._control.plane.broker_down, self.node_id)

    def up(self) -> BrokerView:
        return self._control._call(self._control.plane.broker_up, self.node_id)


class Clock:
    def __init__(self, control: Control) -> None:
        self._control = control

    def view(self) -> ClockView:
        return self._control._call(self._control.plane.clock)

    @property
    def now_ms(self) -> int:
        return self.view().now_ms

    def advance(self, ms: int) -> ClockView:
        """Move the manual clock; returns once every timer due by then has fired."""
        return self._control._call(self._control.plane.advance_clock, ms)


class Control:
    def __init__(self, plane: ControlPlane, call: Call) -> None:
        self.plane = plane
        self._call = call
        self.clock = Clock(self)

    # -- fault rules: keyword arguments are FaultSpec's matchers and lifetime (group=, count=, ...)
    def fail(
        self,
        api: str | int,
        errors: list[str | int] | str | int | None = None,
        *,
        error: str | int | None = None,
        **match: Any,
    ) -> int:
        """Answer matching requests with `errors` (FIFO, one per request) or `error` (every time)."""
        fifo = None if errors is None else errors if isinstance(errors, list) else [errors]
        return self.rule(FaultSpec(api=api, errors=fifo, error=error, **match))

    def delay(self, api: str | int, ms: int, **match: Any) -> int:
        return self.rule(FaultSpec(api=api, delay_ms=ms, **match))

    def drop(self, api: str | int, **match: Any) -> int:
        return self.rule(FaultSpec(api=api, drop_response=True, **match))

    def close(self, api: str | int, *, after: bool = False, **match: Any) -> int:
        return self.rule(FaultSpec(api=api, close="after" if after else "before", **match))

    def throttle(self, api: str | int, ms: int, **match: Any) -> int:
        return self.rule(FaultSpec(api=api, throttle_ms=ms, **match))

    def rule(self, spec: FaultSpec) -> int:
        return self._call(self.plane.add_fault, spec)

    def faults(self) -> list[FaultView]:
        return self._call(self.plane.faults)

    def unfault(self, fault_id: int) -> None:
        self._call(self.plane.remove_fault, fault_id)

    def clear_faults(self) -> int:
        return self._call(self.plane.clear_faults)

    # -- cluster
    def brokers(self) -> list[BrokerView]:
        return self._call(self.plane.brokers)

    def broker(self, node_id: int) -> Broker:
        return Broker(self, node_id)

    def group(self, group_id: str) -> GroupView:
        return self._call(self.plane.group, group_id)

    def move_coordinator(self, group_id: str, node_id: int) -> PartitionView:
        return self._call(self.plane.move_coordinator, group_id, node_id)

    def expire(self, group_id: str, member_id: str) -> None:
        self._call(self.plane.expire_member, group_id, member_id)

    def rebalance(self, group_id: str) -> None:
        self._call(self.plane.rebalance, group_id)

    # -- security
    def acls(self) -> list[dict[str, object]]:
        return self._call(self.plane.acls)

    def add_acl(self, resource_type: str, name: str, principal: str, operation: str, **more: str) -> dict[str, object]:
        """One ACL by Kafka's names: add_acl("GROUP", "g", "User:alice", "READ", permission="DENY")."""
        return self._call(self.plane.add_acl, AclSpec(resource_type, name, principal, operation, **more))

    def add_scram_user(self, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict[str, object]:
        return self._call(self.plane.add_scram_user, ScramUserSpec(user, password, mechanism))

    def move_leader(self, topic: str, partition: int, node_id: int) -> PartitionView:
        return self._call(self.plane.move_leader, topic, partition, node_id)

    def leaderless(self, topic: str, partition: int) -> PartitionView:
        return self._call(self.plane.make_leaderless, topic, partition)

    def load_delay(self, ms: int) -> None:
        self._call(self.plane.set_coordinator_load_delay, ms)

    def limit_version(self, api: str | int, max_version: int, min_version: int | None = None) -> VersionView:
        return self._call(self.plane.limit_version, api, max_version, min_version)

    def clear_versions(self) -> None:
        self._call(self.plane.clear_versions)

    # -- what happened
    def requests(
        self, since: int = 0, api: str | int | None = None, group: str | None = None, limit: int = 100
    ) -> RequestsPage:
        return self._call(self.plane.requests, since, api, group, limit)

    def snapshot(self) -> dict[str, Any]:
        return self._call(self.plane.snapshot)

    # -- share groups: settings by Kafka name, as rd_kafka_mock_sharegroup_set_* sets them
    def share_settings(self, **changes: Any) -> dict[str, Any]:
        """The share-group settings; keyword arguments change them first, dots spelt as
        underscores: share_settings(group_share_record_lock_duration_ms=5000)."""
        if changes:
            names = {name.replace(".", "_"): name for name in SHARE_SETTINGS}
            unknown = [k for k in changes if k not in names]
            if unknown:
                raise ControlError(400, f"unknown share setting(s) {unknown}; known: {sorted(names)}")
            return self._call(self.plane.set_share_settings, {names[k]: v for k, v in changes.items()})
        return self._call(self.plane.share_settings)

    def share_partitions(self, group_id: str) -> list[dict[str, Any]]:
        return self._call(self.plane.share_partitions, group_id)

    # -- client telemetry (KIP-714): what clients pushed, and what they are asked to push
    def telemetry(self, client: str | None = None, prefix: str = "") -> Any:
        """Every client that asked for a subscription (most recent first), or one client (by
        instance id or client id) with the latest value of each metric it pushed."""
        if client is None:
            return self._call(self.plane.telemetry_clients)
        return self._call(self.plane.telemetry_client, client, prefix)

    def telemetry_subscriptions(self) -> list[dict[str, Any]]:
        return self._call(self.plane.telemetry_subscriptions)

    def subscribe_telemetry(
        self,
        name: str,
        metrics: list[str] | str | None = None,
        interval_ms: int | None = None,
        match: list[str] | str | None = None,
    ) -> dict[str, Any]:
        """Set the CLIENT_METRICS subscription `name` (as AlterConfigs would: durable, validated)."""
        body = {"metrics": metrics, "interval_ms": interval_ms, "match": match}
        return self._call(self.plane.set_telemetry_subscription, name, {k: v for k, v in body.items() if v is not None})

    def unsubscribe_telemetry(self, name: str) -> None:
        self._call(self.plane.delete_telemetry_subscription, name)
