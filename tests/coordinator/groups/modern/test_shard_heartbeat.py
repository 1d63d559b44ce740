"""ConsumerGroupHeartbeat on a real shard: records through the real replay, timers through the
shard's timers, topics from the topics image. Exact answers, records and timers, as Kafka's
GroupMetadataManagerTest asserts them; bad input answers Kafka's error, writes nothing and leaves
the group as it was."""

from __future__ import annotations

import copy

import pytest

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.member import MemberState
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from coordinator.groups.lifecycle import GroupShards
from coordinator.runtime.operation import OpContext
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import FAST, ConsumerTestContext, assignment, owned

TP = r.TopicPartitions


@pytest.fixture
def c() -> ConsumerTestContext:
    ctx = ConsumerTestContext(start_ms=1_000)
    ctx.registry.add("foo", 4)
    ctx.registry.add("bar", 2)
    return ctx


def test_first_member_joins_gets_every_partition_and_a_session_timer(c):
    foo = c.registry.topics["foo"].topic_id
    result = c.join_consumer("m1", ["foo"])
    assert (result.error_code, result.member_id, result.member_epoch) == (0, "m1", 1)
    assert result.heartbeat_interval_ms == 1000
    assert assignment(result) == {foo: [0, 1, 2, 3]}
    hash_foo = metadata_hash(["foo"], c.shard.topics)
    assert c.take_records() == [
        r.ConsumerGroupMemberMetadataRecord("g", "m1", None, None, "client", "/127.0.0.1", ("foo",), "", 5000, None),
        r.ConsumerGroupMetadataRecord("g", 1, hash_foo),
        r.ConsumerGroupTargetAssignmentMemberRecord("g", "m1", (TP(foo, (0, 1, 2, 3)),)),
        r.ConsumerGroupTargetAssignmentMetadataRecord("g", 1),
        # Each partition with the epoch it was assigned at (KIP-1251).
        r.ConsumerGroupCurrentMemberAssignmentRecord("g", "m1", 1, 0, 0, (TP(foo, (0, 1, 2, 3), (1, 1, 1, 1)),), ()),
    ]
    assert c.consumer_deadline("session-timeout-g-m1") == 11_000
    assert str(c.cgroup().state) == "Stable"
    # A plain heartbeat changes nothing and writes nothing; it only pushes the session timer.
    c.clock.advance(500)
    again = c.cg_heartbeat("m1", 1)
    assert (again.member_epoch, again.assignment) == (1, None) and c.take_records() == []
    assert c.consumer_deadline("session-timeout-g-m1") == 11_500


def test_second_member_waits_for_the_first_to_revoke(c):
    foo = c.registry.topics["foo"].topic_id
    first = c.join_consumer("m1", ["foo"])
    second = c.join_consumer("m2", ["foo"])
    assert (second.member_epoch, assignment(second)) == (2, {})  # partitions 2, 3 are still m1's
    assert c.cgroup().members["m2"].state == MemberState.UNRELEASED_PARTITIONS
    revoke = c.cg_heartbeat("m1", 1, owned=owned(first))
    assert (revoke.member_epoch, assignment(revoke)) == (1, {foo: [0, 1]})  # revoke first, same epoch
    assert c.consumer_deadline("rebalance-timeout-g-m1") == 1_000 + 5_000
    done = c.cg_heartbeat("m1", 1, owned=[(foo, [0, 1])])
    assert (done.member_epoch, done.assignment) == (2, None)
    assert c.consumer_deadline("rebalance-timeout-g-m1") is None
    got = c.cg_heartbeat("m2", 2, owned=[])
    assert (got.member_epoch, assignment(got)) == (2, {foo: [2, 3]})
    assert str(c.cgroup().state) == "Stable"


def test_a_member_that_does_not_revoke_in_time_is_fenced(c):
    first = c.join_consumer("m1", ["foo"])
    c.join_consumer("m2", ["foo"])
    c.cg_heartbeat("m1", 1, owned=owned(first))
    c.take_records()
    c.sleep(5_000)  # the rebalance timeout
    assert "m1" not in c.cgroup().members and c.cgroup().group_epoch == 3
    records = c.take_records()
    assert records[:3] == [
        r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m1"),
        r.ConsumerGroupTargetAssignmentMemberTombstone("g", "m1"),
        r.ConsumerGroupMemberMetadataTombstone("g", "m1"),
    ]
    assert records[3] == r.ConsumerGroupMetadataRecord("g", 3, metadata_hash(["foo"], c.shard.topics))
    assert c.consumer_deadline("session-timeout-g-m1") is None


