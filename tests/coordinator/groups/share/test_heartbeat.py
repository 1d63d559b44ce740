"""ShareGroupHeartbeat on a shard: Kafka's GroupMetadataManagerTest share-group cases (joins, the
records a join writes, leaving, max size, unknown ids, epochs) and the bad-input table of
throwIfShareGroupHeartbeatRequestIsInvalid, each with its exact answer and records."""

from __future__ import annotations

import pytest

from coordinator.groups.consumer.member import MemberState
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.share import records as r
from coordinator.groups.share.group import ShareGroupState
from coordinator.groups.share.state_partitions import StateInit
from protocol.errors import ErrorCode
from tests.coordinator.groups.share.support import ShareTestContext


def tps(*items: tuple[object, list[int]]) -> tuple[TopicPartitions, ...]:
    return tuple(TopicPartitions(t, tuple(p)) for t, p in sorted(items, key=lambda i: i[0].bytes))  # type: ignore[attr-defined]


def info(topic_id, name, parts) -> r.TopicPartitionsInfo:
    return r.TopicPartitionsInfo(topic_id, name, tuple(parts))


def test_a_join_writes_kafkas_records_and_asks_to_initialize_every_subscribed_partition():
    """testShareGroupMemberJoinsEmptyGroupWithAssignments, with the simple assignor: nothing is
    initialized yet, so the first answer carries an empty assignment."""
    c = ShareTestContext()
    foo, bar = c.registry.add("foo", 6), c.registry.add("bar", 3)
    result, init = c.sg("m1", 0, topics=["foo", "bar"])
    assert (result.error_code, result.member_id, result.member_epoch, result.heartbeat_interval_ms) == (
        0,
        "m1",
        1,
        1_000,
    )
    assert result.assignment == ()
    assert init == StateInit("g", 1, {foo: dict.fromkeys(range(6), -1), bar: dict.fromkeys(range(3), -1)})
    hash_ = metadata_hash(["bar", "foo"], c.shard.topics)
    assert c.take_records() == [
        r.ShareGroupMemberMetadataRecord("g", "m1", None, "client", "/127.0.0.1", ("bar", "foo")),
        r.ShareGroupMetadataRecord("g", 1, hash_),
        r.ShareGroupTargetAssignmentMemberRecord("g", "m1", ()),
        r.ShareGroupTargetAssignmentMetadataRecord("g", 1),
        r.ShareGroupCurrentMemberAssignmentRecord("g", "m1", 1, 0, MemberState.STABLE, ()),
        r.ShareGroupStatePartitionMetadataRecord(
            "g",
            tuple(sorted([info(foo, "foo", range(6)), info(bar, "bar", range(3))], key=lambda i: i.topic_id.int)),
            (),
            (),
        ),
    ]
    # The share coordinator initialized them; the next heartbeat bumps the epoch and assigns.
    c.initialized(init)
    assert c.take_records() == [
        r.ShareGroupStatePartitionMetadataRecord(
            "g",
            (),
            tuple(sorted([info(foo, "foo", range(6)), info(bar, "bar", range(3))], key=lambda i: i.topic_id.int)),
            (),
        )
    ]
    again, more = c.sg("m1", 1)
    assert more is None
    assert (again.member_epoch, again.assignment) == (2, tps((foo, list(range(6))), (bar, [0, 1, 2])))
    assert c.take_records() == [
        r.ShareGroupMetadataRecord("g", 2, hash_),
        r.ShareGroupTargetAssignmentMemberRecord("g", "m1", tps((foo, list(range(6))), (bar, [0, 1, 2]))),
        r.ShareGroupTargetAssignmentMetadataRecord("g", 2),
        r.ShareGroupCurrentMemberAssignmentRecord(
            "g", "m1", 2, 1, MemberState.STABLE, tps((foo, list(range(6))), (bar, [0, 1, 2]))
        ),
    ]
    assert c.sgroup().state == ShareGroupState.STABLE


def test_members_share_partitions_when_they_outnumber_them():
    c = ShareTestContext()
    foo = c.registry.add("foo", 1)
    c.sjoin("m1", ["foo"])
    second = c.sjoin("m2", ["foo"])
    assert second.assignment == tps((foo, [0]))
    first, _ = c.sg("m1", c.sgroup().members["m1"].member_epoch)
    assert first.member_epoch == second.member_epoch and first.assigned == tps((foo, [0]))
    assert first.assignment is None  # m1 already had it: nothing to send


