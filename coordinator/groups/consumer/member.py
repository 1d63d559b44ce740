"""A consumer-group member (Kafka ConsumerGroupMember / ModernGroupMember) and its state.

Members are immutable values: every change builds a new member with `dataclasses.replace`, and
only replay puts one into a group. Assignments map a topic id to a frozenset of partitions and
never hold empty sets; `assignment_epochs` (KIP-1251) gives the epoch each owned partition,
assigned or pending revocation, was assigned at (a partition missing there counts as assigned at
the member's epoch, as Kafka reads a record without epochs). `classic_member_metadata` is set for
a member that speaks the classic protocol inside a consumer group (the online-migration extension
point; None for KIP-848 members). Defaults are Kafka's ConsumerGroupMember.Builder defaults.
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
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
AssignmentEpochs = Mapping[TopicId, Mapping[int, int]]  # topic id -> partition -> assignment epoch

log = logging.getLogger(__name__)

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


def epochs_from_topic_partitions(
    items: Iterable[TopicPartitions], default_epoch: int, group_id: str = ""
) -> dict[TopicId, dict[int, int]]:
    """Kafka 4.3 Utils.assignmentFromTopicPartitions: each partition's recorded assignment epoch,
    or `default_epoch` (the record's member epoch, never below 0: a static member that left is at
    -2) when the record has none for the topic or a list of the wrong length (logged)."""
    default = max(default_epoch, 0)
    out: dict[TopicId, dict[int, int]] = {}
    for tp in items:
        epochs = tp.assignment_epochs
        if epochs is not None and len(epochs) != len(tp.partitions):
            log.error(
                "[GroupId %s] Size of assignment epochs %d is not equal to partitions %d for topic %s",
                group_id,
                len(epochs),
                len(tp.partitions),
                tp.topic_id,
            )
            epochs = None
        given = out.setdefault(tp.topic_id, {})
        for i, partition in enumerate(tp.partitions):
            given[partition] = default if epochs is None else epochs[i]
    return out


def to_topic_partitions_with_epochs(
    assignment: Assignment, epoch_of: Callable[[TopicId, int], int]
) -> tuple[TopicPartitions, ...]:
    """Record form with AssignmentEpochs aligned with the partitions (Kafka 4.3 always sets them
    in ConsumerGroupCurrentMemberAssignmentValue)."""
    out = []
    for topic_id in sorted(assignment, key=lambda u: u.bytes):
        partitions = tuple(sorted(assignment[topic_id]))
        out.append(TopicPartitions(topic_id, partitions, tuple(epoch_of(topic_id, p) for p in partitions)))
    return tuple(out)


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
    assignment_epochs: AssignmentEpochs = field(default_factory=dict)

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

    def assignment_epoch(self, topic_id: TopicId, partition: int) -> int | None:
        """KIP-1251: the epoch the member was assigned `partition` at, None when it holds it
        neither assigned nor pending revocation."""
        if partition not in self.assigned_partitions.get(
            topic_id, frozenset()
        ) and partition not in self.partitions_pending_revocation.get(topic_id, frozenset()):
            return None
        epoch = self.assignment_epochs.get(topic_id, {}).get(partition)
        return max(self.member_epoch, 0) if epoch is None else epoch

    def _epoch_of(self, topic_id: TopicId, partition: int) -> int:
        epoch = self.assignment_epoch(topic_id, partition)
        assert epoch is not None
        return epoch

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
            assigned_partitions=to_topic_partitions_with_epochs(self.assigned_partitions, self._epoch_of),
            partitions_pending_revocation=to_topic_partitions_with_epochs(
                self.partitions_pending_revocation, self._epoch_of
            ),
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
        """Kafka Builder.updateWith(ConsumerGroupCurrentMemberAssignmentValue), with each
        partition's assignment epoch from the record (its member epoch when it has none)."""
        epochs = epochs_from_topic_partitions(rec.assigned_partitions, rec.member_epoch, rec.group_id)
        for topic_id, given in epochs_from_topic_partitions(
            rec.partitions_pending_revocation, rec.member_epoch, rec.group_id
        ).items():
            epochs.setdefault(topic_id, {}).update(given)
        return replace(
            self,
            member_epoch=rec.member_epoch,
            previous_member_epoch=rec.previous_member_epoch,
            state=MemberState.from_value(rec.state),
            assigned_partitions=from_topic_partitions(rec.assigned_partitions),
            partitions_pending_revocation=from_topic_partitions(rec.partitions_pending_revocation),
            assignment_epochs=epochs,
        )
