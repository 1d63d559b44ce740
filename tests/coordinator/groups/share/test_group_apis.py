"""The other group APIs and share groups (Kafka 4.2 GroupMetadataManagerTest: testShareGroupDescribe*,
testShareGroupStates, testShareGroupDeleteTombstones, testConsumerGroupHeartbeatOnShareGroup,
testClassicGroup{Join,Sync,Leave}OnShareGroup, testConsumerGroupDescribeOnShareGroup,
testShareGroupDescribeOnConsumerGroup; OffsetMetadataManager with a share group): exact answers,
and nothing written where Kafka refuses."""

from __future__ import annotations

import pytest

from coordinator.groups.consumer.heartbeat import ConsumerHeartbeatParams
from coordinator.groups.consumer_ops import ConsumerDescribeParams, consumer_group_describe, consumer_heartbeat
from coordinator.groups.offset_requests import CommitPartition, FetchedPartition, OffsetDeleteParams, OffsetFetchParams
from coordinator.groups.requests import (
    DeletedGroup,
    DeleteGroupsParams,
    DescribedGroup,
    DescribeGroupsParams,
    HeartbeatParams,
    LeaveGroupParams,
    ListedGroup,
    ListGroupsParams,
    SyncGroupParams,
)
from coordinator.groups.share import ops
from coordinator.groups.share import records as r
from coordinator.groups.share.describe import DescribedShareGroup, DescribedShareMember, DescribedShareTopic
from coordinator.groups.txn_offset_commit import TxnOffsetCommitParams, commit_transactional_offsets
from protocol.errors import ErrorCode
from tests.coordinator.groups.offset_helpers import commit
from tests.coordinator.groups.share.support import ShareTestContext


def not_found(message: str) -> tuple[ErrorCode, str]:
    return ErrorCode.GROUP_ID_NOT_FOUND, message


@pytest.fixture
def c() -> ShareTestContext:
    ctx = ShareTestContext()
    ctx.registry.add("foo", 2)
    ctx.sjoin("m1", ["foo"])
    ctx.take_records()
    return ctx


