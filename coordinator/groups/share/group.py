"""A KIP-932 share group (Kafka ShareGroup + ModernGroup), changed only by replay.

Hard state comes from records: group epoch and metadata hash (type 11), members (10 and 14),
target assignment and its epoch (13 and 12), and which share-partitions have state in the share
coordinator (15, Kafka's shareGroupStatePartitionMetadata entry, kept here on the group). Derived
and kept in step by the mutators: the subscribed topic counts (the simple assignor needs no
inverted target assignment, so none is kept).
State is derived as Kafka's ShareGroup derives it: Empty without members, else Stable (a missing
group is Dead). Soft state, not persisted and reset on load as in Kafka: the metadata refresh
deadline, and the time each share-partition entry was (re)written (Kafka's InitMapValue timestamp,
which decides when an initialization that never finished is retried), and `replayed` with the
answers a steady heartbeat reuses (SteadyAnswers, keyed on it).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from coordinator.groups.assignors.spec import SubscriptionType
from coordinator.groups.consumer.member import Assignment
from coordinator.groups.consumer.subscriptions import SubscriptionCount, compute, dec_name, inc_name, subscription_type
from coordinator.groups.share.member import ShareGroupMember

GROUP_TYPE = "share"
PROTOCOL_TYPE = "share"  # ShareGroup.PROTOCOL_TYPE
ASSIGNOR_NAME = "simple"  # the only share assignor (group.share.assignors), what ShareGroupDescribe names


class ShareGroupState(enum.Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class InitValue:
    """Kafka InitMapValue: a topic's name, share-partitions, and when the entry was written."""

    name: str
    partitions: frozenset[int]
    timestamp: int


@dataclass(frozen=True, slots=True)
class StatePartitions:
    """Kafka ShareGroupStatePartitionMetadataInfo: share-partitions being initialized in the share
    coordinator, initialized, and topics whose state is being deleted."""

    initializing: Mapping[uuid.UUID, InitValue] = field(default_factory=dict)
    initialized: Mapping[uuid.UUID, InitValue] = field(default_factory=dict)
    deleting: frozenset[uuid.UUID] = frozenset()


NO_STATE_PARTITIONS = StatePartitions()


@dataclass(slots=True)
class SteadyAnswers:
    """What a heartbeat derived from the group and found settled, with what it was derived from:
    the group's `replayed` count (every record applied to the group bumps it, so members,
    subscriptions, target assignment and share-partition state are all covered) and, where topics
    matter, the topics image version. An entry whose key differs is stale and never read
    (steady.py owns the reads and writes)."""

    pending_at: int = -1  # replayed count at which `pending` was computed
    pending: bool = False  # Kafka initializedAssignmentPending
    no_deleted_at: tuple[int, int] = (-1, -1)  # (replayed, topics version): no deleted topic held
    no_init_at: tuple[int, int] = (-1, -1)  # (replayed, topics version): nothing to initialize ...
    no_init_until_ms: int = 0  # ... before this time (an initializing entry's retry falls due)


class ShareGroup:
    group_type = GROUP_TYPE
    protocol_type = PROTOCOL_TYPE

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.metadata_hash = 0
        self.members: dict[str, ShareGroupMember] = {}
        self.target_assignment: dict[str, Assignment] = {}
        # None until a ShareGroupStatePartitionMetadata record is replayed (Kafka: no map entry).
        self.state_partitions: StatePartitions | None = None
        # Derived indexes.
        self.subscribed_topic_names: dict[str, SubscriptionCount] = {}
        # Soft state (ModernGroup.metadataRefreshDeadline): (deadline ms, group epoch).
        self.metadata_refresh_deadline: tuple[int, int] = (0, 0)
        # Soft state: how many records replay applied to the group, and the answers keyed on it.
        self.replayed = 0
        self.steady = SteadyAnswers()

    # -- derived views --------------------------------------------------------------------

    @property
    def state(self) -> ShareGroupState:
        """Kafka ShareGroup.maybeUpdateGroupState."""
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    @property
    def subscription_type(self) -> SubscriptionType:
        return subscription_type({}, self.subscribed_topic_names, len(self.members))

    def is_empty(self) -> bool:
        return not self.members

    def num_members(self) -> int:
        return len(self.members)

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscribed_topic_names

    def partitions(self) -> StatePartitions:
        return self.state_partitions or NO_STATE_PARTITIONS

    def compute_subscribed_topic_names(
        self, old: ShareGroupMember | None, new: ShareGroupMember | None
    ) -> dict[str, SubscriptionCount]:
        """Kafka ModernGroup.computeSubscribedTopicNames: the counts once `old` becomes `new`."""
        counts = dict(self.subscribed_topic_names)
        _update_name_counts(counts, old, new)
        return counts

    # -- soft state -----------------------------------------------------------------------

    def set_metadata_refresh_deadline(self, deadline_ms: int, group_epoch: int) -> None:
        self.metadata_refresh_deadline = (deadline_ms, group_epoch)

    def request_metadata_refresh(self) -> None:
        self.metadata_refresh_deadline = (0, 0)

    def has_metadata_expired(self, now_ms: int) -> bool:
        deadline_ms, epoch = self.metadata_refresh_deadline
        return now_ms >= deadline_ms or self.group_epoch < epoch

    # -- mutators: replay only ------------------------------------------------------------

    def update_member(self, new: ShareGroupMember) -> None:
        old = self.members.get(new.member_id)
        self.members[new.member_id] = new
        _update_name_counts(self.subscribed_topic_names, old, new)

    def remove_member(self, member_id: str) -> None:
        old = self.members.pop(member_id)
        _update_name_counts(self.subscribed_topic_names, old, None)

    def update_target_assignment(self, member_id: str, new: Assignment) -> None:
        self.target_assignment[member_id] = new

    def remove_target_assignment(self, member_id: str) -> None:
        self.target_assignment.pop(member_id, None)

    # -- comparison (live state == reloaded state) ----------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShareGroup):
            return NotImplemented
        return _comparable(self) == _comparable(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ShareGroup({self.group_id!r}, epoch={self.group_epoch}, assignment_epoch={self.assignment_epoch}, "
            f"state={self.state}, members={list(self.members)})"
        )


def _comparable(g: ShareGroup) -> tuple[object, ...]:
    """Hard and derived state; the soft timestamps of the share-partition entries are left out."""
    parts = g.state_partitions
    sp = None
    if parts is not None:
        sp = (
            {t: (v.name, v.partitions) for t, v in parts.initializing.items()},
            {t: (v.name, v.partitions) for t, v in parts.initialized.items()},
            parts.deleting,
        )
    return (
        g.group_id,
        g.group_epoch,
        g.assignment_epoch,
        g.metadata_hash,
        g.members,
        g.target_assignment,
        sp,
        g.subscribed_topic_names,
    )


def _update_name_counts(
    counts: dict[str, SubscriptionCount], old: ShareGroupMember | None, new: ShareGroupMember | None
) -> None:
    if old is not None:
        for topic in old.subscribed_topic_names:
            compute(counts, topic, dec_name)
    if new is not None:
        for topic in new.subscribed_topic_names:
            compute(counts, topic, inc_name)


def topic_names(groups: Iterable[object]) -> set[str]:
    """Every topic some share group of `groups` subscribes to."""
    return {name for g in groups if isinstance(g, ShareGroup) for name in g.subscribed_topic_names}
