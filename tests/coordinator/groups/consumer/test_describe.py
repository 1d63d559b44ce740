"""What ConsumerGroupDescribe, ListGroups, DescribeGroups and OffsetDelete get from a consumer
group (Kafka ConsumerGroup / GroupMetadataManager); the offset checks are in
test_commit_validation.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coordinator.groups.consumer.describe import (
    DescribedConsumerGroup,
    DescribedConsumerMember,
    DescribedTopicPartitions,
    ListedConsumerGroup,
    describe_consumer_groups,
    describe_groups_entry,
    in_states,
    is_subscribed_to_topic,
    listed_group,
)
from coordinator.groups.consumer.records import ClassicMemberMetadata
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness


def stable_group() -> Harness:
    h = Harness()
    h.topics.add("foo", 2)
    h.topics.add("bar", 1)
    h.join("g", "m1", ["foo", "bar"], server_assignor="range", rack_id="r1", instance_id="i1")
    return h


def test_describe() -> None:
    h = stable_group()
    foo, bar = h.topics.by_name("foo"), h.topics.by_name("bar")
    assert foo is not None and bar is not None
    h.groups["classic"] = object()
    got = describe_consumer_groups(h.groups, h.topics, h.settings, ["g", "nope", "classic"])
    assigned = (
        DescribedTopicPartitions(bar.topic_id, "bar", (0,)),
        DescribedTopicPartitions(foo.topic_id, "foo", (0, 1)),
    )
    assert got == [
        DescribedConsumerGroup(
            group_id="g",
            group_state="Stable",
            group_epoch=1,
            assignment_epoch=1,
            assignor_name="range",
            members=(
                DescribedConsumerMember(
                    member_id="m1",
                    instance_id="i1",
                    rack_id="r1",
                    member_epoch=1,
                    client_id="client",
                    client_host="/127.0.0.1",
                    subscribed_topic_names=("bar", "foo"),
                    subscribed_topic_regex="",
                    assignment=assigned,
                    target_assignment=assigned,
                    member_type=1,
                ),
            ),
        ),
        DescribedConsumerGroup("nope", ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found."),
        DescribedConsumerGroup("classic", ErrorCode.GROUP_ID_NOT_FOUND, "Group classic is not a consumer group."),
    ]
    # A deleted topic disappears from the description; without a named assignor, the default.
    h.topics.delete("bar")
    h.heartbeat("g", "m1", 1, instance_id="i1", server_assignor=None)
    member = describe_consumer_groups(h.groups, h.topics, h.settings, ["g"])[0].members[0]
    assert member.assignment == (DescribedTopicPartitions(foo.topic_id, "foo", (0, 1)),)


def test_default_assignor_name_and_classic_member_type() -> None:
    h = Harness()
    h.join("g", "m1", [])
    group = h.group("g")
    assert describe_consumer_groups(h.groups, h.topics, h.settings, ["g"])[0].assignor_name == "uniform"
    group.members["m1"] = replace(group.members["m1"], classic_member_metadata=ClassicMemberMetadata(10, ()))
    assert describe_consumer_groups(h.groups, h.topics, h.settings, ["g"])[0].members[0].member_type == 0


def test_list_and_describe_groups_entries() -> None:
    h = stable_group()
    group = h.group("g")
    assert listed_group(group) == ListedConsumerGroup("g", "consumer", "Stable", "consumer")
    assert in_states(group, ["stable"]) and not in_states(group, ["empty", "assigning"])
    h.heartbeat("g", "m1", -1, instance_id="i1")
    assert listed_group(group).group_state == "Empty"
    assert describe_groups_entry("g", 6) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a classic group.", "Dead")
    assert describe_groups_entry("g", 5) == (ErrorCode.NONE, None, "Dead")


@pytest.mark.parametrize("topic,subscribed", [("foo", True), ("bar", True), ("other", False)])
def test_offset_delete_subscription_check(topic: str, subscribed: bool) -> None:
    assert is_subscribed_to_topic(stable_group().group("g"), topic) is subscribed
