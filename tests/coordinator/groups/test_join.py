"""JoinGroup rules: KIP-394, session-timeout bounds, protocols, leader, join-phase timing."""

from coordinator.groups.group_config import GroupConfig
from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.requests import JoinGroupResult, LeaveGroupParams
from coordinator.runtime.operation import ParkedReply
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def test_v4_join_without_member_id_gets_member_id_required_and_a_pending_id():
    c = GroupTestContext()
    answer = c.join("", client_id="cli", version=4)
    assert answer == JoinGroupResult(ErrorCode.MEMBER_ID_REQUIRED, "cli-uuid1")
    group = c.group()
    assert list(group.pending_join_members) == ["cli-uuid1"]
    assert group.members == {}
    # The pending id expires after the session timeout, not the new-member join timeout.
    assert c.heartbeat_deadline("cli-uuid1") == 10_000
    # A new group is written at once, empty (Kafka newEmptyGroupMetadataRecord).
    assert c.take_records() == [GroupMetadataRecord("g", "", 0, None, None, 0, ())]


def test_pending_member_expires_after_session_timeout_if_it_never_rejoins():
    c = GroupTestContext()
    c.join("", version=5)
    assert c.sleep(9_999) == 0
    assert c.group().is_pending_member("client-uuid1")
    assert c.sleep(1) == 1
    assert not c.group().is_pending_member("client-uuid1")
    # Rejoining with the expired id is now an unknown member.
    assert c.join("client-uuid1").error == ErrorCode.UNKNOWN_MEMBER_ID


def test_pending_member_rejoins_and_completes_generation_one():
    c = GroupTestContext()
    pending = c.join("", version=4).member_id
    reply = c.join(pending, version=4)
    assert isinstance(reply, ParkedReply) and reply.done
    assert reply.value == JoinGroupResult(
        ErrorCode.NONE, pending, 1, "consumer", "range", pending, False, [(pending, None, b"range-meta")]
    )
    assert str(c.group().state) == "CompletingRebalance"
    # Joined members now live on their session timeout and the group awaits SyncGroup.
    assert c.heartbeat_deadline(pending) == 10_000
    assert c.sync_deadline() == 60_000


def test_v3_and_older_join_directly_without_member_id_required():
    c = GroupTestContext()
    reply = c.join("", client_id="old", version=3)
    assert reply.done and reply.value.error == ErrorCode.NONE
    assert reply.value.member_id == "old-uuid1"


def test_static_member_skips_member_id_required_and_uses_instance_id_prefix():
    c = GroupTestContext()
    reply = c.join("", instance_id="inst-a", version=9)
    assert reply.done and reply.value.error == ErrorCode.NONE
    assert reply.value.member_id == "inst-a-uuid1"
    assert c.group().static_members == {"inst-a": "inst-a-uuid1"}


def test_session_timeout_bounds():
    c = GroupTestContext()
    assert c.join("", session_ms=5_999) == JoinGroupResult(ErrorCode.INVALID_SESSION_TIMEOUT, "")
    assert c.join("", session_ms=1_800_001) == JoinGroupResult(ErrorCode.INVALID_SESSION_TIMEOUT, "")
    assert c.join("", session_ms=6_000).error == ErrorCode.MEMBER_ID_REQUIRED
    assert c.join("", session_ms=1_800_000).error == ErrorCode.MEMBER_ID_REQUIRED


def test_unknown_group_with_member_id_is_unknown_member():
    # (An empty group id never reaches the operation: GroupService answers INVALID_GROUP_ID.)
    c = GroupTestContext()
    assert c.join("someone", group_id="nope") == JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, "someone")
    assert c.shard.groups == {}


def test_v0_without_rebalance_timeout_uses_session_timeout():
    c = GroupTestContext()
    reply = c.join("", version=0, rebalance_ms=-1, session_ms=7_000)
    assert c.group().members[reply.value.member_id].rebalance_timeout_ms == 7_000


def test_inconsistent_protocol_type_or_no_common_protocol():
    c = GroupTestContext()
    c.stable_group(1)
    assert c.join("", protocol_type="connect").error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert c.join("", protocols=[("sticky", b"")]).error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    # An empty group refuses an empty protocol type or protocol list.
    fresh = GroupTestContext()
    assert fresh.join("", protocol_type="").error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert fresh.join("", protocols=[]).error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_protocol_selected_by_vote_among_protocols_every_member_supports():
    c = GroupTestContext()
    a = c.join_dynamic(client_id="a", protocols=[("range", b"ra"), ("roundrobin", b"rr-a")])
    a_id = a.value.member_id
    b = c.join_dynamic(client_id="b", protocols=[("roundrobin", b"rr-b"), ("range", b"rb"), ("x", b"")])
    c_reply = c.join_dynamic(client_id="c", protocols=[("roundrobin", b"rr-c"), ("range", b"rc")])
    assert not b.done and not c_reply.done  # waiting for a, the only member not yet rejoined
    a2 = c.join(a_id, client_id="a", protocols=[("range", b"ra"), ("roundrobin", b"rr-a")])
    assert a2.done and b.done and c_reply.done
    # "x" is not supported by everyone; roundrobin has 2 votes (b, c), range 1 (a, the leader).
    assert a2.value.protocol_name == "roundrobin"
    assert a2.value.leader == a_id
    assert a2.value.members == [(a_id, None, b"rr-a"), ("b-uuid2", None, b"rr-b"), ("c-uuid3", None, b"rr-c")]
    assert b.value.members == [] and c_reply.value.members == []
    assert b.value.generation_id == c_reply.value.generation_id == a2.value.generation_id == 2