def test_members_split_partitions_and_rebalance_when_one_leaves():
    c = ShareTestContext()
    foo = c.registry.add("foo", 3)
    c.sjoin("m1", ["foo"])
    c.sjoin("m2", ["foo"])
    epoch = c.sgroup().group_epoch
    owned = {m: c.sg(m, c.sgroup().members[m].member_epoch)[0].assigned for m in ("m1", "m2")}
    assert sorted(len(a[0].partitions) for a in owned.values()) == [1, 2]
    assert {p for a in owned.values() for p in a[0].partitions} == {0, 1, 2}
    c.take_records()
    result, init = c.sg("m2", -1)
    assert (result.error_code, result.member_id, result.member_epoch, init) == (0, "m2", -1, None)
    assert c.take_records() == [
        r.ShareGroupCurrentMemberAssignmentTombstone("g", "m2"),
        r.ShareGroupTargetAssignmentMemberTombstone("g", "m2"),
        r.ShareGroupMemberMetadataTombstone("g", "m2"),
        r.ShareGroupMetadataRecord("g", epoch + 1, metadata_hash(["foo"], c.shard.topics)),
    ]
    back, _ = c.sg("m1", c.sgroup().members["m1"].member_epoch)
    assert back.assignment == tps((foo, [0, 1, 2]))


def test_an_unchanged_heartbeat_writes_nothing_and_sends_no_assignment():
    c = ShareTestContext()
    c.registry.add("foo", 2)
    joined = c.sjoin("m1", ["foo"])
    c.take_records()
    result, init = c.sg("m1", joined.member_epoch)
    assert (result.error_code, result.member_epoch, result.assignment, init) == (0, joined.member_epoch, None, None)
    assert c.take_records() == []
    full, _ = c.sg("m1", joined.member_epoch, topics=["foo"])  # a full request gets it again
    assert full.assignment == joined.assignment and c.take_records() == []


def test_the_previous_epoch_is_accepted_and_others_are_fenced():
    """throwIfShareGroupMemberEpochIsInvalid: the answer that bumped the epoch may be lost."""
    c = ShareTestContext()
    c.registry.add("foo", 2)
    c.registry.add("bar", 2)
    joined = c.sjoin("m1", ["foo"])
    changed, init = c.sg("m1", joined.member_epoch, topics=["bar"])  # a subscription change: an epoch
    c.initialized(init)
    c.sg("m1", changed.member_epoch)  # the initialization: another
    member = c.sgroup().members["m1"]
    assert (member.member_epoch, member.previous_member_epoch) == (joined.member_epoch + 2, joined.member_epoch + 1)
    c.take_records()
    previous, _ = c.sg("m1", member.previous_member_epoch)
    assert previous.error_code == 0 and previous.member_epoch == member.member_epoch
    cases = [(member.member_epoch + 1, "greater"), (member.previous_member_epoch - 1, "smaller"), (0, "smaller")]
    for epoch, text in cases:  # Kafka 4.2: epoch 0 is no exception for a known share member
        fenced, _ = c.sg("m1", epoch, topics=["bar"])
        assert fenced.error_code == ErrorCode.FENCED_MEMBER_EPOCH and text in fenced.error_message
    assert c.take_records() == []


def test_a_rack_change_is_recorded_without_an_epoch_bump():
    c = ShareTestContext()
    c.registry.add("foo", 2)
    joined = c.sjoin("m1", ["foo"])
    c.take_records()
    result, _ = c.sg("m1", joined.member_epoch, rack_id="rack-a")
    assert result.member_epoch == joined.member_epoch
    assert c.take_records() == [r.ShareGroupMemberMetadataRecord("g", "m1", "rack-a", "client", "/127.0.0.1", ("foo",))]


def test_a_subscription_change_bumps_the_epoch_and_reassigns():
    c = ShareTestContext()
    foo, bar = c.registry.add("foo", 2), c.registry.add("bar", 1)
    joined = c.sjoin("m1", ["foo"])
    changed, init = c.sg("m1", joined.member_epoch, topics=["bar"])
    assert changed.member_epoch == joined.member_epoch + 1 and changed.assignment == ()
    assert init == StateInit("g", changed.member_epoch, {bar: {0: -1}})
    c.initialized(init)
    again, _ = c.sg("m1", changed.member_epoch, topics=["bar"])
    assert again.assignment == tps((bar, [0]))
    assert foo not in {tp.topic_id for tp in again.assignment}


def test_a_topic_that_grows_bumps_the_epoch_and_initializes_its_new_partitions():
    c = ShareTestContext()
    foo = c.registry.add("foo", 2)
    joined = c.sjoin("m1", ["foo"])
    c.registry.grow("foo", 3)
    c.clock.advance(1)
    grown, init = c.sg("m1", joined.member_epoch)
    assert grown.member_epoch == joined.member_epoch + 1
    assert init == StateInit("g", grown.member_epoch, {foo: {2: -1}})
    c.initialized(init)
    again, _ = c.sg("m1", grown.member_epoch)
    assert again.member_epoch == grown.member_epoch + 1 and again.assignment == tps((foo, [0, 1, 2]))


