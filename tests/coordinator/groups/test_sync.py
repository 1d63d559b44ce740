"""SyncGroup rules: parking, the leader's assignment, pending-sync expiry, error answers."""

from coordinator.groups.record_types import GroupMetadataRecord, MemberSnapshot
from coordinator.groups.requests import SyncGroupParams, SyncGroupResult
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def two_members_completing() -> tuple[GroupTestContext, str, str, int]:
    c = GroupTestContext()
    a = c.join_dynamic(client_id="a")
    b = c.join_dynamic(client_id="b")
    a2 = c.join(a.value.member_id, client_id="a")
    assert a2.done and b.done
    c.take_records()
    return c, a2.value.member_id, b.value.member_id, a2.value.generation_id


def test_follower_syncing_before_leader_is_parked_then_gets_its_assignment():
    c, leader, follower, gen = two_members_completing()
    parked = c.sync(follower, gen)
    assert not parked.done
    assert c.sync_deadline() == 60_000  # the leader has not synced yet
    leader_reply = c.sync(leader, gen, [(leader, b"A"), (follower, b"B")])
    assert leader_reply.done and parked.done
    assert leader_reply.value == SyncGroupResult(ErrorCode.NONE, "consumer", "range", b"A")
    assert parked.value == SyncGroupResult(ErrorCode.NONE, "consumer", "range", b"B")
    assert str(c.group().state) == "Stable"
    assert c.sync_deadline() is None
    assert c.take_records() == [
        GroupMetadataRecord(
            "g",
            "consumer",
            gen,
            "range",
            leader,
            0,
            (
                MemberSnapshot(leader, None, "a", "/127.0.0.1", 60_000, 10_000, b"range-meta", b"A"),
                MemberSnapshot(follower, None, "b", "/127.0.0.1", 60_000, 10_000, b"range-meta", b"B"),
            ),
        )
    ]


def test_follower_syncing_after_leader_gets_stored_assignment_without_a_record():
    c, leader, follower, gen = two_members_completing()
    c.sync(leader, gen, [(leader, b"A"), (follower, b"B")])
    c.take_records()
    answer = c.sync(follower, gen)
    assert answer == SyncGroupResult(ErrorCode.NONE, "consumer", "range", b"B")
    assert c.take_records() == []
    assert c.sync_deadline() is None


def test_members_left_out_by_the_leader_get_an_empty_assignment():
    c, leader, follower, gen = two_members_completing()
    c.sync(leader, gen, [(leader, b"A")])
    assert c.sync(follower, gen) == SyncGroupResult(ErrorCode.NONE, "consumer", "range", b"")


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout():
    c, leader, follower, gen = two_members_completing()
    c.sync(leader, gen, [(leader, b"A"), (follower, b"B")])
    assert c.sync_deadline() == 60_000  # the follower still owes a SyncGroup
    for _ in range(11):  # both keep their sessions alive; the follower never syncs
        c.sleep(5_000)
        assert c.heartbeat(leader, gen) == ErrorCode.NONE
        assert c.heartbeat(follower, gen) == ErrorCode.NONE
    c.sleep(4_999)
    assert follower in c.group().members
    c.sleep(1)  # rebalance timeout (60 s) since the generation started
    assert follower not in c.group().members
    assert str(c.group().state) == "PreparingRebalance"
    assert c.heartbeat(leader, gen) == ErrorCode.REBALANCE_IN_PROGRESS


def test_sync_errors():
    c, leader, follower, gen = two_members_completing()
    assert c.sync(follower, gen + 1) == SyncGroupResult(ErrorCode.ILLEGAL_GENERATION)
    assert c.sync("stranger", gen) == SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID)
    assert c.sync(leader, gen, group_id="other") == SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID)
    assert c.send(SyncGroupParams("g", gen, leader, protocol_type="connect")) == SyncGroupResult(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    assert c.send(SyncGroupParams("g", gen, leader, protocol_name="sticky")) == SyncGroupResult(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    # Matching v5 protocol fields are fine.
    ok = c.send(SyncGroupParams("g", gen, leader, protocol_type="consumer", protocol_name="range"))
    assert ok.done


def test_sync_during_preparing_rebalance_is_rebalance_in_progress():
    c = GroupTestContext()
    leader, follower = c.stable_group(2)
    gen = c.group().generation_id
    c.join(leader)
    assert c.sync(follower, gen) == SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS)


def test_rebalance_during_completing_rebalance_answers_parked_syncs_with_rebalance_in_progress():
    c, leader, follower, gen = two_members_completing()
    parked = c.sync(follower, gen)
    c.join(leader, protocols=[("range", b"other")])  # changed metadata: rebalance
    assert parked.done
    assert parked.value == SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS, None, None, b"")
    assert c.sync_deadline() is None
