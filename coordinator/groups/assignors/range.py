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

from coordinator.groups.assignors.current import is_homogeneous
from coordinator.groups.assignors.ordering import java_string_key
from coordinator.groups.assignors.spec import AssignorError, GroupSpec, SubscribedTopicDescriber, TopicId


class RangeAssignor:
    name = "range"

    def assign(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
        if not spec.members:
            return {}
        member_ids = _sorted_member_ids(spec)
        # Each topic's subscribers in that order. Kafka walks member by member and topic by
        # topic; walking topic by topic gives the same ranges (subscriber k of n gets
        # [k*q + min(k, r), +q+(k<r)) with q, r = divmod(partitions, n)) and touches only the
        # subscribers that get partitions, not all of them: one path serves both subscription
        # types, and with equal subscriptions it is exactly Kafka's assignHomogeneousGroup.
        subscribers: dict[TopicId, list[str]] = {}
        if is_homogeneous(spec):
            for topic_id in spec.members[member_ids[0]].subscribed_topic_ids:
                subscribers[topic_id] = member_ids
        else:
            by_key: dict[int, list[str]] = {}  # TopicId.int: uuid.UUID hashes in Python code
            for member_id in member_ids:
                for topic_id in spec.members[member_id].subscribed_topic_ids:
                    members = by_key.get(topic_id.int)
                    if members is None:
                        members = by_key[topic_id.int] = subscribers[topic_id] = []
                    members.append(member_id)

        result: dict[str, dict[TopicId, frozenset[int]]] = {member_id: {} for member_id in spec.members}
        for topic_id, members in subscribers.items():
            count = topics.num_partitions(topic_id)
            if count == -1:
                raise AssignorError("Member is subscribed to a non-existent topic")
            quota, extra = divmod(count, len(members))
            start = 0
            for k in range(min(len(members), count)):
                end = start + quota + (1 if k < extra else 0)
                result[members[k]][topic_id] = frozenset(range(start, end))
                start = end
        # Kafka's GroupAssignment is a map; ours keeps the group's member order.
        return result


def _sorted_member_ids(spec: GroupSpec) -> list[str]:
    """Kafka RangeAssignor.sortMemberIds: static members (by instance id) before dynamic ones
    (by member id), so a static member that rejoins with a new member id keeps its place."""

    def key(member_id: str) -> tuple[int, bytes]:
        instance_id = spec.members[member_id].instance_id
        if instance_id is not None:
            return 0, java_string_key(instance_id)
        return 1, java_string_key(member_id)

    return sorted(spec.members, key=key)
