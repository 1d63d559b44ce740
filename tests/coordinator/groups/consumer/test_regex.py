"""Regex subscriptions: RE2 semantics, INVALID_REGULAR_EXPRESSION, resolution as a separate
operation, the refresh rules, and topics created later joining the subscription (Kafka 4.x
GroupMetadataManager regex handling)."""

from __future__ import annotations

import pytest

from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import ConsumerGroupState
from coordinator.groups.consumer.heartbeat import ConsumerHeartbeatResult
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupMetadataRecord,
    ConsumerGroupRegularExpressionRecord,
    ConsumerGroupRegularExpressionTombstone,
    TopicPartitions,
)
from coordinator.groups.consumer.regex import resolve, throw_if_invalid
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness

G = "g"
KEY = f"{G}-regex"


def join_regex(h: Harness, member_id: str, regex: str) -> ConsumerHeartbeatResult:
    return h.heartbeat(G, member_id, 0, owned=(), rebalance_timeout_ms=5000, subscribed_topic_regex=regex)


def test_re2_full_match_semantics() -> None:
    names = ["foo", "foo1", "foo.bar", "xfoo", "FOO2"]
    assert resolve(["foo"], names) == {"foo": frozenset({"foo"})}
    assert resolve(["foo.*"], names) == {"foo.*": frozenset({"foo", "foo1", "foo.bar"})}
    assert resolve(["(?i)foo\\d"], names) == {"(?i)foo\\d": frozenset({"foo1", "FOO2"})}
    assert resolve(["foo\\.bar|xfoo"], names) == {"foo\\.bar|xfoo": frozenset({"foo.bar", "xfoo"})}


@pytest.mark.parametrize("regex", ["(?<=a)b", "(a", "a{2,1}", "\\1(a)", "[z-a]"])
def test_patterns_re2_rejects(regex: str) -> None:
    """Lookbehind and backreferences are valid for Python's `re` but not for RE2/RE2J."""
    with pytest.raises(ConsumerGroupError) as info:
        throw_if_invalid(regex)
    assert info.value.code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert info.value.message.startswith(f"SubscribedTopicRegex `{regex}` is not a valid regular expression: ")


def test_invalid_regex_is_answered_and_nothing_written() -> None:
    h = Harness()
    r = join_regex(h, "m1", "(foo")
    assert r.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert h.log == [] and h.groups == {} and not h.timers.is_scheduled(KEY)


def test_regex_resolved_by_a_later_operation_then_assigned() -> None:
    h = Harness()
    foo1, foo2 = h.topics.add("foo1", 2), h.topics.add("foo2", 1)
    h.topics.add("bar", 3)
    r = join_regex(h, "m1", "foo.*")
    # The group leaves epoch 0, but the unresolved regex subscribes to nothing yet.
    assert (r.member_epoch, r.assignment) == (1, ())
    assert [type(x).__name__ for x in h.records] == [
        "ConsumerGroupMemberMetadataRecord",
        "ConsumerGroupMetadataRecord",
        "ConsumerGroupTargetAssignmentMemberRecord",
        "ConsumerGroupTargetAssignmentMetadataRecord",
        "ConsumerGroupCurrentMemberAssignmentRecord",
    ]
    assert h.timers.deadline(KEY) == 0
    h.advance(100)
    fired = h.log[-2:]
    assert fired == [
        ConsumerGroupRegularExpressionRecord(G, "foo.*", ("foo1", "foo2"), h.topics.version, 100),
        ConsumerGroupMetadataRecord(G, 2, metadata_hash(["foo1", "foo2"], h.topics)),
    ]
    group = h.group(G)
    assert group.state == ConsumerGroupState.ASSIGNING and set(group.subscribed_topic_names) == {"foo1", "foo2"}
    r = h.heartbeat(G, "m1", 1)
    assert (r.member_epoch, r.assignment) == (2, (TopicPartitions(foo1, (0, 1)), TopicPartitions(foo2, (0,))))
    assert h.rebuilt() == h.groups


