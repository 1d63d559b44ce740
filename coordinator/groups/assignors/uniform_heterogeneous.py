"""Kafka's UniformHeterogeneousAssignmentBuilder: members subscribe to different topics.

Follows apache/kafka KAFKA-17710 (commit 017da210999c, "Rework uniform heterogeneous assignor
to improve perf"), the version in Kafka 4.0+. Members are numbered in member order.
  1. Revoke: each member keeps its partitions of topics it still subscribes to, and only those.
  2. Assign the partitions nobody holds, topic by topic (most partitions per subscriber first,
     then fewest subscribers, then topic id), each to the least loaded subscriber (size, index).
  3. Balance: repeatedly move partitions of a topic from its most to its least loaded
     subscribers (a member gives its highest partition of the topic), looping over the topics
     until a whole round moves nothing or 16 rounds have run (Kafka's MAX_ITERATION_COUNT).
Nothing here depends on hash order: every sort has a complete tie-break, as in Kafka.
"""
from __future__ import annotations

from coordinator.groups.assignors.current import (
    MutableAssignment,
    copy_assignment,
    empty_for_all,
    output,
    read_current,
)
from coordinator.groups.assignors.member_balancer import MemberBalancer
from coordinator.groups.assignors.ordering import uuid_order_key
from coordinator.groups.assignors.spec import (
    Assignment,
    AssignorError,
    GroupSpec,
    SubscribedTopicDescriber,
    TopicId,
)

# Kafka: each balancing round roughly halves the imbalance of overlapping subscriptions.
MAX_ITERATION_COUNT = 16


def assign_heterogeneous(
    spec: GroupSpec, topics: SubscribedTopicDescriber
) -> dict[str, dict[TopicId, frozenset[int]]]:
    return _Builder(spec, topics).build()


class _Builder:
    def __init__(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> None:
        self.spec = spec
        self.member_ids = list(spec.members)
        self.partition_counts: dict[TopicId, int] = {}
        # Subscribers of each topic, as member indices in ascending order.
        self.subscribers: dict[TopicId, list[int]] = {}
        for index, member_id in enumerate(self.member_ids):
            for topic_id in spec.members[member_id].subscribed_topic_ids:
                if topic_id not in self.partition_counts:
                    count = topics.num_partitions(topic_id)
                    if count == -1:
                        raise AssignorError(
                            f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
                        )
                    self.partition_counts[topic_id] = count
                self.subscribers.setdefault(topic_id, []).append(index)
        self.sizes = [0] * len(self.member_ids)
        # Owner (member index) of every partition in the target assignment; -1 when unassigned.
        self.owners = {topic_id: [-1] * count for topic_id, count in self.partition_counts.items()}
        self.current: list[Assignment] = []
        self.copies: dict[int, MutableAssignment] = {}

    def build(self) -> dict[str, dict[TopicId, frozenset[int]]]:
        if not self.partition_counts:
            return empty_for_all(self.member_ids)
        self.current, _ = read_current(self.spec, self.member_ids, self.partition_counts.__getitem__)
        self._revoke()
        self._assign_unassigned()
        self._balance()
        return {
            member_id: output(self.copies[i] if i in self.copies else self.current[i])
            for i, member_id in enumerate(self.member_ids)
        }

    def _topic_order_key(self, topic_id: TopicId) -> tuple[float, int, tuple[int, int]]:
        # Kafka's topicComparator; partitions per subscriber as a double, like Java's.
        subscriber_count = len(self.subscribers[topic_id])
        per_subscriber = self.partition_counts[topic_id] / subscriber_count
        return -per_subscriber, subscriber_count, uuid_order_key(topic_id)

    def _revoke(self) -> None:
        for index, member_id in enumerate(self.member_ids):
            old = self.current[index]
            subscribed = self.spec.members[member_id].subscribed_topic_ids
            for topic_id, partitions in old.items():
                if topic_id in subscribed:
                    self.sizes[index] += len(partitions)
                    owners = self.owners[topic_id]
                    for partition in partitions:
                        owners[partition] = index
                else:
                    self._mutable(index).pop(topic_id, None)

    def _assign_unassigned(self) -> None:
        unassigned: dict[TopicId, list[int]] = {}
        for topic_id, owners in self.owners.items():
            free = [p for p, owner in enumerate(owners) if owner == -1]
            if free:
                unassigned[topic_id] = free
        balancer = MemberBalancer(self.sizes)
        for topic_id in sorted(unassigned, key=self._topic_order_key):
            balancer.initialize(self.subscribers[topic_id])
            for partition in unassigned[topic_id]:
                self._assign_partition(topic_id, partition, balancer.next_least_loaded())

    def _balance(self) -> None:
        movable = [t for t, members in self.subscribers.items() if len(members) >= 2]
        if not movable:
            return
        ordered = sorted(movable, key=self._topic_order_key)
        balancer = MemberBalancer(self.sizes)
        last_rebalanced = -1
        for _ in range(MAX_ITERATION_COUNT):
            for topic_index, topic_id in enumerate(ordered):
                if topic_index == last_rebalanced:
                    # A full round since the last move: nothing more can improve.
                    return
                moved = self._balance_topic(topic_id, balancer)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = topic_index

    def _balance_topic(self, topic_id: TopicId, balancer: MemberBalancer) -> int:
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return 0
        owners = self.owners[topic_id]
        # The topic's partitions grouped by owner (stable sort: ascending within an owner), and
        # each owner's slice of that list, so picking "its last partition" is constant time.
        partitions = sorted(range(len(owners)), key=owners.__getitem__)
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, partition in enumerate(partitions):
            owner = owners[partition]
            start.setdefault(owner, i)
            end[owner] = i + 1

        moved = 0
        while not balancer.is_balanced():
            most = balancer.next_most_loaded()
            while most != -1 and end.get(most, 0) - start.get(most, 0) <= 0:
                balancer.exclude_most_loaded()
                most = balancer.next_most_loaded()
            if most == -1:
                break  # nobody left with a partition of this topic to give
            end[most] -= 1
            partition = partitions[end[most]]
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign_partition(topic_id, partition, least)
            moved += 1
        return moved

    def _mutable(self, index: int) -> MutableAssignment:
        copy = self.copies.get(index)
        if copy is None:
            copy = self.copies[index] = copy_assignment(self.current[index])
        return copy

    def _assign_partition(self, topic_id: TopicId, partition: int, index: int) -> None:
        owners = self.owners[topic_id]
        old = owners[partition]
        if old != -1:
            held = self._mutable(old).get(topic_id)
            if held is not None:
                held.discard(partition)
                if not held:
                    del self.copies[old][topic_id]
            self.sizes[old] -= 1
        self._mutable(index).setdefault(topic_id, set()).add(partition)
        owners[partition] = index
        self.sizes[index] += 1
