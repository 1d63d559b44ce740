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

from coordinator.groups.assignors.current import empty_for_all, output, read_current
from coordinator.groups.assignors.member_balancer import MemberBalancer
from coordinator.groups.assignors.ordering import uuid_order_key
from coordinator.groups.assignors.spec import Assignment, AssignorError, GroupSpec, SubscribedTopicDescriber, TopicId

# Kafka: each balancing round roughly halves the imbalance of overlapping subscriptions.
MAX_ITERATION_COUNT = 16


def assign_heterogeneous(spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
    return _Builder(spec, topics).build()


class _Builder:
    """Topics get small numbers and are handled by number inside (uuid.UUID hashes in Python
    code, which dominated the cost); only the answer is keyed by TopicId again. The numbering
    order never shows: every list of topics is sorted by Kafka's comparator before use."""

    def __init__(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> None:
        self.spec = spec
        self.member_ids = list(spec.members)
        self.topic_ids: list[TopicId] = []
        self.topic_numbers: dict[int, int] = {}  # TopicId.int -> topic number
        self.partition_counts: list[int] = []
        # Subscribers of each topic, as member indices in ascending order.
        self.subscribers: list[list[int]] = []
        self.member_topics: list[set[int]] = []  # topic numbers each member subscribes to
        self.member_keys: list[set[int]] = []  # the same topics' TopicId.int
        for index, member_id in enumerate(self.member_ids):
            mine: set[int] = set()
            keys = {topic_id.int for topic_id in spec.members[member_id].subscribed_topic_ids}
            for key in keys:
                number = self.topic_numbers.get(key)
                if number is None:
                    topic_id = TopicId(int=key)
                    count = topics.num_partitions(topic_id)
                    if count == -1:
                        raise AssignorError(
                            f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
                        )
                    number = self.topic_numbers[key] = len(self.topic_ids)
                    self.topic_ids.append(topic_id)
                    self.partition_counts.append(count)
                    self.subscribers.append([])
                self.subscribers[number].append(index)
                mine.add(number)
            self.member_topics.append(mine)
            self.member_keys.append(keys)
        self.sizes = [0] * len(self.member_ids)
        # Owner (member index) of every partition in the target assignment; -1 when unassigned.
        self.owners = [[-1] * count for count in self.partition_counts]
        self.current: list[Assignment] = []
        # Members whose assignment changed: topic number -> partitions.
        self.copies: dict[int, dict[int, set[int]]] = {}

    def build(self) -> dict[str, dict[TopicId, frozenset[int]]]:
        if not self.topic_ids:
            return empty_for_all(self.member_ids)
        counts = {topic_id.int: count for topic_id, count in zip(self.topic_ids, self.partition_counts)}
        self.current, _ = read_current(self.spec, self.member_ids, self.member_keys, counts)
        self._revoke()
        self._assign_unassigned()
        self._balance()
        topic_ids = self.topic_ids
        return {
            member_id: (
                {topic_ids[n]: frozenset(p) for n, p in self.copies[i].items() if p}
                if i in self.copies
                else output(self.current[i])
            )
            for i, member_id in enumerate(self.member_ids)
        }

    def _topic_order_key(self, topic: int) -> tuple[float, int, tuple[int, int]]:
        # Kafka's topicComparator; partitions per subscriber as a double, like Java's.
        subscriber_count = len(self.subscribers[topic])
        per_subscriber = self.partition_counts[topic] / subscriber_count
        return -per_subscriber, subscriber_count, uuid_order_key(self.topic_ids[topic])

    def _revoke(self) -> None:
        numbers = self.topic_numbers
        for index, old in enumerate(self.current):
            mine = self.member_topics[index]
            kept: list[tuple[int, frozenset[int]]] = []
            dropped = False
            for topic_id, partitions in old.items():
                number = numbers.get(topic_id.int)
                if number is not None and number in mine:
                    kept.append((number, partitions))
                else:
                    dropped = True
            for number, partitions in kept:
                self.sizes[index] += len(partitions)
                owners = self.owners[number]
                for partition in partitions:
                    owners[partition] = index
            if dropped:
                self.copies[index] = {number: set(partitions) for number, partitions in kept}

    def _assign_unassigned(self) -> None:
        unassigned: dict[int, list[int]] = {}
        for topic, owners in enumerate(self.owners):
            free = [p for p, owner in enumerate(owners) if owner == -1]
            if free:
                unassigned[topic] = free
        balancer = MemberBalancer(self.sizes)
        for topic in sorted(unassigned, key=self._topic_order_key):
            balancer.initialize(self.subscribers[topic])
            for partition in unassigned[topic]:
                self._assign_partition(topic, partition, balancer.next_least_loaded())

    def _balance(self) -> None:
        movable = [t for t, members in enumerate(self.subscribers) if len(members) >= 2]
        if not movable:
            return
        ordered = sorted(movable, key=self._topic_order_key)
        balancer = MemberBalancer(self.sizes)
        last_rebalanced = -1
        for _ in range(MAX_ITERATION_COUNT):
            for topic_index, topic in enumerate(ordered):
                if topic_index == last_rebalanced:
                    # A full round since the last move: nothing more can improve.
                    return
                moved = self._balance_topic(topic, balancer)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = topic_index

    def _balance_topic(self, topic: int, balancer: MemberBalancer) -> int:
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return 0
        owners = self.owners[topic]
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
            self._assign_partition(topic, partition, least)
            moved += 1
        return moved

    def _mutable(self, index: int) -> dict[int, set[int]]:
        copy = self.copies.get(index)
        if copy is None:
            # After _revoke an uncopied member holds only topics it subscribes to.
            numbers = self.topic_numbers
            copy = self.copies[index] = {
                numbers[topic_id.int]: set(partitions) for topic_id, partitions in self.current[index].items()
            }
        return copy

    def _assign_partition(self, topic: int, partition: int, index: int) -> None:
        owners = self.owners[topic]
        old = owners[partition]
        if old != -1:
            held = self._mutable(old).get(topic)
            if held is not None:
                held.discard(partition)
                if not held:
                    del self.copies[old][topic]
            self.sizes[old] -= 1
        self._mutable(index).setdefault(topic, set()).add(partition)
        owners[partition] = index
        self.sizes[index] += 1
