"""LeaveGroup: v0-2 single member, v3+ batches with per-member errors, static removal."""

from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.requests import LeaveGroupParams, LeaveGroupResult, LeavingMember, LeftMember
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def test_v0_single_member_leaves_and_others_must_rejoin():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    gen = c.group().generation_id
    result = c.send(LeaveGroupParams.single("g", b))
    assert result == LeaveGroupResult(ErrorCode.NONE, [LeftMember(b, None, ErrorCode.NONE)])
    assert result.legacy_error() == ErrorCode.NONE
    assert list(c.group().members) == [a]
    assert c.heartbeat_deadline(b) is None
    assert c.heartbeat(a, gen) == ErrorCode.REBALANCE_IN_PROGRESS


def test_v0_unknown_member_error_is_the_legacy_top_level_error():
    c = GroupTestContext()
    c.stable_group(1)
    result = c.send(LeaveGroupParams.single("g", "nobody"))
    assert result.legacy_error() == ErrorCode.UNKNOWN_MEMBER_ID


def test_last_member_leaving_empties_the_group_and_writes_it():
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.take_records()
    c.sleep(1_000)
    c.send(LeaveGroupParams.single("g", m))
    assert str(c.group().state) == "Empty"
    assert c.take_records() == [GroupMetadataRecord("g", "consumer", 2, None, None, 1_000, ())]


def test_batch_leave_with_per_member_errors():
    c = GroupTestContext()
    a, b, d = c.stable_group(3)
    result = c.send(
        LeaveGroupParams(
            "g", [LeavingMember(a), LeavingMember("ghost"), LeavingMember(d, reason="shutdown")], request_version=5
        )
    )
    assert result == LeaveGroupResult(
        ErrorCode.NONE,
        [
            LeftMember(a, None, ErrorCode.NONE),
            LeftMember("ghost", None, ErrorCode.UNKNOWN_MEMBER_ID),
            LeftMember(d, None, ErrorCode.NONE),
        ],
    )
    # The leader left: leadership moves on; the rebalance waits for b only.
    group = c.group()
    assert list(group.members) == [b] and group.leader_id == b
    assert str(group.state) == "PreparingRebalance"
    rejoin = c.join(b)
    assert rejoin.done and rejoin.value.leader == b


def test_static_member_removed_by_instance_id_with_unknown_member_id():
    c = GroupTestContext()
    joined = c.join("", instance_id="inst-1", version=5)
    member_id = joined.value.member_id
    result = c.send(
        LeaveGroupParams("g", [LeavingMember("", "inst-1"), LeavingMember("", "inst-unknown")], request_version=3)
    )
    assert result == LeaveGroupResult(
        ErrorCode.NONE,
        [LeftMember("", "inst-1", ErrorCode.NONE), LeftMember("", "inst-unknown", ErrorCode.UNKNOWN_MEMBER_ID)],
    )
    assert member_id not in c.group().members and c.group().static_members == {}


def test_static_member_leave_with_wrong_member_id_is_fenced():
    c = GroupTestContext()
    c.join("", instance_id="inst-1", version=5)
    result = c.send(LeaveGroupParams("g", [LeavingMember("inst-1-old", "inst-1")]))
    assert result.members == [LeftMember("inst-1-old", "inst-1", ErrorCode.FENCED_INSTANCE_ID)]


def test_pending_member_can_leave():
    c = GroupTestContext()
    pending = c.join("", version=4).member_id
    result = c.send(LeaveGroupParams.single("g", pending, request_version=2))
    assert result.members == [LeftMember(pending, None, ErrorCode.NONE)]
    assert not c.group().is_pending_member(pending)
    assert c.heartbeat_deadline(pending) is None


def test_leave_unknown_group_answers_unknown_member_per_member():
    c = GroupTestContext()
    result = c.send(LeaveGroupParams("nope", [LeavingMember("m1"), LeavingMember("", "i")]))
    assert result == LeaveGroupResult(
        ErrorCode.NONE,
        [LeftMember("m1", None, ErrorCode.UNKNOWN_MEMBER_ID), LeftMember("", "i", ErrorCode.UNKNOWN_MEMBER_ID)],
    )


def test_leaving_member_parked_join_is_answered_unknown_member_and_rebalance_completes():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    parked = c.join(a)  # a rejoins (leader), waits for b
    c.send(LeaveGroupParams.single("g", b))
    assert parked.done and parked.value.error == ErrorCode.NONE
    assert parked.value.members == [(a, None, b"range-meta")]
