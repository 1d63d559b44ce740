"""OffsetDelete: ClassicGroup.validateOffsetDelete and isSubscribedToTopic, tombstones only for
offsets that exist."""

from coordinator.groups.offset_requests import OffsetDeleteParams, OffsetDeleteResult
from coordinator.groups.records import OffsetTombstone
from coordinator.groups.state import GroupState
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext

from .offset_helpers import commit, consumer_protocols


def test_unknown_group():
    # (An empty group id never reaches the operation: GroupService answers INVALID_GROUP_ID.)
    c = GroupTestContext()
    assert c.send(OffsetDeleteParams("g", [("t", [0])])) == OffsetDeleteResult(ErrorCode.GROUP_ID_NOT_FOUND)


def test_empty_group_deletes_and_tombstones_only_existing_offsets():
    c = GroupTestContext()
    c.send(commit(offsets={0: 1, 1: 2}))
    c.take_records()
    result = c.send(OffsetDeleteParams("g", [("t", [0, 5]), ("u", [0])]))
    assert result == OffsetDeleteResult(
        ErrorCode.NONE, [("t", [(0, ErrorCode.NONE), (5, ErrorCode.NONE)]), ("u", [(0, ErrorCode.NONE)])]
    )
    assert c.take_records() == [OffsetTombstone("g", "t", 0)]
    assert c.shard.offsets.get("g", "t", 0) is None
    assert c.shard.offsets.get("g", "t", 1) is not None
    assert c.group().is_in(GroupState.EMPTY)  # the group stays until retention removes it


def test_stable_consumer_group_per_topic_subscription():
    c = GroupTestContext()
    (m,) = c.stable_group(1, protocols=consumer_protocols("t"))
    c.send(commit(topic="t", generation=1, member=m))
    c.send(commit(topic="old", generation=1, member=m))
    c.take_records()
    result = c.send(OffsetDeleteParams("g", [("t", [0]), ("old", [0])]))
    assert result == OffsetDeleteResult(
        ErrorCode.NONE, [("t", [(0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)]), ("old", [(0, ErrorCode.NONE)])]
    )
    assert c.take_records() == [OffsetTombstone("g", "old", 0)]


def test_group_with_members_of_another_protocol_type_is_non_empty():
    c = GroupTestContext()
    c.stable_group(1, protocol_type="connect")
    assert c.send(OffsetDeleteParams("g", [("t", [0])])) == OffsetDeleteResult(ErrorCode.NON_EMPTY_GROUP)


def test_consumer_group_with_unreadable_subscription_counts_as_subscribed():
    c = GroupTestContext()
    c.stable_group(1, protocols=[("range", b"\xff")])
    assert c.group().subscribed_topics is None
    result = c.send(OffsetDeleteParams("g", [("t", [0])]))
    assert result.topics == [("t", [(0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)])]


def test_a_loaded_group_knows_its_subscriptions():
    # ClassicGroup.fromRecord computes subscribedTopics: OffsetDelete and retention after a
    # restart see the same subscriptions as before it.
    from coordinator.groups.replay import group_from_record

    c = GroupTestContext()
    (m,) = c.stable_group(1, protocols=consumer_protocols("t", "u"))
    loaded = group_from_record(c.group().snapshot(), 0)
    assert loaded.subscribed_topics == frozenset({"t", "u"})
    assert loaded.is_subscribed_to_topic("t") and not loaded.is_subscribed_to_topic("x")
