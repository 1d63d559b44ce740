"""Reconciliation: move one member's current assignment towards its target (Kafka
CurrentAssignmentBuilder, Kafka 4.2 with KAFKA-19431, KAFKA-19449 and KAFKA-19974).

A member first revokes (UNREVOKED_PARTITIONS, same epoch) what it must give up; it is considered
done when its heartbeat no longer reports those partitions. It then moves to the target epoch
and receives the target partitions nobody else owns; partitions another member still owns stay
pending (UNRELEASED_PARTITIONS) until their owner releases them. When the subscription changed,
partitions of topics the member no longer subscribes to are revoked at once. Each partition keeps
the epoch it was first assigned at while the member holds it, kept or pending revocation; a
partition handed over gets the target epoch (KIP-1251, Kafka 4.3's CurrentAssignmentBuilder).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import ResolvedRegularExpression
from coordinator.groups.consumer.member import Assignment, ConsumerGroupMember, MemberState
from coordinator.groups.consumer.records import TopicPartitions
from protocol.errors import ErrorCode

PartitionEpoch = Callable[[uuid.UUID, int], int]


def subscribed_topic_ids(
    member: ConsumerGroupMember, resolved_regexes: Mapping[str, ResolvedRegularExpression], topics: TopicsView
) -> set[uuid.UUID]:
    """The ids of the existing topics the member subscribes to, by name or by its regex (an
    unresolved regex counts as matching nothing)."""
    names: frozenset[str] = member.subscribed_topic_names
    if member.regex is not None:
        resolved = resolved_regexes.get(member.regex)
        if resolved is not None:
            names = names | resolved.topics
    ids = set()
    for name in names:
        topic = topics.by_name(name)
        if topic is not None:
            ids.add(topic.topic_id)
    return ids


def kept_epochs(member: ConsumerGroupMember, *held: Assignment) -> dict[uuid.UUID, dict[int, int]]:
    """The assignment epochs of partitions the member keeps holding (KIP-1251: they do not move)."""
    out: dict[uuid.UUID, dict[int, int]] = {}
    for assignment in held:
        for topic_id, partitions in assignment.items():
            epochs = out.setdefault(topic_id, {})
            for p in partitions:
                epoch = member.assignment_epoch(topic_id, p)
                epochs[p] = max(member.member_epoch, 0) if epoch is None else epoch
    return out


def owns_any(owned: Sequence[TopicPartitions] | None, assignment: Assignment) -> bool:
    """Whether the reported owned partitions include any of `assignment`; unknown (None) counts
    as yes (Kafka ownsRevokedPartitions)."""
    if owned is None:
        return True
    for tp in owned:
        pending = assignment.get(tp.topic_id)
        if pending and any(p in pending for p in tp.partitions):
            return True
    return False


class CurrentAssignmentBuilder:
    def __init__(
        self,
        member: ConsumerGroupMember,
        *,
        target_epoch: int,
        target: Assignment,
        current_partition_epoch: PartitionEpoch,
        topics: TopicsView,
        resolved_regexes: Mapping[str, ResolvedRegularExpression] | None = None,
        has_subscription_changed: bool = False,
        owned: Sequence[TopicPartitions] | None = None,
    ) -> None:
        self.member = member
        self.target_epoch = target_epoch
        self.target = target
        self.partition_epoch = current_partition_epoch
        self.topics = topics
        self.resolved_regexes = resolved_regexes or {}
        self.has_subscription_changed = has_subscription_changed
        self.owned = owned

    def build(self) -> ConsumerGroupMember:
        m = self.member
        if m.state == MemberState.STABLE:
            # A newer target: reconcile towards it; otherwise keep the assignment consistent
            # with a changed subscription.
            if m.member_epoch != self.target_epoch:
                return self._next_assignment(m.member_epoch, m.assigned_partitions)
            if self.has_subscription_changed:
                return self._drop_unsubscribed(m.member_epoch, m.assigned_partitions)
            return m
        if m.state == MemberState.UNREVOKED_PARTITIONS:
            # Still owns some of what it must revoke: wait (a changed subscription may add more).
            if owns_any(self.owned, m.partitions_pending_revocation):
                if self.has_subscription_changed:
                    return self._drop_unsubscribed(m.member_epoch, m.assigned_partitions)
                return m
            return self._next_assignment(m.member_epoch, m.assigned_partitions)
        if m.state == MemberState.UNRELEASED_PARTITIONS:
            return self._next_assignment(m.member_epoch, m.assigned_partitions)
        # UNKNOWN: a state from a newer version; start over from an empty assignment.
        if self.owned is None or len(self.owned) > 0:
            raise ConsumerGroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                "The consumer group member is in a unknown state. "
                "The member must abandon all its partitions and rejoin.",
            )
        return self._next_assignment(self.target_epoch, m.assigned_partitions)

    def _drop_unsubscribed(self, member_epoch: int, assigned: Assignment) -> ConsumerGroupMember:
        """Kafka updateCurrentAssignment: revoke the partitions of unsubscribed topics."""
        m = self.member
        subscribed = subscribed_topic_ids(m, self.resolved_regexes, self.topics)
        if not subscribed and not m.partitions_pending_revocation:
            new_assigned: dict[uuid.UUID, frozenset[int]] = {}
            new_pending: dict[uuid.UUID, frozenset[int]] = dict(assigned)
        else:
            removed = [t for t in assigned if t not in subscribed]
            if not removed:
                return m
            new_assigned = {t: p for t, p in assigned.items() if t in subscribed}
            new_pending = dict(m.partitions_pending_revocation)
            for t in removed:
                new_pending[t] = new_pending.get(t, frozenset()) | assigned[t]
        if new_pending and owns_any(self.owned, new_pending):
            return replace(
                m.with_epoch(member_epoch),
                state=MemberState.UNREVOKED_PARTITIONS,
                assigned_partitions=new_assigned,
                partitions_pending_revocation=new_pending,
                assignment_epochs=kept_epochs(m, new_assigned, new_pending),
            )
        # Already revoked: shrink the assignment and keep the state.
        return replace(
            m.with_epoch(member_epoch),
            assigned_partitions=new_assigned,
            assignment_epochs=kept_epochs(m, new_assigned, m.partitions_pending_revocation),
        )

    def _next_assignment(self, member_epoch: int, assigned: Assignment) -> ConsumerGroupMember:
        """Kafka computeNextAssignment."""
        m = self.member
        subscribed = subscribed_topic_ids(m, self.resolved_regexes, self.topics)
        has_unreleased = False
        new_assigned: dict[uuid.UUID, frozenset[int]] = {}
        new_pending: dict[uuid.UUID, frozenset[int]] = {}
        to_assign: dict[uuid.UUID, frozenset[int]] = {}
        for topic_id in set(self.target) | set(assigned):
            target = self.target.get(topic_id, frozenset()) if topic_id in subscribed else frozenset()
            current = assigned.get(topic_id, frozenset())
            keep = current & target
            revoke = current - keep
            own_pending = m.partitions_pending_revocation.get(topic_id, frozenset())
            # A partition another member still owns is not handed over yet; one this member is
            # itself revoking does not count (KAFKA-19449).
            free = frozenset(p for p in target - keep if self.partition_epoch(topic_id, p) == -1 or p in own_pending)
            if len(free) != len(target - keep):
                has_unreleased = True
            if keep:
                new_assigned[topic_id] = keep
            if revoke:
                new_pending[topic_id] = revoke
            if free:
                to_assign[topic_id] = free
        if new_pending and owns_any(self.owned, new_pending):
            # Revoke first, at the current epoch (no epoch bump while revoking, KAFKA-19974).
            return replace(
                m.with_epoch(member_epoch),
                state=MemberState.UNREVOKED_PARTITIONS,
                assigned_partitions=new_assigned,
                partitions_pending_revocation=new_pending,
                assignment_epochs=kept_epochs(m, new_assigned, new_pending),
            )
        epochs = kept_epochs(m, new_assigned)
        for topic_id, parts in to_assign.items():
            new_assigned[topic_id] = new_assigned.get(topic_id, frozenset()) | parts
            epochs.setdefault(topic_id, {}).update(dict.fromkeys(parts, self.target_epoch))
        state = MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
        return replace(
            m.with_epoch(self.target_epoch),
            state=state,
            assigned_partitions=new_assigned,
            partitions_pending_revocation={},
            assignment_epochs=epochs,
        )
