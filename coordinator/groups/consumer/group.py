"""A KIP-848 consumer group (Kafka ConsumerGroup + ModernGroup), changed only by replay.

Hard state comes from records: group epoch and metadata hash (type 3), members (5 and 8), target
assignment and its epoch (7 and 6), resolved regexes (16), whether an old subscription-metadata
record (4) still exists. Everything else is derived and kept in step by the mutators replay
calls: static members, server-assignor counts, subscribed topic counts (by name and by regex),
regex subscriber counts, the inverted target assignment and the partition epochs (a partition is
owned at its owner's epoch until released; adding an owned partition again is an error). State
and subscription type are derived on demand, exactly as Kafka derives them. The metadata refresh
deadline is the one piece of soft state (not persisted, reset on load as in Kafka).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from coordinator.groups.assignors.spec import SubscriptionType
from coordinator.groups.consumer.member import EMPTY_ASSIGNMENT, Assignment, ConsumerGroupMember
from coordinator.groups.consumer.subscriptions import (
    SubscriptionCount,
    compute,
    dec_name,
    dec_regex,
    dec_value,
    inc_name,
    inc_regex,
    inc_value,
    subscription_type,
)

GROUP_TYPE = "consumer"
PROTOCOL_TYPE = "consumer"
# Kafka refreshes a group's topic metadata only when asked to (Integer.MAX_VALUE).
METADATA_REFRESH_INTERVAL_MS = 2**31 - 1


class IllegalStateError(RuntimeError):
    """Records that contradict the group (Kafka IllegalStateException during replay)."""


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class ResolvedRegularExpression:
    topics: frozenset[str]
    version: int
    timestamp: int


EMPTY_RESOLVED = ResolvedRegularExpression(frozenset(), -1, -1)
_MIN_LONG = -(2**63)


class ConsumerGroup:
    group_type = GROUP_TYPE
    protocol_type = PROTOCOL_TYPE

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.metadata_hash = 0
        self.has_subscription_metadata_record = False
        self.members: dict[str, ConsumerGroupMember] = {}
        self.target_assignment: dict[str, Assignment] = {}
        self.resolved_regexes: dict[str, ResolvedRegularExpression] = {}
        # Derived indexes.
        self.static_members: dict[str, str] = {}
        self.server_assignors: dict[str, int] = {}
        self.subscribed_topic_names: dict[str, SubscriptionCount] = {}
        self.subscribed_regexes: dict[str, int] = {}
        self.inverted_target_assignment: dict[uuid.UUID, dict[int, str]] = {}
        self.partition_epochs: dict[uuid.UUID, dict[int, int]] = {}
        self.num_classic_members = 0
        self.classic_protocols: dict[str, int] = {}
        # Soft state (ModernGroup.metadataRefreshDeadline): (deadline ms, group epoch).
        self.metadata_refresh_deadline: tuple[int, int] = (0, 0)

    # -- derived views --------------------------------------------------------------------

    @property
    def state(self) -> ConsumerGroupState:
        """Kafka ConsumerGroup.maybeUpdateGroupState."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for member in self.members.values():
            if not member.is_reconciled_to(self.assignment_epoch):
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    @property
    def subscription_type(self) -> SubscriptionType:
        return subscription_type(self.subscribed_regexes, self.subscribed_topic_names, len(self.members))

    def is_empty(self) -> bool:
        return self.state == ConsumerGroupState.EMPTY

    def num_members(self) -> int:
        return len(self.members)

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        member_id = self.static_member_id(instance_id)
        return None if member_id is None else self.members[member_id]

    def has_static_member(self, instance_id: str | None) -> bool:
        return instance_id is not None and instance_id in self.static_members

    def target_assignment_of(self, member_id: str, instance_id: str | None = None) -> Assignment:
        """Kafka ConsumerGroup.targetAssignment(memberId, instanceId): a static member gets the
        target of the member currently holding its instance id."""
        if instance_id is None:
            return self.target_assignment.get(member_id, EMPTY_ASSIGNMENT)
        previous = self.static_member_id(instance_id)
        return EMPTY_ASSIGNMENT if previous is None else self.target_assignment.get(previous, EMPTY_ASSIGNMENT)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        """The epoch of the partition's current owner, or -1 when nobody owns it."""
        return self.partition_epochs.get(topic_id, {}).get(partition, -1)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscribed_topic_names

    def num_subscribed_members(self, regex: str) -> int:
        return self.subscribed_regexes.get(regex, 0)

    def last_resolved_regex_refresh_time_ms(self) -> int:
        """Timestamp of the first resolved regex (they are resolved together), or Long.MIN_VALUE."""
        for resolved in self.resolved_regexes.values():
            return resolved.timestamp
        return _MIN_LONG

    def last_resolved_regex_version(self) -> int:
        for resolved in self.resolved_regexes.values():
            return resolved.version
        return 0

    def preferred_server_assignor(self, configured: Iterable[str] = ()) -> str | None:
        return _most_used(self.server_assignors, configured)

    def compute_preferred_server_assignor(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None, configured: Iterable[str] = ()
    ) -> str | None:
        """The most used server assignor once `old` is replaced by `new`. Kafka breaks ties by
        HashMap order; we break them by the order of group.consumer.assignors, then by name."""
        counts = dict(self.server_assignors)
        _update_assignor_counts(counts, old, new)
        return _most_used(counts, configured)

    # -- what-if computations (ConsumerGroup.compute*) --------------------------------------

    def compute_subscribed_topic_names(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> dict[str, SubscriptionCount]:
        counts = dict(self.subscribed_topic_names)
        _update_name_counts(counts, old, new)
        old_regex = old.regex if old is not None else None
        if old_regex is not None:
            new_regex = new.regex if new is not None else None
            # The last subscriber of a regex leaving it takes the regex's topics away.
            if old_regex != new_regex and self.num_subscribed_members(old_regex) == 1:
                resolved = self.resolved_regexes.get(old_regex)
                if resolved is not None:
                    for topic in resolved.topics:
                        compute(counts, topic, dec_regex)
        return counts

    def compute_subscribed_regexes(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> dict[str, int]:
        old_regex = old.regex if old is not None else None
        new_regex = new.regex if new is not None else None
        counts = dict(self.subscribed_regexes)
        if old_regex != new_regex:
            if old_regex is not None:
                compute(counts, old_regex, dec_value)
            if new_regex is not None:
                compute(counts, new_regex, inc_value)
        return counts

    def compute_subscribed_topic_names_without(
        self, removed: Iterable[ConsumerGroupMember], removed_regexes: Iterable[str]
    ) -> dict[str, SubscriptionCount]:
        counts = dict(self.subscribed_topic_names)
        for member in removed:
            _update_name_counts(counts, member, None)
        for regex in removed_regexes:
            resolved = self.resolved_regexes.get(regex)
            if resolved is not None:
                for topic in resolved.topics:
                    compute(counts, topic, dec_regex)
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

    def update_member(self, new: ConsumerGroupMember) -> None:
        old = self.members.get(new.member_id)
        self.members[new.member_id] = new
        _update_name_counts(self.subscribed_topic_names, old, new)
        _update_assignor_counts(self.server_assignors, old, new)
        self._remove_partition_epochs(old)
        self._add_partition_epochs(new.assigned_partitions, new.member_epoch)
        self._add_partition_epochs(new.partitions_pending_revocation, new.member_epoch)
        self._update_regex_counts(old, new)
        if new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id
        self._update_classic_counts(old, new)

    def remove_member(self, member_id: str) -> None:
        old = self.members.pop(member_id)
        _update_name_counts(self.subscribed_topic_names, old, None)
        _update_assignor_counts(self.server_assignors, old, None)
        self._remove_partition_epochs(old)
        self._update_regex_counts(old, None)
        if old.instance_id is not None:
            self.static_members.pop(old.instance_id, None)
        self._update_classic_counts(old, None)

    def update_target_assignment(self, member_id: str, new: Assignment) -> None:
        self._update_inverted(member_id, self.target_assignment.get(member_id, EMPTY_ASSIGNMENT), new)
        self.target_assignment[member_id] = new

    def remove_target_assignment(self, member_id: str) -> None:
        self._update_inverted(member_id, self.target_assignment.get(member_id, EMPTY_ASSIGNMENT), EMPTY_ASSIGNMENT)
        self.target_assignment.pop(member_id, None)

    def update_resolved_regex(self, regex: str, resolved: ResolvedRegularExpression) -> None:
        self.remove_resolved_regex(regex)
        self.resolved_regexes[regex] = resolved
        for topic in resolved.topics:
            compute(self.subscribed_topic_names, topic, inc_regex)

    def remove_resolved_regex(self, regex: str) -> None:
        old = self.resolved_regexes.pop(regex, None)
        if old is not None:
            for topic in old.topics:
                compute(self.subscribed_topic_names, topic, dec_regex)

    # -- internals --------------------------------------------------------------------------

    def _update_regex_counts(self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None) -> None:
        if old is not None and old.regex is not None:
            compute(self.subscribed_regexes, old.regex, dec_value)
        if new is not None and new.regex is not None:
            compute(self.subscribed_regexes, new.regex, inc_value)

    def _update_classic_counts(self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None) -> None:
        if old is not None and old.classic_member_metadata is not None:
            self.num_classic_members -= 1
            for protocol in old.classic_member_metadata.supported_protocols:
                compute(self.classic_protocols, protocol.name, dec_value)
        if new is not None and new.classic_member_metadata is not None:
            self.num_classic_members += 1
            for protocol in new.classic_member_metadata.supported_protocols:
                compute(self.classic_protocols, protocol.name, inc_value)

    def _remove_partition_epochs(self, old: ConsumerGroupMember | None) -> None:
        if old is None:
            return
        for assignment in (old.assigned_partitions, old.partitions_pending_revocation):
            for topic_id, parts in assignment.items():
                epochs = self.partition_epochs.get(topic_id)
                if epochs is None:
                    raise IllegalStateError(
                        f"Cannot remove the epoch {old.member_epoch} from {topic_id} because it does not have any epoch"
                    )
                for partition in parts:
                    previous = epochs.pop(partition, None)
                    if previous != old.member_epoch:
                        raise IllegalStateError(
                            f"Cannot remove the epoch {old.member_epoch} from {topic_id}-{partition} because "
                            f"the partition is still owned at a different epoch {previous}"
                        )
                if not epochs:
                    del self.partition_epochs[topic_id]

    def _add_partition_epochs(self, assignment: Assignment, epoch: int) -> None:
        for topic_id, parts in assignment.items():
            epochs = self.partition_epochs.setdefault(topic_id, {})
            for partition in parts:
                previous = epochs.get(partition)
                if previous is not None:
                    raise IllegalStateError(
                        f"Cannot set the epoch of {topic_id}-{partition} to {epoch} because "
                        f"the partition is still owned at epoch {previous}"
                    )
                epochs[partition] = epoch

    def _update_inverted(self, member_id: str, old: Assignment, new: Assignment) -> None:
        """Kafka ModernGroup.updateInvertedTargetAssignment (a partition moved to another member
        first must not be removed when its previous owner's assignment is updated)."""
        for topic_id in set(old) | set(new):
            old_parts = old.get(topic_id, frozenset())
            new_parts = new.get(topic_id, frozenset())
            owners = self.inverted_target_assignment.setdefault(topic_id, {})
            for partition in old_parts - new_parts:
                if owners.get(partition) == member_id:
                    del owners[partition]
            for partition in new_parts - old_parts:
                owners[partition] = member_id
            if not owners:
                del self.inverted_target_assignment[topic_id]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConsumerGroup):
            return NotImplemented
        return _comparable(self) == _comparable(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ConsumerGroup({self.group_id!r}, epoch={self.group_epoch}, "
            f"assignment_epoch={self.assignment_epoch}, state={self.state}, members={list(self.members)})"
        )


def _comparable(g: ConsumerGroup) -> tuple[object, ...]:
    return (
        g.group_id,
        g.group_epoch,
        g.assignment_epoch,
        g.metadata_hash,
        g.has_subscription_metadata_record,
        g.members,
        g.target_assignment,
        g.resolved_regexes,
        g.static_members,
        g.server_assignors,
        g.subscribed_topic_names,
        g.subscribed_regexes,
        g.inverted_target_assignment,
        g.partition_epochs,
        g.num_classic_members,
        g.classic_protocols,
    )


def _update_name_counts(
    counts: dict[str, SubscriptionCount], old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
) -> None:
    if old is not None:
        for topic in old.subscribed_topic_names:
            compute(counts, topic, dec_name)
    if new is not None:
        for topic in new.subscribed_topic_names:
            compute(counts, topic, inc_name)


def _update_assignor_counts(
    counts: dict[str, int], old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
) -> None:
    if old is not None and old.server_assignor is not None:
        compute(counts, old.server_assignor, dec_value)
    if new is not None and new.server_assignor is not None:
        compute(counts, new.server_assignor, inc_value)


def _most_used(counts: Mapping[str, int], configured: Iterable[str]) -> str | None:
    if not counts:
        return None
    order = {name: i for i, name in enumerate(configured)}
    return min(counts, key=lambda name: (-counts[name], order.get(name, len(order)), name))
