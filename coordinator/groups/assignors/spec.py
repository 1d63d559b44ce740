"""What a server-side assignor sees and returns (KIP-848; Kafka's group-coordinator-api
`assignor` package: GroupSpec, MemberSubscription, SubscribedTopicDescriber, GroupAssignment).

An assignor is a pure function of (group spec, topic describer) -> assignment: it never reads
the clock or group state, so equal inputs give equal outputs (our assignors are deterministic;
Kafka's iterate hash maps, so where Kafka leaves an order to HashMap we fix one and say so).
Topics are named by their topic id (uuid.UUID), as in Kafka. Member ids keep insertion order.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

TopicId = uuid.UUID
# A member's partitions: topic id -> partition numbers.
Assignment = Mapping[TopicId, frozenset[int]]


class SubscriptionType(enum.Enum):
    """Kafka SubscriptionType: every member subscribed to the same topics, or not."""

    HOMOGENEOUS = "Homogeneous"
    HETEROGENEOUS = "Heterogeneous"


@dataclass(frozen=True, slots=True)
class MemberSubscription:
    rack_id: str | None
    instance_id: str | None
    subscribed_topic_ids: frozenset[TopicId]


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """Kafka GroupSpecImpl. `members` in a stable order (the group's member order);
    `assignments` holds each member's current *target* assignment (empty if none)."""

    members: Mapping[str, MemberSubscription]
    subscription_type: SubscriptionType
    assignments: Mapping[str, Assignment] = field(default_factory=dict)
    # Share groups (KIP-932): only these partitions may be assigned, the ones whose share state
    # is initialized (Kafka topicAssignablePartitionsMap); None: every partition.
    assignable: Mapping[TopicId, frozenset[int]] | None = None

    def member_assignment(self, member_id: str) -> Assignment:
        return self.assignments.get(member_id, {})

    def is_partition_assignable(self, topic_id: TopicId, partition: int) -> bool:
        """Kafka GroupSpecImpl.isPartitionAssignable."""
        if self.assignable is None:
            return True
        return partition in self.assignable.get(topic_id, ())

    def is_partition_assigned(self, topic_id: TopicId, partition: int) -> bool:
        return any(partition in a.get(topic_id, ()) for a in self.assignments.values())


class SubscribedTopicDescriber(Protocol):
    def num_partitions(self, topic_id: TopicId) -> int:
        """Partition count, or -1 if the topic does not exist."""
        ...

    def racks_for_partition(self, topic_id: TopicId, partition: int) -> frozenset[str]:
        """Racks of the partition's replicas (empty if unknown)."""
        ...


class AssignorError(Exception):
    """Kafka PartitionAssignorException: the assignor cannot compute an assignment."""


class PartitionAssignor(Protocol):
    """Kafka ConsumerGroupPartitionAssignor."""

    name: str

    def assign(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
        """Every member of `spec.members` -> its new target assignment (possibly empty)."""
        ...
