"""Requests and results of the group operations: plain dataclasses, no protocol classes.

Handlers build a `*Params` from the decoded request and turn the `*Result` into the response of
the version they speak. ErrorCode fields are Kafka error codes (`errors.Error`, an IntEnum).
Version-dependent rules the core applies itself take `request_version`; pure encoding
differences (nullable strings before v7, the v0-2 LeaveGroup layout) stay in handlers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from protocol.errors import ErrorCode

UNKNOWN_MEMBER_ID = ""  # Kafka JoinGroupRequest.UNKNOWN_MEMBER_ID
NO_GENERATION = -1


# -- JoinGroup (11) -------------------------------------------------------------------------


@dataclass(frozen=True)
class JoinGroupParams:
    group_id: str
    member_id: str
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    rebalance_timeout_ms: int = -1  # v0 has none: -1 means "use the session timeout"
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    reason: str | None = None
    request_version: int = 9


@dataclass(frozen=True)
class JoinGroupResult:
    error: ErrorCode
    member_id: str
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    # Only the leader gets the members: (member id, group instance id, metadata).
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


# -- SyncGroup (14) -------------------------------------------------------------------------


@dataclass(frozen=True)
class SyncGroupParams:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None  # v5+; None skips the check
    protocol_name: str | None = None  # v5+; None skips the check
    assignments: list[tuple[str, bytes]] = field(default_factory=list)
    request_version: int = 5


@dataclass(frozen=True)
class SyncGroupResult:
    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


# -- Heartbeat (12) -------------------------------------------------------------------------


class HeartbeatParams(NamedTuple):
    """A NamedTuple, not a frozen dataclass: as immutable, and built at half the cost (a frozen
    dataclass's __init__ sets each field through object.__setattr__), once per heartbeat."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


class HeartbeatResult(NamedTuple):
    error: ErrorCode


# -- LeaveGroup (13) ------------------------------------------------------------------------


@dataclass(frozen=True)
class LeavingMember:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class LeaveGroupParams:
    group_id: str
    members: list[LeavingMember]
    request_version: int = 5

    @classmethod
    def single(cls, group_id: str, member_id: str, request_version: int = 0) -> LeaveGroupParams:
        """The v0-2 shape: one member id."""
        return cls(group_id, [LeavingMember(member_id)], request_version)


@dataclass(frozen=True)
class LeftMember:
    member_id: str
    group_instance_id: str | None
    error: ErrorCode


@dataclass(frozen=True)
class LeaveGroupResult:
    error: ErrorCode
    members: list[LeftMember] = field(default_factory=list)

    def legacy_error(self) -> ErrorCode:
        """The single error a v0-2 response carries (Kafka LeaveGroupResponse: top-level error,
        else the first member's)."""
        if self.error != ErrorCode.NONE or not self.members:
            return self.error
        return self.members[0].error


# -- DescribeGroups (15), ListGroups (16), DeleteGroups (42) --------------------------------


@dataclass(frozen=True)
class DescribeGroupsParams:
    group_ids: list[str]
    request_version: int = 6


@dataclass(frozen=True)
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class DescribedGroup:
    group_id: str
    error: ErrorCode
    state: str
    protocol_type: str
    protocol_data: str
    members: list[DescribedMember] = field(default_factory=list)
    error_message: str | None = None  # v6+ (KIP-1043): why GROUP_ID_NOT_FOUND


@dataclass(frozen=True)
class ListGroupsParams:
    states_filter: list[str] = field(default_factory=list)  # v4+
    types_filter: list[str] = field(default_factory=list)  # v5+


@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"


@dataclass(frozen=True)
class DeleteGroupsParams:
    group_ids: list[str]


@dataclass(frozen=True)
class DeletedGroup:
    group_id: str
    error: ErrorCode