def test_second_member_with_a_resolved_regex_bumps_at_once() -> None:
    h = Harness()
    h.topics.add("foo1", 4)
    join_regex(h, "m1", "foo.*")
    h.advance(0)
    h.heartbeat(G, "m1", 1)
    r = join_regex(h, "m2", "foo.*")
    assert r.member_epoch == 3
    assert not h.timers.is_scheduled(KEY)  # resolved less than 10 s ago: no refresh
    assert h.group(G).subscribed_regexes == {"foo.*": 2}
    spec = h.assignors["uniform"].calls[-1]
    assert spec.subscription_type.name == "HOMOGENEOUS"


def test_created_topic_joins_after_the_refresh_interval() -> None:
    h = Harness()
    foo1 = h.topics.add("foo1", 1)
    join_regex(h, "m1", "foo.*")
    h.advance(0)
    h.heartbeat(G, "m1", 1)
    foo2 = h.topics.add("foo2", 2)  # TopicsView.version grows
    h.advance(5000)
    h.heartbeat(G, "m1", 2, owned=[(foo1, [0])])
    assert not h.timers.is_scheduled(KEY)  # within 10 s of the last resolution
    h.advance(5001)
    h.heartbeat(G, "m1", 2, owned=[(foo1, [0])])
    assert h.timers.deadline(KEY) == 10_001
    h.advance(0)
    assert h.log[-2] == ConsumerGroupRegularExpressionRecord(G, "foo.*", ("foo1", "foo2"), h.topics.version, 10_001)
    r = h.heartbeat(G, "m1", 2, owned=[(foo1, [0])])
    assert (r.member_epoch, r.assignment) == (3, (TopicPartitions(foo1, (0,)), TopicPartitions(foo2, (0, 1))))


def test_periodic_refresh_rewrites_without_bump() -> None:
    h = Harness(ConsumerGroupSettings(session_timeout_ms=10**9))
    h.topics.add("foo1", 1)
    join_regex(h, "m1", "foo.*")
    h.advance(0)
    h.heartbeat(G, "m1", 1)
    h.advance(600_001)
    h.heartbeat(G, "m1", 2)
    h.advance(0)
    assert h.last is not None
    assert h.log[-1] == ConsumerGroupRegularExpressionRecord(G, "foo.*", ("foo1",), h.topics.version, 600_001)
    assert h.group(G).group_epoch == 2


def test_leaving_the_regex_deletes_it_and_revokes_its_topics() -> None:
    h = Harness()
    foo1 = h.topics.add("foo1", 2)
    h.topics.add("bar", 1)
    join_regex(h, "m1", "foo.*")
    h.advance(0)
    h.heartbeat(G, "m1", 1)
    r = h.heartbeat(G, "m1", 2, subscribed_topic_regex="", subscribed_topic_names=["bar"], owned=[(foo1, [0, 1])])
    assert ConsumerGroupRegularExpressionTombstone(G, "foo.*") in h.records
    assert r.error_code == 0 and h.group(G).resolved_regexes == {}
    member = h.group(G).members["m1"]
    assert member.partitions_pending_revocation == {foo1: frozenset({0, 1})}
    assert h.rebuilt() == h.groups


def test_last_regex_user_leaving_tombstones_the_regex() -> None:
    h = Harness()
    h.topics.add("foo1", 2)
    join_regex(h, "m1", "foo.*")
    h.advance(0)
    h.heartbeat(G, "m1", -1)
    assert h.records[3] == ConsumerGroupRegularExpressionTombstone(G, "foo.*")
    assert h.records[4] == ConsumerGroupMetadataRecord(G, 3, 0)
    assert h.rebuilt() == h.groups


def test_refresh_for_a_deleted_group_does_nothing() -> None:
    h = Harness()
    h.topics.add("foo1", 2)
    join_regex(h, "m1", "foo.*")
    h.groups.pop(G)
    assert h.advance(0) == []