def test_vote_tie_goes_to_the_leaders_preference():
    c = GroupTestContext()
    a = c.join_dynamic(client_id="a", protocols=[("range", b""), ("roundrobin", b"")])
    b = c.join_dynamic(client_id="b", protocols=[("roundrobin", b""), ("range", b"")])
    a2 = c.join(a.value.member_id, client_id="a", protocols=[("range", b""), ("roundrobin", b"")])
    assert a2.value.protocol_name == b.value.protocol_name == "range"


def test_join_phase_completes_as_soon_as_every_known_member_rejoined():
    c = GroupTestContext()
    leader, follower = c.stable_group(2)
    generation = c.group().generation_id
    first = c.join(leader)  # leader rejoin in Stable: rebalance
    assert not first.done
    assert str(c.group().state) == "PreparingRebalance"
    assert c.join_deadline() == 60_000
    second = c.join(follower)
    assert first.done and second.done  # no timer needed
    assert first.value.generation_id == second.value.generation_id == generation + 1
    assert c.join_deadline() is None


def test_rebalance_timeout_removes_members_that_did_not_rejoin_and_reelects_leader():
    c = GroupTestContext()
    leader, follower = c.stable_group(2)
    c.take_records()
    # The follower rejoins with changed metadata; the leader keeps heartbeating (and is told
    # REBALANCE_IN_PROGRESS each time) but never rejoins.
    reply = c.join(follower, protocols=[("range", b"new-meta")])
    generation = c.group().generation_id
    for _ in range(11):
        c.sleep(5_000)  # (the follower's session timer fires harmlessly: it awaits the join)
        assert c.heartbeat(leader, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    c.sleep(4_999)
    assert not reply.done
    assert c.sleep(1) == 1  # the join timer, at exactly the rebalance timeout
    assert reply.done
    assert reply.value.leader == follower
    assert reply.value.generation_id == generation + 1
    assert reply.value.members == [(follower, None, b"new-meta")]
    assert list(c.group().members) == [follower]
    assert c.heartbeat_deadline(leader) is None
    assert c.heartbeat(leader, generation + 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_group_rebalance_timeout_is_the_largest_member_rebalance_timeout():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    c.join(a, rebalance_ms=90_000)
    assert c.join_deadline() == 90_000


def test_new_member_that_joins_during_a_rebalance_times_out_after_five_minutes():
    config = GroupConfig(max_session_timeout_ms=3_600_000)
    c = GroupTestContext(config)
    (old,) = c.stable_group(1, session_ms=3_600_000, rebalance_ms=3_600_000)
    newcomer = c.join_dynamic(client_id="new", session_ms=3_600_000, rebalance_ms=3_600_000)
    new_id = "new-uuid2"
    assert not newcomer.done  # waiting for the old member to rejoin
    assert c.heartbeat_deadline(new_id) == 300_000
    c.sleep(300_000)
    assert newcomer.done
    assert newcomer.value == JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, "")
    assert new_id not in c.group().members


def test_follower_rejoining_stable_group_with_same_metadata_gets_current_generation():
    c = GroupTestContext()
    leader, follower = c.stable_group(2)
    group = c.group()
    answer = c.join(follower)
    assert answer == JoinGroupResult(ErrorCode.NONE, follower, group.generation_id, "consumer", "range", leader)
    assert str(group.state) == "Stable"


def test_follower_rejoining_with_changed_metadata_triggers_rebalance():
    c = GroupTestContext()
    leader, follower = c.stable_group(2)
    answer = c.join(follower, protocols=[("range", b"changed")])
    assert not answer.done
    assert str(c.group().state) == "PreparingRebalance"


def test_rejoin_during_completing_rebalance_with_same_metadata_returns_generation():
    c = GroupTestContext()
    first = c.join_dynamic(client_id="a")
    member_id = first.value.member_id
    again = c.join(member_id, client_id="a")
    assert again == first.value  # lost answer: the same generation again, leader gets members


def test_group_max_size_reached():
    c = GroupTestContext(GroupConfig(max_size=2))
    c.stable_group(2)
    assert c.join("", version=4) == JoinGroupResult(ErrorCode.GROUP_MAX_SIZE_REACHED, "")
    assert c.join("", version=3).error == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_join_to_empty_group_with_old_member_id_is_unknown_member():
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.send(LeaveGroupParams.single("g", m))
    assert str(c.group().state) == "Empty"
    assert c.join(m).error == ErrorCode.UNKNOWN_MEMBER_ID


def test_duplicate_parked_join_is_answered_rebalance_in_progress():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    first = c.join(a)
    second = c.join(a)
    assert first.done and first.value == JoinGroupResult(ErrorCode.REBALANCE_IN_PROGRESS, a)
    assert not second.done


def test_exact_timers_after_a_generation_forms():
    c = GroupTestContext()
    pending = c.join("", version=4).member_id
    assert c.timers.keys() == [("heartbeat", "g", pending)]
    c.join(pending, version=4)
    # Join timer cancelled (nobody missing); session timer restarted; sync awaited.
    assert c.timers.keys() == [("heartbeat", "g", pending), ("sync", "g")]
    assert (c.heartbeat_deadline(pending), c.sync_deadline(), c.join_deadline()) == (10_000, 60_000, None)


def test_join_to_dead_group_is_coordinator_not_available():
    from coordinator.groups.state import GroupState

    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.group().transition_to(GroupState.DEAD, 0)
    assert c.join("") == JoinGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, "")
    assert c.join(m) == JoinGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, m)
    assert c.sync(m, 1).error == ErrorCode.COORDINATOR_NOT_AVAILABLE
