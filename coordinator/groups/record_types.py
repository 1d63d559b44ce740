"""The records of __consumer_offsets as objects, before any byte encoding.

They mirror Kafka's record schemas (OffsetCommitKey/Value, GroupMetadataKey/Value and their
tombstones; GroupCoordinatorRecordHelpers builds the same ones). records.py turns them into
Kafka's exact bytes and back; groups/replay.py applies them, live and at load. A record is a
frozen snapshot: it never aliases live group state.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import NamedTuple


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


class OffsetCommitRecord(NamedTuple):
    """One committed offset (OffsetCommitKey + OffsetCommitValue). leader_epoch -1 = unknown.
    topic_id is OffsetCommitValue's tagged TopicId (v4, KAFKA-19141): the id a v10 commit named
    the topic by, None when the commit gave none (then it is written as v3, see records.py).

    A NamedTuple, not a frozen dataclass like the others: a commit and a load build one per
    partition and the offset store holds them, and a tuple is one allocation built in C (a
    dataclass instance and its __dict__ are two), about half the cost to build and to free."""

    group_id: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None
    topic_id: uuid.UUID | None = None


_new_tuple = tuple.__new__


def offset_commit_record(
    group_id: str,
    topic: str,
    partition: int,
    offset: int,
    leader_epoch: int,
    metadata: str,
    commit_timestamp_ms: int,
    expire_timestamp_ms: int | None,
    topic_id: uuid.UUID | None = None,
) -> OffsetCommitRecord:
    """`OffsetCommitRecord(...)` for the hot paths (a commit, a load), without the generated
    __new__'s keyword handling."""
    return _new_tuple(
        OffsetCommitRecord,
        (
            group_id,
            topic,
            partition,
            offset,
            leader_epoch,
            metadata,
            commit_timestamp_ms,
            expire_timestamp_ms,
            topic_id,
        ),
    )


@dataclass(frozen=True, slots=True)
class OffsetTombstone:
    """Committed offset deleted: the OffsetCommitKey with a null value."""

    group_id: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class UnknownRecord:
    """A record this coordinator does not understand (e.g. KIP-848 or share-group types, or a
    value version from the future). Replay skips it, as Kafka's loader does."""

    key_type: int
    value_version: int | None = None


class RecordDecodeError(ValueError):
    """Bytes that claim a known type/version but do not parse (truncated, trailing bytes...)."""
