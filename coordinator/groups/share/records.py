"""The share-group records of __consumer_offsets (KIP-932), as frozen dataclasses.

One class per record Kafka 4.2 writes for share groups (group-coordinator
common/message/ShareGroup*.json, key types 10-15) and one tombstone class per key (the same key,
a null value). Kafka 4.1 dropped the early-access ShareGroupPartitionMetadata (type 9): it is
skipped as an unknown type, as Kafka's loader skips it. `codec.py` turns these into Kafka's
exact bytes, `record_json.py` into Kafka's dump JSON, `replay.py` applies them to the groups.
Lists keep their order, so a decoded record re-encodes to the same bytes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import ClassVar

from coordinator.groups.consumer.records import TopicPartitions as TopicPartitions  # the same struct

# Kafka CoordinatorRecordType ids (the int16 at the start of every key).
SHARE_GROUP_MEMBER_METADATA = 10
SHARE_GROUP_METADATA = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
SHARE_GROUP_STATE_PARTITION_METADATA = 15
SHARE_KEY_TYPES = frozenset({10, 11, 12, 13, 14, 15})
MEMBER_KEY_TYPES = frozenset({10, 13, 14})  # keys with a member id after the group id


@dataclass(frozen=True, slots=True)
class TopicPartitionsInfo:
    """ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo."""

    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """ShareGroupStatePartitionMetadataValue.TopicInfo (a topic whose state is being deleted)."""

    topic_id: uuid.UUID
    topic_name: str


# -- key type 10 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareGroupMemberMetadataRecord:
    """A member's client details and subscription (topic names sorted, as
    GroupCoordinatorRecordHelpers.newShareGroupMemberSubscriptionRecord writes them)."""

    key_type: ClassVar[int] = SHARE_GROUP_MEMBER_METADATA
    group_id: str
    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupMemberMetadataTombstone:
    key_type: ClassVar[int] = SHARE_GROUP_MEMBER_METADATA
    group_id: str
    member_id: str


# -- key type 11 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareGroupMetadataRecord:
    """The group epoch and the hash of the subscribed topics (KIP-1101; a plain field here)."""

    key_type: ClassVar[int] = SHARE_GROUP_METADATA
    group_id: str
    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True, slots=True)
class ShareGroupMetadataTombstone:
    key_type: ClassVar[int] = SHARE_GROUP_METADATA
    group_id: str


# -- key type 12 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMetadataRecord:
    key_type: ClassVar[int] = SHARE_GROUP_TARGET_ASSIGNMENT_METADATA
    group_id: str
    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMetadataTombstone:
    key_type: ClassVar[int] = SHARE_GROUP_TARGET_ASSIGNMENT_METADATA
    group_id: str


# -- key type 13 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMemberRecord:
    key_type: ClassVar[int] = SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER
    group_id: str
    member_id: str
    topic_partitions: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMemberTombstone:
    key_type: ClassVar[int] = SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER
    group_id: str
    member_id: str


# -- key type 14 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareGroupCurrentMemberAssignmentRecord:
    """A member's epoch, previous epoch, state (MemberState byte) and assigned partitions."""

    key_type: ClassVar[int] = SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT
    group_id: str
    member_id: str
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupCurrentMemberAssignmentTombstone:
    key_type: ClassVar[int] = SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT
    group_id: str
    member_id: str


# -- key type 15 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareGroupStatePartitionMetadataRecord:
    """Which share-partitions of the group have state in the share coordinator: being
    initialized, initialized, or (whole topics) being deleted (Kafka 4.1+)."""

    key_type: ClassVar[int] = SHARE_GROUP_STATE_PARTITION_METADATA
    group_id: str
    initializing_topics: tuple[TopicPartitionsInfo, ...]
    initialized_topics: tuple[TopicPartitionsInfo, ...]
    deleting_topics: tuple[TopicInfo, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupStatePartitionMetadataTombstone:
    key_type: ClassVar[int] = SHARE_GROUP_STATE_PARTITION_METADATA
    group_id: str


ShareRecord = (
    ShareGroupMemberMetadataRecord
    | ShareGroupMemberMetadataTombstone
    | ShareGroupMetadataRecord
    | ShareGroupMetadataTombstone
    | ShareGroupTargetAssignmentMetadataRecord
    | ShareGroupTargetAssignmentMetadataTombstone
    | ShareGroupTargetAssignmentMemberRecord
    | ShareGroupTargetAssignmentMemberTombstone
    | ShareGroupCurrentMemberAssignmentRecord
    | ShareGroupCurrentMemberAssignmentTombstone
    | ShareGroupStatePartitionMetadataRecord
    | ShareGroupStatePartitionMetadataTombstone
)

TOMBSTONES: tuple[type, ...] = (
    ShareGroupMemberMetadataTombstone,
    ShareGroupMetadataTombstone,
    ShareGroupTargetAssignmentMetadataTombstone,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupCurrentMemberAssignmentTombstone,
    ShareGroupStatePartitionMetadataTombstone,
)
SHARE_RECORD_TYPES: tuple[type, ...] = TOMBSTONES + (
    ShareGroupMemberMetadataRecord,
    ShareGroupMetadataRecord,
    ShareGroupTargetAssignmentMetadataRecord,
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupCurrentMemberAssignmentRecord,
    ShareGroupStatePartitionMetadataRecord,
)


def is_share_record(obj: object) -> bool:
    return isinstance(obj, SHARE_RECORD_TYPES)