def test_a_deleted_topic_leaves_the_assignment_and_the_share_partition_state():
    c = ShareTestContext()
    foo, bar = c.registry.add("foo", 1), c.registry.add("bar", 1)
    joined = c.sjoin("m1", ["foo", "bar"])
    assert joined.assignment == tps((foo, [0]), (bar, [0]))
    c.registry.delete("bar")
    c.clock.advance(1)
    c.take_records()
    after, init = c.sg("m1", joined.member_epoch)
    assert init is None and after.member_epoch == joined.member_epoch + 1 and after.assignment == tps((foo, [0]))
    records = c.take_records()
    assert records[0] == r.ShareGroupStatePartitionMetadataRecord("g", (), (info(foo, "foo", [0]),), ())
    assert set(c.sgroup().partitions().initialized) == {foo}


@pytest.mark.parametrize(
    ("member_id", "group_id", "epoch", "topics", "rack", "message"),
    [
        ("", "g", 0, ["foo"], None, "MemberId can't be empty."),
        ("  ", "g", 1, None, None, "MemberId can't be empty."),
        ("m1", "", 0, ["foo"], None, "GroupId can't be empty."),
        ("m1", "g", 0, ["foo"], " ", "RackId can't be empty."),
        ("m1", "g", 0, None, None, "SubscribedTopicNames must be set in first request."),
        ("m1", "g", 0, [], None, "SubscribedTopicNames must be set in first request."),
        ("m1", "g", -2, None, None, "MemberEpoch is invalid."),
    ],
)
def test_bad_requests_are_invalid_request_and_write_nothing(member_id, group_id, epoch, topics, rack, message):
    c = ShareTestContext()
    c.registry.add("foo", 1)
    result, init = c.sg(member_id, epoch, group_id, topics, rack_id=rack)
    assert (result.error_code, result.error_message, init) == (ErrorCode.INVALID_REQUEST, message, None)
    assert c.take_records() == [] and c.shard.groups == {}


def test_unknown_groups_members_and_groups_of_another_type():
    """testShareGroupUnknownGroupId, testShareGroupUnknownMemberIdJoins,
    testShareGroupHeartbeatOnConsumerGroup (and a classic group: no conversion either way)."""
    c = ShareTestContext()
    c.registry.add("foo", 1)
    cases = [
        (c.sg("m1", 100, "nope")[0], ErrorCode.GROUP_ID_NOT_FOUND, "Share group nope not found."),
        (c.sg("m1", -1, "nope")[0], ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found."),
    ]
    c.sjoin("m1", ["foo"])
    c.take_records()
    cases.append((c.sg("m2", 1)[0], ErrorCode.UNKNOWN_MEMBER_ID, "Member m2 is not a member of group g."))
    cases.append((c.sg("m2", -1)[0], ErrorCode.UNKNOWN_MEMBER_ID, "Member m2 is not a member of group g."))
    c.join_dynamic(group_id="classic")
    c.take_records()
    cases.append(
        (c.sg("m1", 0, "classic", ["foo"])[0], ErrorCode.GROUP_ID_NOT_FOUND, "Group classic is not a share group.")
    )
    cases.append((c.sg("m1", -1, "classic")[0], ErrorCode.GROUP_ID_NOT_FOUND, "Group classic is not a share group."))
    for result, code, message in cases:
        assert (result.error_code, result.error_message) == (code, message)
    assert c.take_records() == []


def test_a_full_group_refuses_new_members_but_not_its_own():
    """testShareGroupNewMemberIsRejectedWithMaximumMembersIsReached (group.share.max.size)."""
    c = ShareTestContext()
    c.registry.add("foo", 1)
    c.shard.share.max_size = 2
    c.sjoin("m1", ["foo"])
    c.sjoin("m2", ["foo"])
    c.take_records()
    refused, init = c.sg("m3", 0, topics=["foo"])
    assert (refused.error_code, init) == (ErrorCode.GROUP_MAX_SIZE_REACHED, None)
    assert refused.error_message == "The share group has reached its maximum capacity of 2 members."
    assert c.take_records() == []
    own, _ = c.sg("m2", c.sgroup().members["m2"].member_epoch)
    assert own.error_code == 0
    c.shard.share.max_size = 3  # read at use time: the next join gets in
    assert c.sg("m3", 0, topics=["foo"])[0].error_code == 0


def test_group_configs_override_the_heartbeat_interval():
    c = ShareTestContext()
    c.registry.add("foo", 1)
    c.configs.update("g", {"share.heartbeat.interval.ms": "2500"})
    assert c.sjoin("m1", ["foo"]).heartbeat_interval_ms == 2_500
    assert c.sjoin("m9", ["foo"], group_id="other").heartbeat_interval_ms == 1_000