def test_session_timeout_fences_a_silent_member(c):
    c.join_consumer("m1", ["foo"])
    c.join_consumer("m2", ["bar"])
    c.take_records()
    c.clock.advance(9_000)
    c.cg_heartbeat("m2", 2)
    c.sleep(1_000)  # m1's session (10 s) is over; m2 heartbeated at 10 s
    assert set(c.cgroup().members) == {"m2"}
    assert c.take_records()[-1] == r.ConsumerGroupMetadataRecord("g", 3, metadata_hash(["bar"], c.shard.topics))


def test_leave_and_static_leave(c):
    c.join_consumer("m1", ["foo"])
    c.join_consumer("s1", ["foo"], instance_id="i1")
    c.take_records()
    left = c.cg_heartbeat("m1", -1)
    assert (left.error_code, left.member_id, left.member_epoch) == (0, "m1", -1)
    assert [type(x).__name__ for x in c.take_records()] == [
        "ConsumerGroupCurrentMemberAssignmentTombstone",
        "ConsumerGroupTargetAssignmentMemberTombstone",
        "ConsumerGroupMemberMetadataTombstone",
        "ConsumerGroupMetadataRecord",
    ]
    static = c.cg_heartbeat("s1", -2, instance_id="i1")
    assert (static.member_id, static.member_epoch) == ("s1", -2)
    (record,) = c.take_records()
    assert isinstance(record, r.ConsumerGroupCurrentMemberAssignmentRecord) and record.member_epoch == -2
    # The instance comes back under a new member id within its session: same partitions.
    back = c.join_consumer("s2", ["foo"], instance_id="i1")
    foo = c.registry.topics["foo"].topic_id
    assert (back.member_id, assignment(back)) == ("s2", {foo: [0, 1, 2, 3]})
    assert set(c.cgroup().members) == {"s2"}


