"""Record objects every group change produces, before any byte encoding.

These mirror Kafka's GroupMetadataKey/Value (GroupCoordinatorRecordHelpers.newGroupMetadataRecord,
newEmptyGroupMetadataRecord, newGroupMetadataTombstoneRecord). `records.py` (not here) turns them
into __consumer_offsets bytes; the loader turns bytes back into these and `replay.py` applies them.
A record is a frozen snapshot: it never aliases live group state.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemberSnapshot:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes  # the member's metadata for the group's selected protocol
    assignment: bytes


@dataclass(frozen=True)
class GroupMetadataRecord:
    """The whole classic group, written when a generation completes, the group becomes Empty,
    a new group is created, or a static member is replaced without a rebalance."""

    group_id: str
    protocol_type: str  # "" when the group never had a member
    generation_id: int
    protocol_name: str | None
    leader: str | None
    current_state_timestamp_ms: int | None
    members: tuple[MemberSnapshot, ...]


@dataclass(frozen=True)
class GroupTombstone:
    """Group deleted: the GroupMetadataKey with a null value."""

    group_id: str


GroupRecord = GroupMetadataRecord | GroupTombstone
