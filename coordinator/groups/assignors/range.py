"""Kafka's server-side RangeAssignor ("range"), as rewritten by KAFKA-16944 (Kafka 3.9+).

Each topic's partitions are cut into contiguous ranges, handed to its subscribers in one fixed
member order: static members first, by group.instance.id, then the others by member id (Java
String order). The first `partitions % subscribers` subscribers get one more. With the same
subscriptions and equal partition counts, member i gets the same partition numbers of every
topic (co-partitioning, for joins). Stickiness is only what that order gives: a static member
that rejoins under a new member id keeps its ranges. The current assignment is not read (Kafka
neither), so adding or removing a member can shift every range. Racks are ignored (as Kafka).
"""
from __future__ import annotations

from coordinator.groups.assignors.ordering import java_string_key
from coordinator.groups.assignors.spec import AssignorError, GroupSpec, SubscribedTopicDescriber, TopicId


class RangeAssignor:
    name = "range"

    def assign(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
        if not spec.members:
            return {}
        member_ids = _sorted_member_ids(spec)
        # Per topic: [partition count, subscribers, next range start, extra partitions left].
        # One path serves both subscription types: with equal subscriptions it gives exactly
        # Kafka's assignHomogeneousGroup result.
        state: dict[TopicId, list[int]] = {}
        for member_id in member_ids:
            for topic_id in spec.members[member_id].subscribed_topic_ids:
                entry = state.get(topic_id)
                if entry is None:
                    count = topics.num_partitions(topic_id)
                    if count == -1:
                        raise AssignorError("Member is subscribed to a non-existent topic")
                    entry = state[topic_id] = [count, 0, 0, -1]
                entry[1] += 1

        result: dict[str, dict[TopicId, frozenset[int]]] = {}
        for member_id in member_ids:
            assignment: dict[TopicId, frozenset[int]] = {}
            for topic_id in spec.members[member_id].subscribed_topic_ids:
                entry = state[topic_id]
                count, subscribers, start, extra = entry
                minimum, first_extra = divmod(count, subscribers)
                if extra == -1:
                    extra = first_extra
                quota = minimum
                if extra > 0:
                    quota += 1
                    extra -= 1
                end = min(start + quota, count)
                entry[2], entry[3] = end, extra
                if start < end:
                    assignment[topic_id] = frozenset(range(start, end))
            result[member_id] = assignment
        # Kafka's GroupAssignment is a map; we keep the group's member order.
        return {member_id: result[member_id] for member_id in spec.members}


def _sorted_member_ids(spec: GroupSpec) -> list[str]:
    """Kafka RangeAssignor.sortMemberIds: static members (by instance id) before dynamic ones
    (by member id), so a static member that rejoins with a new member id keeps its place."""
    def key(member_id: str) -> tuple[int, bytes]:
        instance_id = spec.members[member_id].instance_id
        if instance_id is not None:
            return 0, java_string_key(instance_id)
        return 1, java_string_key(member_id)

    return sorted(spec.members, key=key)