def test_describe_shows_epochs_states_and_both_assignments(c):
    foo = c.registry.topics["foo"].topic_id
    c.join_consumer("m1", ["foo"])
    c.join_consumer("m2", ["foo"], server_assignor="range")
    described, missing, empty = c.describe_consumer("g", "nope", "")
    assert (described.group_state, described.group_epoch, described.assignment_epoch, described.assignor_name) == (
        "Reconciling",
        2,
        2,
        "range",
    )
    m1, m2 = described.members
    assert [(p.topic_name, p.partitions) for p in m1.assignment] == [("foo", (0, 1, 2, 3))]
    assert [(p.topic_id, p.partitions) for p in m1.target_assignment] == [(foo, (0, 1))]
    assert (m2.member_epoch, m2.assignment, m2.member_type) == (2, (), 1)
    assert (missing.error_code, missing.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")
    assert empty.error_code == ErrorCode.INVALID_GROUP_ID


def test_a_new_partition_of_a_subscribed_topic_bumps_the_epoch(c):
    foo = c.registry.topics["foo"].topic_id
    first = c.join_consumer("m1", ["foo"])
    c.take_records()
    c.registry.grow("foo", 6)
    grown = c.cg_heartbeat("m1", 1, owned=owned(first))
    assert (grown.member_epoch, assignment(grown)) == (2, {foo: [0, 1, 2, 3, 4, 5]})
    assert c.take_records()[0] == r.ConsumerGroupMetadataRecord("g", 2, metadata_hash(["foo"], c.shard.topics))


def test_regex_subscription_resolves_then_follows_new_topics():
    c = ConsumerTestContext(
        ConsumerGroupSettings(
            session_timeout_ms=60_000,
            heartbeat_interval_ms=1_000,
            min_heartbeat_interval_ms=100,
            regex_batch_refresh_min_interval_ms=1_000,
        )
    )
    foo = c.registry.add("foo", 2)
    c.registry.add("other", 1)
    joined = c.join_consumer("m1", subscribed_topic_regex="f.*")
    assert (joined.member_epoch, assignment(joined)) == (1, {})  # the regex is not resolved yet
    c.sleep(0)  # the resolution runs as its own operation, due at once
    assert c.take_records()[-2:] == [
        r.ConsumerGroupRegularExpressionRecord("g", "f.*", ("foo",), c.shard.topics.version, 0),
        r.ConsumerGroupMetadataRecord("g", 2, metadata_hash(["foo"], c.shard.topics)),
    ]
    got = c.cg_heartbeat("m1", 1, owned=[])
    assert (got.member_epoch, assignment(got)) == (2, {foo: [0, 1]})
    fab = c.registry.add("fab", 3)
    c.clock.advance(1_001)
    c.cg_heartbeat("m1", 2, owned=owned(got))  # sees a newer topics image: resolves again
    c.sleep(0)
    more = c.cg_heartbeat("m1", 2, owned=owned(got))
    assert (more.member_epoch, assignment(more)) == (3, {foo: [0, 1], fab: [0, 1, 2]})


def test_after_a_load_every_member_gets_a_session_timer(c):
    c.join_consumer("m1", ["foo"])
    shard = c.fresh_shard()
    assert shard.consumer_group("g") == c.cgroup()
    GroupShards(c.shard.config).on_loaded(OpContext(shard, 50_000))
    assert shard.timers.deadline(("consumer", "session-timeout-g-m1")) == 60_000


# -- bad input: Kafka's error, nothing written, the group unharmed -----------------------------


def _unharmed(c: ConsumerTestContext, send, code: int, message: str) -> None:
    before = copy.deepcopy(c.shard.groups)
    c.take_records()
    result = send()
    assert (result.error_code, result.error_message) == (code, message)
    assert c.take_records() == []
    assert c.shard.groups == before


def test_unknown_assignor(c):
    c.join_consumer("m1", ["foo"])
    _unharmed(
        c,
        lambda: c.cg_heartbeat("m1", 1, server_assignor="sticky"),
        ErrorCode.UNSUPPORTED_ASSIGNOR,
        "ServerAssignor sticky is not supported. Supported assignors: uniform, range.",
    )


def test_invalid_regex(c):
    c.join_consumer("m1", ["foo"])
    code = ErrorCode.INVALID_REGULAR_EXPRESSION
    result = c.cg_heartbeat("m2", 0, owned=[], rebalance_timeout_ms=5000, subscribed_topic_regex="(foo")
    assert result.error_code == code and result.error_message.startswith(
        "SubscribedTopicRegex `(foo` is not a valid regular expression: "
    )
    _unharmed(
        c,
        lambda: c.cg_heartbeat("m1", 1, subscribed_topic_regex="[a-"),
        code,
        c.cg_heartbeat("m1", 1, subscribed_topic_regex="[a-").error_message,
    )


def test_epoch_from_the_future(c):
    c.join_consumer("m1", ["foo"])
    _unharmed(
        c,
        lambda: c.cg_heartbeat("m1", 5),
        ErrorCode.FENCED_MEMBER_EPOCH,
        "The consumer group member has a greater member epoch (5) than the one known by the group "
        "coordinator (1). The member must abandon all its partitions and rejoin.",
    )


def test_owned_partition_the_member_never_had(c):
    foo = c.registry.topics["foo"].topic_id
    first = c.join_consumer("m1", ["foo"])
    c.join_consumer("m2", ["foo"])
    c.cg_heartbeat("m1", 1, owned=owned(first))
    c.cg_heartbeat("m1", 1, owned=[(foo, [0, 1])])  # m1 is at epoch 2, previous 1
    # At the previous epoch, only a subset of what it has is accepted (a lost answer).
    _unharmed(
        c,
        lambda: c.cg_heartbeat("m1", 1, owned=[(foo, [0, 3])]),
        ErrorCode.FENCED_MEMBER_EPOCH,
        "The consumer group member has a smaller member epoch (1) than the one known by the group "
        "coordinator (2). The member must abandon all its partitions and rejoin.",
    )
    assert c.cg_heartbeat("m1", 1, owned=[(foo, [0])]).member_epoch == 2


def test_heartbeat_for_an_unknown_member(c):
    c.join_consumer("m1", ["foo"])
    _unharmed(
        c, lambda: c.cg_heartbeat("ghost", 1), ErrorCode.UNKNOWN_MEMBER_ID, "Member ghost is not a member of group g."
    )
    _unharmed(
        c,
        lambda: c.cg_heartbeat("ghost", 1, group_id="nope"),
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Consumer group nope not found.",
    )


def test_group_max_size(c):
    c = ConsumerTestContext(ConsumerGroupSettings(**{**FAST.__dict__, "max_size": 1}))
    c.registry.add("foo", 1)
    c.join_consumer("m1", ["foo"])
    _unharmed(
        c,
        lambda: c.join_consumer("m2", ["foo"]),
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        "The consumer group has reached its maximum capacity of 1 members.",
    )
