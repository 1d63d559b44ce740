"""ControlPlane: the one interface behind the HTTP API (http_api.py) and the in-process `.control`.

Reads are plain methods; actions that must touch the running server (broker down/up, moves,
member expiry, rebalance, clock advance) are async and run in the server's trio loop. Every
refusal is a ControlError(status, one-line message): 400 bad input, 404 unknown broker, group,
member, topic, partition or rule, 409 impossible now (a move to a down broker, advancing a
system clock). Results are frozen dataclasses; `to_jsonable` turns any of them into JSON values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from coordinator.control.errors import ControlError
from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import FaultView
from coordinator.control.security_control import AclSpec, ScramUserSpec
from coordinator.control.tracking import RequestsPage
from coordinator.control.transitions import TransitionsPage
from coordinator.control.versions import VersionView
from protocol.consumer_protocol import decode_assignment, decode_subscription
from protocol.errors import DecodeError

__all__ = [
    "BrokerView",
    "ClockView",
    "ControlError",
    "ControlPlane",
    "FaultSpec",
    "FaultView",
    "GroupView",
    "MemberView",
    "PartitionView",
    "RequestsPage",
    "TimerWait",
    "TopicPartitions",
    "VersionView",
    "consumer_assignment",
    "consumer_subscription",
    "to_jsonable",
]


@dataclass(frozen=True, slots=True)
class BrokerView:
    node_id: int
    host: str
    port: int
    up: bool


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    topic: str
    partitions: list[int]


@dataclass(frozen=True, slots=True)
class MemberView:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    subscription: list[str] | None  # decoded from the consumer protocol; None if not decodable
    assignment: list[TopicPartitions] | None  # idem
    member_epoch: int | None = None  # consumer (KIP-848) and share (KIP-932) groups only


@dataclass(frozen=True, slots=True)
class TimerWait:
    """A server timer a group or member waits on while the clock is manual (control/waits.py)."""

    timer: str  # what it is: "initial rebalance delay", "sync timeout (...)", ...
    member: str | None  # the member it is about, None for the whole group
    deadline_ms: int
    advance_ms: int  # how far the clock must go for it to fire


@dataclass(frozen=True, slots=True)
class GroupView:
    group_id: str
    type: Literal["classic", "consumer", "share"]
    state: str  # Kafka's names: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead, ...
    generation: int  # the generation (classic) or group epoch (consumer, share)
    coordinator: int  # node id of the broker coordinating it
    protocol_type: str | None
    protocol: str | None  # the selected protocol (assignor) name
    leader: str | None
    members: list[MemberView]
    waiting: list[TimerWait] = field(default_factory=list)  # clock.mode=manual only


@dataclass(frozen=True, slots=True)
class PartitionView:
    topic: str
    partition: int
    leader: int  # -1: no leader
    leader_epoch: int
    replicas: list[int]


@dataclass(frozen=True, slots=True)
class ClockView:
    mode: Literal["system", "manual"]
    now_ms: int


class ControlPlane(Protocol):
    # -- brokers
    def brokers(self) -> list[BrokerView]: ...
    async def broker_down(self, node_id: int) -> BrokerView: ...
    async def broker_up(self, node_id: int) -> BrokerView: ...

    # -- fault rules
    def add_fault(self, spec: FaultSpec) -> int: ...
    def faults(self) -> list[FaultView]: ...
    def remove_fault(self, fault_id: int) -> None: ...
    def clear_faults(self) -> int: ...

    # -- groups
    def group(self, group_id: str) -> GroupView: ...
    async def move_coordinator(self, group_id: str, node_id: int) -> PartitionView: ...
    async def expire_member(self, group_id: str, member_id: str) -> None: ...
    async def rebalance(self, group_id: str) -> None: ...

    # -- partitions
    async def move_leader(self, topic: str, partition: int, node_id: int) -> PartitionView: ...
    async def make_leaderless(self, topic: str, partition: int) -> PartitionView: ...
    def set_coordinator_load_delay(self, ms: int) -> None: ...

    # -- advertised versions
    def versions(self) -> list[VersionView]: ...
    def limit_version(self, api: str | int, max_version: int, min_version: int | None = None) -> VersionView: ...
    def clear_versions(self) -> None: ...

    # -- clock
    def clock(self) -> ClockView: ...
    async def advance_clock(self, ms: int) -> ClockView: ...

    # -- request log and state
    def requests(
        self, since: int = 0, api: str | int | None = None, group: str | None = None, limit: int = 100
    ) -> RequestsPage: ...
    def clear_requests(self) -> None: ...
    def transitions(self, since: int = 0, group: str | None = None, limit: int = 200) -> TransitionsPage: ...
    def snapshot(self) -> dict[str, Any]: ...

    # -- share groups (share_control.py)
    def share_settings(self) -> dict[str, Any]: ...
    def set_share_settings(self, changes: dict[str, Any]) -> dict[str, Any]: ...
    def share_partitions(self, group_id: str) -> list[dict[str, Any]]: ...
    # -- security (coordinator/control/security_control.py)
    def security(self) -> dict[str, Any]: ...
    def acls(self) -> list[dict[str, object]]: ...
    def add_acl(self, spec: AclSpec) -> dict[str, object]: ...
    def add_scram_user(self, spec: ScramUserSpec) -> dict[str, object]: ...

    # -- client telemetry, KIP-714 (telemetry_control.py)
    def telemetry_clients(self) -> list[dict[str, Any]]: ...
    def telemetry_client(self, key: str, prefix: str = "") -> dict[str, Any]: ...
    def telemetry_subscriptions(self) -> list[dict[str, Any]]: ...
    def set_telemetry_subscription(self, name: str, body: dict[str, Any]) -> dict[str, Any]: ...
    def delete_telemetry_subscription(self, name: str) -> None: ...


def consumer_subscription(metadata: bytes) -> list[str] | None:
    """The topics of a consumer-protocol subscription, None if it is not one."""
    try:
        return list(decode_subscription(metadata).topics) if metadata else None
    except DecodeError:
        return None


def consumer_assignment(assignment: bytes) -> list[TopicPartitions] | None:
    """A consumer-protocol assignment as topic -> partitions, None if it is not one."""
    if not assignment:
        return []
    try:
        decoded = decode_assignment(assignment)
    except DecodeError:
        return None
    return [TopicPartitions(tp.topic, list(tp.partitions)) for tp in decoded.assigned_partitions]


def to_jsonable(value: Any) -> Any:
    """Results (dataclasses, lists of them, dicts) as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value
