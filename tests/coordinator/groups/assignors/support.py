"""Test helpers for the assignors: a topic describer, spec builders, and the property checks
Kafka's tests use (checkValidityAndBalance) plus stickiness comparisons."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from coordinator.groups.assignors.spec import Assignment, GroupSpec, MemberSubscription, SubscriptionType, TopicId

Result = Mapping[str, Mapping[TopicId, frozenset[int]]]


def kafka_uuid(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString: URL-safe base64 of the 16 bytes, unpadded."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


@dataclass
class Topics:
    """SubscribedTopicDescriber over a dict; racks are the partition's replicas' racks."""

    counts: dict[TopicId, int]
    racks: dict[TopicId, list[frozenset[str]]] = field(default_factory=dict)

    def num_partitions(self, topic_id: TopicId) -> int:
        return self.counts.get(topic_id, -1)

    def racks_for_partition(self, topic_id: TopicId, partition: int) -> frozenset[str]:
        per_topic = self.racks.get(topic_id)
        return per_topic[partition] if per_topic else frozenset()


def member(topics: Iterable[TopicId], rack: str | None = None, instance: str | None = None) -> MemberSubscription:
    return MemberSubscription(rack_id=rack, instance_id=instance, subscribed_topic_ids=frozenset(topics))


def spec(
    members: Mapping[str, MemberSubscription],
    assignments: Mapping[str, Assignment] | None = None,
    subscription_type: SubscriptionType | None = None,
) -> GroupSpec:
    if subscription_type is None:
        subs = {m.subscribed_topic_ids for m in members.values()}
        subscription_type = SubscriptionType.HOMOGENEOUS if len(subs) <= 1 else SubscriptionType.HETEROGENEOUS
    return GroupSpec(members=dict(members), subscription_type=subscription_type, assignments=dict(assignments or {}))


def sizes(result: Result) -> dict[str, int]:
    return {m: sum(len(p) for p in a.values()) for m, a in result.items()}


def check_valid(group: GroupSpec, topics: Topics, result: Result) -> None:
    """Every member answered; each partition of each subscribed existing topic exactly once, to a
    subscriber; nothing else; no empty partition sets."""
    assert list(result) == list(group.members), "every member, in member order"
    owner: dict[tuple[TopicId, int], str] = {}
    for member_id, assignment in result.items():
        subscribed = group.members[member_id].subscribed_topic_ids
        for topic_id, partitions in assignment.items():
            assert topic_id in subscribed, f"{member_id} got {topic_id} it does not subscribe to"
            assert partitions, f"{member_id} has an empty set for {topic_id}"
            assert isinstance(partitions, frozenset)
            for p in partitions:
                assert 0 <= p < topics.counts[topic_id], f"{topic_id}-{p} does not exist"
                assert (topic_id, p) not in owner, f"{topic_id}-{p} to {owner[(topic_id, p)]} and {member_id}"
                owner[(topic_id, p)] = member_id
    wanted = {t for m in group.members.values() for t in m.subscribed_topic_ids}
    expected = {(t, p) for t in wanted for p in range(topics.counts[t])}
    assert set(owner) == expected, f"unassigned: {sorted(map(str, expected - set(owner)))[:5]}"


def check_balanced(result: Result) -> None:
    counts = sizes(result).values()
    assert max(counts) - min(counts) <= 1, f"sizes {sorted(counts)}"


def as_assignments(result: Result) -> dict[str, Assignment]:
    return {m: a for m, a in result.items()}