def test_share_group_describe_shows_members_assignments_and_kafkas_errors(c):
    foo = c.shard.topics.by_name("foo").topic_id
    member = c.sgroup().members["m1"]
    assert c.send(lambda ctx: ops.describe(ctx, ["g", "nope", ""])) == [
        DescribedShareGroup(
            "g",
            group_state="Stable",
            group_epoch=c.sgroup().group_epoch,
            assignment_epoch=c.sgroup().assignment_epoch,
            assignor_name="simple",
            members=(
                DescribedShareMember(
                    "m1",
                    None,
                    member.member_epoch,
                    "client",
                    "/127.0.0.1",
                    ("foo",),
                    (DescribedShareTopic(foo, "foo", (0, 1)),),
                ),
            ),
        ),
        DescribedShareGroup("nope", ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found."),
        DescribedShareGroup("", ErrorCode.INVALID_GROUP_ID),
    ]
    c.join_dynamic(group_id="classic")
    (other,) = c.send(lambda ctx: ops.describe(ctx, ["classic"]))
    assert (other.error_code, other.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group classic is not a share group.",
    )


def test_list_groups_shows_share_groups_with_their_type_and_state(c):
    c.sg("m9", 0, "idle", ["foo"])
    c.sg("m9", -1, "idle")  # an Empty share group
    c.join_dynamic(group_id="classic")
    listed = sorted(c.send(ListGroupsParams()), key=lambda g: g.group_id)
    assert [g for g in listed if g.group_type == "share"] == [
        ListedGroup("g", "share", "Stable", "share"),
        ListedGroup("idle", "share", "Empty", "share"),
    ]
    assert sorted(g.group_id for g in c.send(ListGroupsParams(types_filter=["SHARE"]))) == ["g", "idle"]
    assert c.send(ListGroupsParams(types_filter=["share"], states_filter=[" empty "])) == [
        ListedGroup("idle", "share", "Empty", "share")
    ]
    assert [g.group_id for g in c.send(ListGroupsParams(types_filter=["classic"]))] == ["classic"]


def test_describe_groups_says_a_share_group_is_not_a_classic_group(c):
    assert c.send(DescribeGroupsParams(["g"], request_version=5)) == [
        DescribedGroup("g", ErrorCode.NONE, "Dead", "", "")
    ]
    assert c.send(DescribeGroupsParams(["g"], request_version=6)) == [
        DescribedGroup(
            "g", ErrorCode.GROUP_ID_NOT_FOUND, "Dead", "", "", error_message="Group g is not a classic group."
        )
    ]


def test_delete_groups_refuses_a_share_group_with_members_and_tombstones_an_empty_one(c):
    assert c.send(DeleteGroupsParams(["g"])) == [DeletedGroup("g", ErrorCode.NON_EMPTY_GROUP)]
    assert c.take_records() == []
    c.sg("m1", -1)
    c.take_records()
    assert c.send(DeleteGroupsParams(["g"])) == [DeletedGroup("g", ErrorCode.NONE)]
    assert c.take_records() == [  # testShareGroupDeleteTombstones: Kafka's order
        r.ShareGroupTargetAssignmentMetadataTombstone("g"),
        r.ShareGroupStatePartitionMetadataTombstone("g"),
        r.ShareGroupMetadataTombstone("g"),
    ]
    assert "g" not in c.shard.groups and c.fresh_shard().groups == c.shard.groups


def test_the_share_step_of_delete_groups_moves_state_to_deleting(c):
    foo = c.shard.topics.by_name("foo").topic_id
    assert c.send(lambda ctx: ops.delete_requests(ctx, ["g", "nope"])) == [ErrorCode.NON_EMPTY_GROUP, None]
    c.sg("m1", -1)
    c.take_records()
    assert c.send(lambda ctx: ops.delete_requests(ctx, ["g"])) == [{foo: frozenset({0, 1})}]
    assert c.take_records() == [r.ShareGroupStatePartitionMetadataRecord("g", (), (), (r.TopicInfo(foo, "foo"),))]


def test_classic_apis_naming_a_share_group(c):
    """JoinGroup: INCONSISTENT_GROUP_PROTOCOL; SyncGroup, Heartbeat, LeaveGroup: UNKNOWN_MEMBER_ID
    (Kafka treats the group as not found); nothing written, the share group untouched."""
    before = c.fresh_shard().groups
    joined = c.join("", group_id="g")
    assert (joined.error, joined.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    assert c.send(SyncGroupParams("g", 1, "m1", None, assignments=[])).error == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.send(HeartbeatParams("g", 1, "m1", None)).error == ErrorCode.UNKNOWN_MEMBER_ID
    left = c.send(LeaveGroupParams.single("g", "m1", request_version=5))
    assert [m.error for m in left.members] == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert c.take_records() == [] and c.shard.groups == before


def test_offset_apis_naming_a_share_group(c):
    """ShareGroup.validateOffsetCommit/Fetch/Delete: a share group has no committed offsets."""
    result = c.send(commit("g", "foo", {0: 5}))
    assert result.topics == [("foo", [(0, ErrorCode.GROUP_ID_NOT_FOUND)])]
    txn = TxnOffsetCommitParams("tx", "g", 1, 0, [("foo", [CommitPartition(0, 5)])])
    assert c.send(lambda ctx: commit_transactional_offsets(ctx, txn)).topics == [
        ("foo", [(0, ErrorCode.GROUP_ID_NOT_FOUND)])
    ]
    (fetched,) = c.send(OffsetFetchParams.single("g", [("foo", [0])]))
    assert (fetched.error, fetched.topics) == (ErrorCode.NONE, [("foo", [FetchedPartition(0, -1, -1, "")])])
    assert c.send(OffsetDeleteParams("g", [("foo", [0])])).error == ErrorCode.GROUP_ID_NOT_FOUND
    assert c.take_records() == []


def test_consumer_apis_naming_a_share_group_and_share_apis_naming_a_consumer_group(c):
    cg = ConsumerHeartbeatParams(
        "g", "c1", 0, rebalance_timeout_ms=5_000, subscribed_topic_names=["foo"], topic_partitions=()
    )
    answer = c.send(lambda ctx: consumer_heartbeat(ctx, cg))
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group g is not a consumer group.",
    )
    (described,) = c.send(lambda ctx: consumer_group_describe(ctx, ConsumerDescribeParams(["g"])))
    assert (described.error_code, described.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group g is not a consumer group.",
    )
    c.send(
        lambda ctx: consumer_heartbeat(
            ctx,
            ConsumerHeartbeatParams(
                "cg", "c1", 0, rebalance_timeout_ms=5_000, subscribed_topic_names=["foo"], topic_partitions=()
            ),
        )
    )
    c.take_records()
    refused, _ = c.sg("m1", 0, "cg", ["foo"])
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group cg is not a share group.",
    )
    (shown,) = c.send(lambda ctx: ops.describe(ctx, ["cg"]))
    assert (shown.error_code, shown.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group cg is not a share group.")
    assert c.take_records() == []


def test_the_control_planes_expire_member_fences_a_share_member(c):
    from coordinator.groups import forced

    assert c.send(lambda ctx: forced.expire_member(ctx, ("g", "m1"))) == ErrorCode.NONE
    assert "m1" not in c.sgroup().members
    assert c.send(lambda ctx: forced.expire_member(ctx, ("g", "m1"))) == ErrorCode.UNKNOWN_MEMBER_ID
