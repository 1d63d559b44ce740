"""The KIP-848 consumer-group records of __consumer_offsets, as frozen dataclasses.

One class per record Kafka 4.2 writes for consumer groups (group-coordinator
common/message/ConsumerGroup*.json, key types 3-8 and 16), and one tombstone class per key (the
same key, a null value). Records are plain values: `codec.py` turns them into Kafka's exact bytes,
`record_json.py` into Kafka's dump JSON, `replay.py` applies them to the groups. Lists keep the
order they were built or decoded in, so a decoded record re-encodes to the same bytes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import ClassVar

# Kafka CoordinatorRecordType ids (the int16 at the start of every key).
CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
CONSUMER_GROUP_REGULAR_EXPRESSION = 16
CONSUMER_KEY_TYPES = frozenset({3, 4, 5, 6, 7, 8, 16})


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    """One topic's partitions (TopicPartitions / TopicPartition in the value schemas).
    `assignment_epochs` is ConsumerGroupCurrentMemberAssignmentValue's tagged field 0 (KIP-1251,
    Kafka 4.3): the epoch each partition was assigned at, aligned with `partitions`; None (the
    default, not written) in every other record and in assignments written before 4.3."""

    topic_id: uuid.UUID
    partitions: tuple[int, ...]
    assignment_epochs: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class PartitionRacks:
    partition: int
    racks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopicMetadataEntry:
    """ConsumerGroupPartitionMetadataValue.TopicMetadata (only read since Kafka 4.1, KIP-1101)."""

    topic_id: uuid.UUID
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionRacks, ...] = ()  # deprecated after Kafka 4.0


@dataclass(frozen=True, slots=True)
class ClassicProtocol:
    name: str
    metadata: bytes


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """Tagged field 0 of ConsumerGroupMemberMetadataValue: set for a member of a consumer group
    that speaks the classic protocol (online migration, KIP-848); None for consumer-protocol
    members."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...]


# -- key type 3 ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataRecord:
    """The group epoch, and the hash of the subscribed topics' metadata (tag 0, KIP-1101)."""

    key_type: ClassVar[int] = CONSUMER_GROUP_METADATA
    group_id: str
    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_METADATA
    group_id: str


# -- key type 4 ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadataRecord:
    """Subscription metadata written before Kafka 4.1; now only read (so that the next epoch
    bump deletes it, GroupMetadataManager.updateSubscriptionMetadata)."""

    key_type: ClassVar[int] = CONSUMER_GROUP_PARTITION_METADATA
    group_id: str
    topics: tuple[TopicMetadataEntry, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadataTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_PARTITION_METADATA
    group_id: str


# -- key type 5 ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataRecord:
    """A member's subscription and client details (GroupCoordinatorRecordHelpers
    .newConsumerGroupMemberSubscriptionRecord sorts the topic names)."""

    key_type: ClassVar[int] = CONSUMER_GROUP_MEMBER_METADATA
    group_id: str
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_member_metadata: ClassicMemberMetadata | None = None


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_MEMBER_METADATA
    group_id: str
    member_id: str


# -- key type 6 ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataRecord:
    key_type: ClassVar[int] = CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA
    group_id: str
    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA
    group_id: str


# -- key type 7 ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberRecord:
    key_type: ClassVar[int] = CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER
    group_id: str
    member_id: str
    topic_partitions: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER
    group_id: str
    member_id: str


# -- key type 8 ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentRecord:
    """A member's epoch, reconciliation state (MemberState byte) and owned partitions, each
    with the epoch it was assigned at (KIP-1251)."""

    key_type: ClassVar[int] = CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT
    group_id: str
    member_id: str
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...]
    partitions_pending_revocation: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT
    group_id: str
    member_id: str


# -- key type 16 -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupRegularExpressionRecord:
    """A resolved subscription regex: the matching topics (sorted), the topics-view version and
    the time it was resolved at (Kafka 4.0+, KIP-848 regex subscriptions)."""

    key_type: ClassVar[int] = CONSUMER_GROUP_REGULAR_EXPRESSION
    group_id: str
    regular_expression: str
    topics: tuple[str, ...]
    version: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupRegularExpressionTombstone:
    key_type: ClassVar[int] = CONSUMER_GROUP_REGULAR_EXPRESSION
    group_id: str
    regular_expression: str


ConsumerRecord = (
    ConsumerGroupMetadataRecord
    | ConsumerGroupMetadataTombstone
    | ConsumerGroupPartitionMetadataRecord
    | ConsumerGroupPartitionMetadataTombstone
    | ConsumerGroupMemberMetadataRecord
    | ConsumerGroupMemberMetadataTombstone
    | ConsumerGroupTargetAssignmentMetadataRecord
    | ConsumerGroupTargetAssignmentMetadataTombstone
    | ConsumerGroupTargetAssignmentMemberRecord
    | ConsumerGroupTargetAssignmentMemberTombstone
    | ConsumerGroupCurrentMemberAssignmentRecord
    | ConsumerGroupCurrentMemberAssignmentTombstone
    | ConsumerGroupRegularExpressionRecord
    | ConsumerGroupRegularExpressionTombstone
)

TOMBSTONES: tuple[type, ...] = (
    ConsumerGroupMetadataTombstone,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupMemberMetadataTombstone,
    ConsumerGroupTargetAssignmentMetadataTombstone,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupCurrentMemberAssignmentTombstone,
    ConsumerGroupRegularExpressionTombstone,
)
CONSUMER_RECORD_TYPES: tuple[type, ...] = TOMBSTONES + (
    ConsumerGroupMetadataRecord,
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupMemberMetadataRecord,
    ConsumerGroupTargetAssignmentMetadataRecord,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupCurrentMemberAssignmentRecord,
    ConsumerGroupRegularExpressionRecord,
)


def is_consumer_record(obj: object) -> bool:
    return isinstance(obj, CONSUMER_RECORD_TYPES)
