"""Heartbeat answers in every state, and what a missed session does to the group."""

from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.state import GroupState
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def test_heartbeat_in_stable_resets_the_session_timer():
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    gen = c.group().generation_id
    c.sleep(4_000)
    assert c.heartbeat(m, gen) == ErrorCode.NONE
    assert c.heartbeat_deadline(m) == 14_000


def test_heartbeat_in_completing_rebalance_is_ok():
    c = GroupTestContext()
    reply = c.join("", version=3)
    assert str(c.group().state) == "CompletingRebalance"
    assert c.heartbeat(reply.value.member_id, 1) == ErrorCode.NONE


def test_heartbeat_in_preparing_rebalance_says_rejoin_and_resets_session():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    gen = c.group().generation_id
    c.join(a)
    c.sleep(3_000)
    assert c.heartbeat(b, gen) == ErrorCode.REBALANCE_IN_PROGRESS
    assert c.heartbeat_deadline(b) == 13_000


def test_heartbeat_errors():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    gen = c.group().generation_id
    assert c.heartbeat(a, gen - 1) == ErrorCode.ILLEGAL_GENERATION
    assert c.heartbeat("nobody", gen) == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.heartbeat(a, gen, group_id="unknown-group") == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_to_empty_group_is_unknown_member_and_dead_group_is_not_available():
    c = GroupTestContext()
    c.join("", version=4)  # creates the group, Empty, with a pending id
    assert c.heartbeat("client-uuid1", 0) == ErrorCode.UNKNOWN_MEMBER_ID
    c.group().transition_to(GroupState.DEAD, 0)
    assert c.heartbeat("client-uuid1", 0) == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_member_that_stops_heartbeating_is_removed_and_others_told_to_rejoin():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    gen = c.group().generation_id
    c.take_records()
    c.sleep(6_000)
    assert c.heartbeat(a, gen) == ErrorCode.NONE
    c.sleep(4_000)  # b's session (10 s) expires
    assert b not in c.group().members
    assert c.heartbeat(a, gen) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = c.join(a)
    assert rejoin.done and rejoin.value.generation_id == gen + 1
    assert rejoin.value.members == [(a, None, b"range-meta")]


def test_last_member_expiring_makes_group_empty_and_writes_it():
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.take_records()
    c.sleep(10_000)
    group = c.group()
    assert str(group.state) == "Empty" and group.generation_id == 2
    assert c.take_records() == [GroupMetadataRecord("g", "consumer", 2, None, None, 10_000, ())]
    assert c.timers.keys() == []
