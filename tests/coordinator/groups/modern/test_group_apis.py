"""The other group APIs on KIP-848 consumer groups (Kafka 4.2 GroupMetadataManager, ConsumerGroup,
OffsetMetadataManager): ListGroups types and states, DescribeGroups (not a classic group),
OffsetCommit / OffsetFetch member epochs, OffsetDelete, DeleteGroups and offset expiry."""

from __future__ import annotations

import pytest

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from coordinator.groups.offset_requests import (
    FetchedPartition,
    FetchGroup,
    OffsetCommitResult,
    OffsetDeleteParams,
    OffsetDeleteResult,
    OffsetFetchParams,
)
from coordinator.groups.record_types import OffsetCommitRecord, OffsetTombstone
from coordinator.groups.requests import (
    DeletedGroup,
    DeleteGroupsParams,
    DescribedGroup,
    DescribeGroupsParams,
    ListedGroup,
    ListGroupsParams,
)
from coordinator.groups.retention import schedule_offset_expiration
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import ConsumerTestContext, owned
from tests.coordinator.groups.offset_helpers import commit


def cg_records(c: ConsumerTestContext) -> list:
    return [x for x in c.take_records() if x.group_id == "cg"]


@pytest.fixture
def c() -> ConsumerTestContext:
    ctx = ConsumerTestContext(start_ms=1_000, offsets_retention_ms=100_000, offsets_retention_check_interval_ms=10_000)
    ctx.registry.add("foo", 2)
    ctx.registry.add("bar", 1)
    ctx.join_consumer("m1", ["foo"], group_id="cg")
    ctx.join(group_id="classic", version=3)  # a classic group next to it, waiting for its SyncGroup
    schedule_offset_expiration(ctx.shard, ctx.clock.time_ms())
    return ctx


def test_list_groups_reports_both_types_with_their_states(c):
    listed = c.send(ListGroupsParams())
    assert sorted(listed, key=lambda g: g.group_id) == [
        ListedGroup("cg", "consumer", "Stable", "consumer"),
        ListedGroup("classic", "consumer", "CompletingRebalance", "classic"),
    ]
    assert c.send(ListGroupsParams(types_filter=["Consumer"])) == [ListedGroup("cg", "consumer", "Stable", "consumer")]
    assert [g.group_id for g in c.send(ListGroupsParams(types_filter=["classic"]))] == ["classic"]
    assert c.send(ListGroupsParams(types_filter=["share"])) == []
    assert c.send(ListGroupsParams(states_filter=[" STABLE "])) == [ListedGroup("cg", "consumer", "Stable", "consumer")]
    c.join_consumer("m2", ["foo"], group_id="cg")  # m2 waits for m1's partitions
    assert c.send(ListGroupsParams(states_filter=["reconciling"]))[0].group_id == "cg"


def test_describe_groups_says_a_consumer_group_is_not_a_classic_group(c):
    assert c.send(DescribeGroupsParams(["cg"], request_version=5)) == [
        DescribedGroup("cg", ErrorCode.NONE, "Dead", "", "")
    ]
    assert c.send(DescribeGroupsParams(["cg"], request_version=6)) == [
        DescribedGroup(
            "cg", ErrorCode.GROUP_ID_NOT_FOUND, "Dead", "", "", error_message="Group cg is not a classic group."
        )
    ]


def test_offset_commit_checks_the_member_epoch(c):
    assert c.send(commit("cg", "foo", {0: 5}, generation=1, member="m1")).error == ErrorCode.NONE
    assert c.take_records()[-1] == OffsetCommitRecord("cg", "foo", 0, 5, -1, "", 1_000, None)
    stale = c.send(commit("cg", "foo", {0: 6}, generation=0, member="m1"))
    assert stale == OffsetCommitResult(ErrorCode.STALE_MEMBER_EPOCH, [("foo", [(0, ErrorCode.STALE_MEMBER_EPOCH)])])
    assert c.send(commit("cg", "foo", {0: 6}, generation=1, member="nobody")).error == ErrorCode.UNKNOWN_MEMBER_ID
    assert (
        c.send(commit("cg", "foo", {0: 6}, generation=1, member="m1", version=8)).error == ErrorCode.UNSUPPORTED_VERSION
    )  # consumer-protocol members commit with v9+
    # The admin client (no member, epoch -1) may commit only while the group is Empty.
    assert c.send(commit("cg", "foo", {0: 6})).error == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.take_records() == []
    c.cg_heartbeat("m1", -1, group_id="cg")
    assert c.send(commit("cg", "foo", {0: 7})).error == ErrorCode.NONE


