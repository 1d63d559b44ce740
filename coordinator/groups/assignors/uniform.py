"""Kafka's UniformAssignor ("uniform", the first of group.consumer.assignors, so the default).

Balanced and sticky: every member within one partition of the others where subscriptions allow,
keeping as much of its current target assignment as that balance permits. Kafka picks the
builder from the group's subscription type: uniform_homogeneous.py when every member subscribes
to the same topics, uniform_heterogeneous.py otherwise. Neither is rack-aware in Kafka 4.x (an
open proposal, KAFKA-19909, would add racks to the homogeneous one), so racks are ignored.
"""

from __future__ import annotations

from coordinator.groups.assignors.current import is_homogeneous
from coordinator.groups.assignors.spec import GroupSpec, SubscribedTopicDescriber, SubscriptionType, TopicId
from coordinator.groups.assignors.uniform_heterogeneous import assign_heterogeneous
from coordinator.groups.assignors.uniform_homogeneous import assign_homogeneous


class UniformAssignor:
    name = "uniform"

    def assign(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[TopicId, frozenset[int]]]:
        if not spec.members:
            return {}
        # Kafka trusts the declared type. The homogeneous builder gives every member the first
        # member's topics, so a group wrongly declared homogeneous would get partitions of
        # topics it does not subscribe to: we check (one pass over the members) and fall back.
        if spec.subscription_type is SubscriptionType.HOMOGENEOUS and is_homogeneous(spec):
            return assign_homogeneous(spec, topics)
        return assign_heterogeneous(spec, topics)
