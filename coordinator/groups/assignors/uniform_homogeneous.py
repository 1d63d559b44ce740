"""Kafka's UniformHomogeneousAssignmentBuilder: every member subscribes to the same topics.

Follows apache/kafka after KAFKA-18688 (PR #19677, Kafka 4.1, "Fix uniform homogeneous assignor
stability"). Balance first: each member's quota is total / members, and the first
`total % members` members *may* take one more. Then stickiness: a member keeps its current
partitions up to its quota; a member that cannot fill an extra slot from what it owns gives the
slot up to a later member, unless the remaining members are exactly the ones that must take the
remaining extras. Kept partitions stay; the rest (never held, or revoked) go, in order, to the
members still under quota, in member order.
Orders (see ordering.py): unassigned partitions by Java's HashSet order of the topic ids (as
Kafka, so its tests' expected results carry over), then partition; a member's own partitions by
topic id (Kafka: its HashMap order) and partition; revoked partitions follow in member order.
"""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter

from coordinator.groups.assignors.current import MutableAssignment, copy_assignment, empty_for_all, output, read_current
from coordinator.groups.assignors.ordering import java_hash_set_order, sorted_topic_ids
from coordinator.groups.assignors.spec import AssignorError, GroupSpec, SubscribedTopicDescriber, TopicId


def assign_homogeneous(spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
    member_ids = list(spec.members)
    subscribed = spec.members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return empty_for_all(member_ids)

    partition_counts: dict[int, int] = {}  # by TopicId.int (see current.py)
    for topic_id in subscribed:
        count = topics.num_partitions(topic_id)
        if count == -1:
            raise AssignorError(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
            )
        partition_counts[topic_id.int] = count
    keys = partition_counts.keys()

    current, held = read_current(spec, member_ids, [keys] * len(member_ids), partition_counts)

    # Every partition nobody holds, in Kafka's order (HashSet of topic ids, then partition).
    unassigned: list[tuple[TopicId, int]] = []
    total = 0
    for topic_id in java_hash_set_order(subscribed):
        count = partition_counts[topic_id.int]
        taken = held.get(topic_id.int)
        if taken:
            unassigned.extend((topic_id, p) for p in range(count) if p not in taken)
        else:
            unassigned.extend((topic_id, p) for p in range(count))
        total += count

    member_count = len(member_ids)
    minimum_quota, extras_left = divmod(total, member_count)

    # maybeRevokePartitions: keep up to the quota, decide who takes the extra partitions.
    copies: dict[int, MutableAssignment] = {}  # members whose assignment changed
    unfilled: list[tuple[int, int]] = []  # (member index, partitions still wanted)
    for index, old in enumerate(current):
        quota = minimum_quota
        has_extra = extras_left > 0
        if has_extra:
            quota += 1
        new: MutableAssignment | None = None
        for topic_id in sorted_topic_ids(old) if len(old) > 1 else old:
            partitions = old[topic_id]
            if topic_id.int in keys:
                if len(partitions) <= quota:
                    quota -= len(partitions)
                    continue
                for partition in sorted(partitions):
                    if quota > 0:
                        quota -= 1
                        continue
                    if new is None:
                        new = copy_assignment(old)
                    kept = new[topic_id]
                    kept.discard(partition)
                    if not kept:
                        del new[topic_id]
                    unassigned.append((topic_id, partition))
            else:
                if new is None:
                    new = copy_assignment(old)
                del new[topic_id]

        # KAFKA-18688: an extra slot this member could not fill from its own partitions goes to
        # a later member, unless every remaining member must take one of the remaining extras.
        if quota > 0 and has_extra and member_count - index > extras_left:
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((index, quota))
        if has_extra:
            extras_left -= 1
        if new is not None:
            copies[index] = new

    # assignRemainingPartitions: hand the unassigned partitions out in order.
    next_index = 0
    for index, wanted in unfilled:
        if next_index >= len(unassigned):
            break
        mutable = copies.get(index)
        if mutable is None:
            mutable = copies[index] = copy_assignment(current[index])
        # Runs of one topic: one dict lookup per run, not per partition.
        for topic_id, run in groupby(unassigned[next_index : next_index + wanted], key=itemgetter(0)):
            mutable.setdefault(topic_id, set()).update(p for _, p in run)
        next_index += wanted
    if next_index < len(unassigned):
        raise AssignorError("Partitions were left unassigned")

    return {member_id: output(copies[i] if i in copies else current[i]) for i, member_id in enumerate(member_ids)}