def test_offset_fetch_checks_member_id_and_epoch_from_v9(c):
    c.send(commit("cg", "foo", {0: 5}, generation=1, member="m1"))

    def fetch(member_id, epoch):
        (group,) = c.send(OffsetFetchParams([FetchGroup("cg", [("foo", [0])], member_id, epoch)]))
        return group

    assert fetch("m1", 1).topics == [("foo", [FetchedPartition(0, 5)])]
    assert fetch(None, -1).topics == [("foo", [FetchedPartition(0, 5)])]  # admin clients, older versions
    assert (fetch("m1", 0).error, fetch("m1", 0).topics) == (ErrorCode.STALE_MEMBER_EPOCH, [])
    assert fetch("ghost", 1).error == ErrorCode.UNKNOWN_MEMBER_ID


def test_offset_delete_refuses_subscribed_topics(c):
    c.send(commit("cg", "foo", {0: 5}, generation=1, member="m1"))
    c.send(commit("cg", "bar", {0: 6}, generation=1, member="m1"))
    c.take_records()
    result = c.send(OffsetDeleteParams("cg", [("foo", [0]), ("bar", [0])]))
    assert result == OffsetDeleteResult(
        ErrorCode.NONE, [("foo", [(0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)]), ("bar", [(0, ErrorCode.NONE)])]
    )
    assert c.take_records() == [OffsetTombstone("cg", "bar", 0)]


def test_delete_groups_refuses_a_group_with_members_then_writes_its_tombstones(c):
    c.send(commit("cg", "foo", {0: 5}, generation=1, member="m1"))
    assert c.send(DeleteGroupsParams(["cg"])) == [DeletedGroup("cg", ErrorCode.NON_EMPTY_GROUP)]
    c.cg_heartbeat("m1", -1, group_id="cg")
    c.take_records()
    assert c.send(DeleteGroupsParams(["cg"])) == [DeletedGroup("cg", ErrorCode.NONE)]
    assert c.take_records() == [
        OffsetTombstone("cg", "foo", 0),
        r.ConsumerGroupTargetAssignmentMetadataTombstone("cg"),
        r.ConsumerGroupPartitionMetadataTombstone("cg"),
        r.ConsumerGroupMetadataTombstone("cg"),
    ]
    assert "cg" not in c.shard.groups and c.fresh_shard().groups.keys() == c.shard.groups.keys()


def test_consumer_group_offsets_expire_from_their_commit_unless_subscribed(c):
    c.send(commit("cg", "foo", {0: 5}, generation=1, member="m1"))
    c.send(commit("cg", "bar", {0: 6}, generation=1, member="m1"))
    c.take_records()
    for _ in range(20):  # retention passes; the check runs every 10 s; m1 keeps its session
        c.sleep(5_000)
        c.cg_heartbeat("m1", 1, group_id="cg")
    assert cg_records(c) == [OffsetTombstone("cg", "bar", 0)]  # foo is subscribed: kept
    assert c.shard.offsets.get("cg", "foo", 0) is not None
    # Once empty, its last offset expires and the group goes with it.
    c.cg_heartbeat("m1", -1, group_id="cg")
    c.take_records()
    c.sleep(10_000)
    records = cg_records(c)
    assert records[0] == OffsetTombstone("cg", "foo", 0)
    assert records[-1] == r.ConsumerGroupMetadataTombstone("cg") and "cg" not in c.shard.groups


def test_consumer_protocol_needs_the_consumer_in_rebalance_protocols():
    c = ConsumerTestContext(ConsumerGroupSettings(), rebalance_protocols=("classic",))
    assert not c.shard.config.consumer_protocol_enabled  # the service answers UNSUPPORTED_VERSION (integration)


def test_members_keep_committing_through_a_rebalance(c):
    foo = c.registry.topics["foo"].topic_id
    c.join_consumer("m2", ["foo"], group_id="cg")
    revoking = c.cg_heartbeat("m1", 1, group_id="cg", owned=[(foo, [0, 1])])
    assert revoking.member_epoch == 1  # still at its epoch while revoking
    assert c.send(commit("cg", "foo", {1: 9}, generation=1, member="m1")).error == ErrorCode.NONE
    moved = c.cg_heartbeat("m1", 1, group_id="cg", owned=owned(revoking))
    assert moved.member_epoch == 2
    (kept,) = c.shard.consumer_group("cg").members["m1"].assigned_partitions[foo]
    # KIP-1251 (Kafka 4.3): the lagging epoch 1 still commits the partition m1 held since epoch 1...
    assert c.send(commit("cg", "foo", {kept: 9}, generation=1, member="m1")).error == ErrorCode.NONE
    # ...but not the one it gave up, nor at an epoch newer than its own.
    gone = 1 - kept
    assert c.send(commit("cg", "foo", {gone: 9}, generation=1, member="m1")).error == ErrorCode.STALE_MEMBER_EPOCH
    assert c.send(commit("cg", "foo", {kept: 9}, generation=3, member="m1")).error == ErrorCode.STALE_MEMBER_EPOCH
