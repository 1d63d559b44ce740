"""The share-group assignor "simple" (Kafka 4.1+ SimpleAssignor and its homogeneous and
heterogeneous builders, KIP-932).

Share groups share partitions: balance comes first (each member's count within one of the
others'), then stickiness (a member keeps what it had when it can). With more members than
partitions each partition goes to ceil(members / partitions) members ("desired sharing"); with
fewer, members get ceil/floor(partitions / members) each. Only assignable partitions (those whose
share state is initialized, `GroupSpec.assignable`) are handed out. The steps are Kafka's: drop
topics a member no longer subscribes to, trim members over their desired count, trim partitions
shared more than desired, then deal the remaining partitions round-robin to unfilled members.
Kafka iterates hash maps keyed by small ints (member indexes, partition numbers) in ascending
order, which we copy; where it iterates a HashMap of topic-partitions we use Kafka's Uuid order,
then partition. Members are numbered in the spec's order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from coordinator.groups.assignors.ordering import sorted_topic_ids
from coordinator.groups.assignors.spec import (
    AssignorError,
    GroupSpec,
    SubscribedTopicDescriber,
    SubscriptionType,
    TopicId,
)

NAME = "simple"

Partition = tuple[TopicId, int]
MutableAssignment = dict[TopicId, set[int]]


def _desired_counts(members: Sequence[int], num_partitions: int) -> tuple[int, dict[int, int]]:
    """(desired sharing, member index -> desired count): Kafka spreads sharing * partitions
    assignments over `members` in ceil steps (Java doubles, as Python floats), so counts differ
    by at most one; members not listed want nothing."""
    sharing = 0 if num_partitions == 0 else (len(members) + num_partitions - 1) // num_partitions
    precise = sharing * num_partitions / len(members) if members else 0.0
    return sharing, {m: math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i, m in enumerate(members)}


class _Builder:
    """The state both builders share: member numbering, the old and the copy-on-write new
    assignment of each member."""

    def __init__(self, spec: GroupSpec) -> None:
        self.spec = spec
        self.member_ids = list(spec.members)
        self.old: list[dict[TopicId, frozenset[int]]] = [dict(spec.member_assignment(m)) for m in self.member_ids]
        self.new: dict[int, MutableAssignment] = {}

    def writable(self, member: int) -> MutableAssignment:
        """Kafka's deep copy of the member's old assignment, made on its first change."""
        assignment = self.new.get(member)
        if assignment is None:
            assignment = self.new[member] = {t: set(p) for t, p in self.old[member].items()}
        return assignment

    def target_partitions(self, topic_id: TopicId, topics: SubscribedTopicDescriber) -> list[int]:
        count = topics.num_partitions(topic_id)
        if count == -1:
            raise AssignorError(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
            )
        return [p for p in range(count) if self.spec.is_partition_assignable(topic_id, p)]

    def result(self) -> dict[str, dict[TopicId, frozenset[int]]]:
        out: dict[str, dict[TopicId, frozenset[int]]] = {}
        for index, member_id in enumerate(self.member_ids):
            assignment = self.new.get(index)
            if assignment is None:
                out[member_id] = self.old[index]
            else:
                out[member_id] = {t: frozenset(p) for t, p in assignment.items() if p}
        return out


def _deal(
    builder: _Builder,
    by_partition: dict[Partition, set[int]],
    by_member: dict[int, set[Partition]],
    unfilled: list[int],
    sharing: int,
    desired: dict[int, int],
) -> None:
    """Kafka assignRemainingPartitions: one pass over the partitions in order; each short of its
    desired sharing takes the next unfilled members, cycling through them while the cycle still
    places something (a partition every unfilled member already has is left short). As in Kafka,
    a partition's holders are not updated while it is dealt, so on a second cycle a member may
    "take" a partition it just took (a no-op that still counts)."""
    if not unfilled:
        return
    pos = 0
    placed_this_cycle = False
    for partition, holders in by_partition.items():
        to_make = sharing - len(holders)
        while to_make > 0:
            if pos >= len(unfilled):
                if not placed_this_cycle:
                    break
                pos, placed_this_cycle = 0, False
            member = unfilled[pos]
            pos += 1
            if member in holders:
                continue
            builder.writable(member).setdefault(partition[0], set()).add(partition[1])
            owned = by_member.setdefault(member, set())
            owned.add(partition)
            to_make -= 1
            placed_this_cycle = True
            if len(owned) >= desired.get(member, 0):
                pos -= 1
                del unfilled[pos]
        if not unfilled:
            break


def _trim_overshared(
    builder: _Builder, by_partition: dict[Partition, set[int]], by_member: dict[int, set[Partition]], sharing: int
) -> set[int]:
    """Kafka revokeOversharedPartitions: members over the desired sharing of a partition lose it
    (lowest member index first); returns the members that lost one."""
    losers: set[int] = set()
    for (topic_id, partition), holders in by_partition.items():
        if len(holders) <= sharing:
            continue
        for member in sorted(holders):
            parts = builder.writable(member).get(topic_id)
            if parts is not None and partition in parts:
                parts.discard(partition)
                holders.discard(member)
                by_member[member].discard((topic_id, partition))
                losers.add(member)
            if len(holders) <= sharing:
                break
    return losers


def assign_homogeneous(spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
    """Kafka SimpleHomogeneousAssignmentBuilder: every member subscribes to the same topics."""
    builder = _Builder(spec)
    subscribed = spec.members[builder.member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return {}  # Kafka: an empty GroupAssignment (each member's target becomes empty)
    targets = [(t, p) for t in sorted_topic_ids(subscribed) for p in builder.target_partitions(t, topics)]
    members = list(range(len(builder.member_ids)))
    sharing, desired = _desired_counts(members, len(targets))
    by_partition: dict[Partition, set[int]] = {}
    by_member: dict[int, set[Partition]] = {}
    unfilled: set[int] = set()
    overfilled: list[int] = []
    for member in members:  # revokeUnassignablePartitions
        count = 0
        for topic_id in sorted_topic_ids(builder.old[member]):
            if topic_id not in subscribed:
                builder.writable(member).pop(topic_id, None)
                continue
            for partition in sorted(builder.old[member][topic_id]):
                count += 1
                by_partition.setdefault((topic_id, partition), set()).add(member)
                by_member.setdefault(member, set()).add((topic_id, partition))
                if count >= desired[member]:
                    builder.writable(member)  # Kafka copies here; the trims below change the copy
        if count < desired[member]:
            unfilled.add(member)
        elif count > desired[member]:
            overfilled.append(member)
    for member in overfilled:  # revokeOverfilledMembers
        owned = by_member[member]
        for topic_id, partition in sorted(owned):
            if len(owned) <= desired[member]:
                break
            builder.writable(member)[topic_id].discard(partition)
            by_partition[(topic_id, partition)].discard(member)
            owned.discard((topic_id, partition))
    unfilled |= _trim_overshared(builder, dict(sorted(by_partition.items())), by_member, sharing)
    for target in targets:
        by_partition.setdefault(target, set())
    _deal(builder, dict(sorted(by_partition.items())), by_member, sorted(unfilled), sharing, desired)
    return builder.result()


def assign_heterogeneous(spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
    """Kafka SimpleHeterogeneousAssignmentBuilder: balance per topic among its subscribers.
    As in Kafka, a topic nobody subscribes to any more is not visited, so its partitions stay in
    a member's target until the member's next reconciliation filters them out."""
    builder = _Builder(spec)
    subscribed: dict[TopicId, list[int]] = {}
    for index, member_id in enumerate(builder.member_ids):
        for topic_id in spec.members[member_id].subscribed_topic_ids:
            subscribed.setdefault(topic_id, []).append(index)
    if not subscribed:
        return {}
    targets = {t: builder.target_partitions(t, topics) for t in sorted_topic_ids(subscribed)}
    for topic_id, partitions in targets.items():
        _assign_topic(builder, topic_id, partitions, subscribed[topic_id])
    return builder.result()


def _assign_topic(builder: _Builder, topic_id: TopicId, targets: list[int], subscribers: list[int]) -> None:
    """Kafka TopicAssignmentPartialBuilder.build for one topic."""
    sharing, desired = _desired_counts(subscribers, len(targets))
    by_partition: dict[Partition, set[int]] = {}
    by_member: dict[int, set[Partition]] = {}
    for member, old in enumerate(builder.old):  # revokeUnassignablePartitions
        for partition in sorted(old.get(topic_id, ())):
            by_partition.setdefault((topic_id, partition), set()).add(member)
            by_member.setdefault(member, set()).add((topic_id, partition))
    for member, owned in sorted(by_member.items()):  # revokeOverfilledMembers
        for tp in sorted(owned):
            if len(owned) <= desired.get(member, 0):
                break
            owned.discard(tp)
            by_partition[tp].discard(member)
            builder.writable(member)[topic_id].discard(tp[1])
    _trim_overshared(builder, dict(sorted(by_partition.items())), by_member, sharing)
    for partition in targets:
        by_partition.setdefault((topic_id, partition), set())
    unfilled = [m for m in subscribers if len(by_member.get(m, ())) < desired[m]]
    _deal(builder, dict(sorted(by_partition.items())), by_member, unfilled, sharing, desired)


class SimpleAssignor:
    """Kafka SimpleAssignor (ShareGroupPartitionAssignor "simple")."""

    name = NAME

    def assign(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
        if not spec.members:
            return {}
        if spec.subscription_type == SubscriptionType.HOMOGENEOUS:
            return assign_homogeneous(spec, topics)
        return assign_heterogeneous(spec, topics)
