"""A consumer-group member (Kafka ConsumerGroupMember / ModernGroupMember) and its state.

Members are immutable values: every change builds a new member with `dataclasses.replace`, and
only replay puts one into a group. Assignments map a topic id to a frozenset of partitions and
never hold empty sets. `classic_member_metadata` is set for a member that speaks the classic
protocol inside a consumer group (the online-migration extension point; None for KIP-848
members). Defaults are Kafka's ConsumerGroupMember.Builder defaults.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from coordinator.groups.consumer.records import (
    ClassicMemberMetadata,
    ConsumerGroupCurrentMemberAssignmentRecord,
    ConsumerGroupMemberMetadataRecord,
    TopicPartitions,
)

TopicId = uuid.UUID
Assignment = Mapping[TopicId, frozenset[int]]
EMPTY_ASSIGNMENT: Assignment = {}

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class MemberState(enum.IntEnum):
    """Kafka MemberState (the byte persisted in ConsumerGroupCurrentMemberAssignmentValue)."""

    STABLE = 0  # reconciled to the target assignment
    UNREVOKED_PARTITIONS = 1  # must revoke partitions before it can move on
    UNRELEASED_PARTITIONS = 2  # waits for partitions that their previous owner still holds
    UNKNOWN = 127  # a state from a newer version

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


def normalize(assignment: Mapping[TopicId, Iterable[int]]) -> dict[TopicId, frozenset[int]]:
    """A canonical assignment: frozensets, no empty topics."""
    out: dict[TopicId, frozenset[int]] = {}
    for topic_id, parts in assignment.items():
        s = parts if isinstance(parts, frozenset) else frozenset(parts)
        if s:
            out[topic_id] = s
    return out


def to_topic_partitions(assignment: Assignment) -> tuple[TopicPartitions, ...]:
    """Record form. Kafka iterates a HashMap here; we sort topics by id and partitions
    ascending so that equal assignments always give equal bytes."""
    return tuple(TopicPartitions(t, tuple(sorted(assignment[t]))) for t in sorted(assignment, key=lambda u: u.bytes))


def from_topic_partitions(items: Iterable[TopicPartitions]) -> dict[TopicId, frozenset[int]]:
    out: dict[TopicId, set[int]] = {}
    for tp in items:
        out.setdefault(tp.topic_id, set()).update(tp.partitions)
    return normalize(out)


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    # Kafka's builder starts from "" (not null); a record may carry null.
    subscribed_topic_regex: str | None = ""
    server_assignor: str | None = None
    assigned_partitions: Assignment = field(default_factory=dict)
    partitions_pending_revocation: Assignment = field(default_factory=dict)
    classic_member_metadata: ClassicMemberMetadata | None = None

    @property
    def use_classic_protocol(self) -> bool:
        return self.classic_member_metadata is not None

    @property
    def regex(self) -> str | None:
        """The subscribed regex, or None when empty (Kafka subscribedTopicRegexOrNull)."""
        return self.subscribed_topic_regex or None

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """Kafka ModernGroupMember.isReconciledTo."""
        return self.state == MemberState.STABLE and self.member_epoch == target_assignment_epoch

    def with_epoch(self, epoch: int) -> ConsumerGroupMember:
        """Kafka Builder.updateMemberEpoch: the current epoch becomes the previous one."""
        return replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch)

    # -- records (GroupCoordinatorRecordHelpers) -------------------------------------------

    def metadata_record(self, group_id: str) -> ConsumerGroupMemberMetadataRecord:
        return ConsumerGroupMemberMetadataRecord(
            group_id=group_id,
            member_id=self.member_id,
            instance_id=self.instance_id,
            rack_id=self.rack_id,
            client_id=self.client_id,
            client_host=self.client_host,
            subscribed_topic_names=tuple(sorted(self.subscribed_topic_names)),
            subscribed_topic_regex=self.subscribed_topic_regex,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            server_assignor=self.server_assignor,
            classic_member_metadata=self.classic_member_metadata,
        )

    def assignment_record(self, group_id: str) -> ConsumerGroupCurrentMemberAssignmentRecord:
        return ConsumerGroupCurrentMemberAssignmentRecord(
            group_id=group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            previous_member_epoch=self.previous_member_epoch,
            state=int(self.state),
            assigned_partitions=to_topic_partitions(self.assigned_partitions),
            partitions_pending_revocation=to_topic_partitions(self.partitions_pending_revocation),
        )

    def updated_with_metadata(self, rec: ConsumerGroupMemberMetadataRecord) -> ConsumerGroupMember:
        """Kafka Builder.updateWith(ConsumerGroupMemberMetadataValue)."""
        return replace(
            self,
            instance_id=rec.instance_id,
            rack_id=rec.rack_id,
            client_id=rec.client_id,
            client_host=rec.client_host,
            subscribed_topic_names=frozenset(rec.subscribed_topic_names),
            subscribed_topic_regex=rec.subscribed_topic_regex,
            rebalance_timeout_ms=rec.rebalance_timeout_ms,
            server_assignor=rec.server_assignor,
            classic_member_metadata=rec.classic_member_metadata,
        )

    def updated_with_assignment(self, rec: ConsumerGroupCurrentMemberAssignmentRecord) -> ConsumerGroupMember:
        """Kafka Builder.updateWith(ConsumerGroupCurrentMemberAssignmentValue)."""
        return replace(
            self,
            member_epoch=rec.member_epoch,
            previous_member_epoch=rec.previous_member_epoch,
            state=MemberState.from_value(rec.state),
            assigned_partitions=from_topic_partitions(rec.assigned_partitions),
            partitions_pending_revocation=from_topic_partitions(rec.partitions_pending_revocation),
        )
