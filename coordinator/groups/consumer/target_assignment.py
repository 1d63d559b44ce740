"""A new target assignment for a group epoch (Kafka TargetAssignmentBuilder.ConsumerTargetAssignmentBuilder).

The assignor sees every member (with the updated member as it will be after this operation, a
replaced static member left out and its target handed to its successor), each member's current
target, and the topics; it returns each member's new target. The result's records are one
ConsumerGroupTargetAssignmentMember per member whose target changed (or who had none), then the
ConsumerGroupTargetAssignmentMetadata with the new epoch. Members are given to the assignor in
the group's member order, new members last (Kafka uses a HashMap; we fix an order).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coordinator.groups.assignors.spec import (
    GroupSpec,
    MemberSubscription,
    PartitionAssignor,
    SubscribedTopicDescriber,
    SubscriptionType,
)
from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.group import ResolvedRegularExpression
from coordinator.groups.consumer.member import (
    EMPTY_ASSIGNMENT,
    Assignment,
    ConsumerGroupMember,
    normalize,
    to_topic_partitions,
)
from coordinator.groups.consumer.records import (
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMetadataRecord,
)


class TopicsDescriber(SubscribedTopicDescriber):
    """Kafka SubscribedTopicDescriberImpl over the topics view."""

    def __init__(self, topics: TopicsView) -> None:
        self.topics = topics

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        topic = self.topics.by_id(topic_id)
        return -1 if topic is None else topic.num_partitions

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        topic = self.topics.by_id(topic_id)
        return frozenset() if topic is None else frozenset(topic.partition_racks.get(partition, ()))


@dataclass
class TargetAssignmentResult:
    records: list[Any]
    target: dict[str, dict[uuid.UUID, frozenset[int]]]


@dataclass
class TargetAssignmentBuilder:
    group_id: str
    group_epoch: int
    assignor: PartitionAssignor
    topics: TopicsView
    members: Mapping[str, ConsumerGroupMember] = field(default_factory=dict)
    static_members: Mapping[str, str] = field(default_factory=dict)
    subscription_type: SubscriptionType = SubscriptionType.HOMOGENEOUS
    target_assignment: Mapping[str, Assignment] = field(default_factory=dict)
    resolved_regexes: Mapping[str, ResolvedRegularExpression] = field(default_factory=dict)
    updated: dict[str, ConsumerGroupMember | None] = field(default_factory=dict)

    def add_or_update_member(self, member: ConsumerGroupMember) -> TargetAssignmentBuilder:
        self.updated[member.member_id] = member
        return self

    def remove_member(self, member_id: str) -> TargetAssignmentBuilder:
        self.updated[member_id] = None
        return self

    def _subscription(self, member: ConsumerGroupMember) -> MemberSubscription:
        names: frozenset[str] = member.subscribed_topic_names
        if member.regex is not None:
            resolved = self.resolved_regexes.get(member.regex)
            if resolved is not None:
                names = names | resolved.topics
        ids = frozenset(t.topic_id for t in map(self.topics.by_name, names) if t is not None)
        return MemberSubscription(rack_id=member.rack_id, instance_id=member.instance_id, subscribed_topic_ids=ids)

    def build(self) -> TargetAssignmentResult:
        """Raises the assignor's AssignorError when it cannot assign."""
        specs: dict[str, MemberSubscription] = {}
        current: dict[str, Assignment] = {}
        for member_id, member in self.members.items():
            specs[member_id] = self._subscription(member)
            current[member_id] = self.target_assignment.get(member_id, EMPTY_ASSIGNMENT)
        for member_id, updated in self.updated.items():
            if updated is None:
                specs.pop(member_id, None)
                current.pop(member_id, None)
                continue
            assignment = self.target_assignment.get(member_id, EMPTY_ASSIGNMENT)
            if updated.instance_id is not None:
                # A new static member replaces a departed one and takes over its target.
                previous = self.static_members.get(updated.instance_id)
                if previous is not None and previous != member_id:
                    assignment = self.target_assignment.get(previous, EMPTY_ASSIGNMENT)
            specs[member_id] = self._subscription(updated)
            current[member_id] = assignment
        spec = GroupSpec(members=specs, subscription_type=self.subscription_type, assignments=current)
        new = self.assignor.assign(spec, TopicsDescriber(self.topics))
        records: list[Any] = []
        target: dict[str, dict[uuid.UUID, frozenset[int]]] = {}
        for member_id in specs:
            new_assignment = normalize(new.get(member_id, {}))
            target[member_id] = new_assignment
            old = self.target_assignment.get(member_id)
            if old is None or normalize(old) != new_assignment:
                records.append(
                    ConsumerGroupTargetAssignmentMemberRecord(
                        self.group_id, member_id, to_topic_partitions(new_assignment)
                    )
                )
        records.append(ConsumerGroupTargetAssignmentMetadataRecord(self.group_id, self.group_epoch))
        return TargetAssignmentResult(records, target)
