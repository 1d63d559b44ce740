"""Static membership (KIP-345): replacement without rebalance, fencing, KAFKA-9801."""

from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.requests import JoinGroupResult, SyncGroupResult
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def stable_static_pair() -> tuple[GroupTestContext, str, str, int]:
    c = GroupTestContext()
    a = c.join("", instance_id="ia", client_id="ca")
    b = c.join("", instance_id="ib", client_id="cb")
    a2 = c.join(a.value.member_id, instance_id="ia", client_id="ca")
    assert a2.done and b.done
    gen = a2.value.generation_id
    c.sync(b.value.member_id, gen, instance_id="ib")
    c.sync(a2.value.member_id, gen, [(a2.value.member_id, b"A"), (b.value.member_id, b"B")], instance_id="ia")
    assert str(c.group().state) == "Stable"
    c.take_records()
    return c, a2.value.member_id, b.value.member_id, gen


def test_static_follower_rejoining_stable_group_replaces_member_without_rebalance():
    c, leader, old_b, gen = stable_static_pair()
    reply = c.join("", instance_id="ib", client_id="cb")
    new_b = "ib-uuid3"
    assert reply.done
    assert reply.value == JoinGroupResult(ErrorCode.NONE, new_b, gen, "consumer", "range", leader, False, [])
    group = c.group()
    assert str(group.state) == "Stable" and group.generation_id == gen
    assert group.static_members == {"ia": leader, "ib": new_b}
    assert list(group.members) == [leader, new_b]
    assert group.members[new_b].assignment == b"B"  # keeps the old member's assignment
    # The replacement is written so a restart knows the new member id.
    (record,) = c.take_records()
    assert isinstance(record, GroupMetadataRecord)
    assert [m.member_id for m in record.members] == [leader, new_b]
    # The old member id is fenced everywhere.
    assert c.heartbeat(old_b, gen, instance_id="ib") == ErrorCode.FENCED_INSTANCE_ID
    assert c.sync(old_b, gen, instance_id="ib") == SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID)
    assert c.join(old_b, instance_id="ib").error == ErrorCode.FENCED_INSTANCE_ID
    assert c.heartbeat_deadline(old_b) is None
    assert c.heartbeat(new_b, gen, instance_id="ib") == ErrorCode.NONE


def test_static_leader_replacement_v9_gets_members_with_skip_assignment():
    c, leader, b, gen = stable_static_pair()
    reply = c.join("", instance_id="ia", client_id="ca", version=9)
    new_leader = "ia-uuid3"
    assert reply.value == JoinGroupResult(
        ErrorCode.NONE,
        new_leader,
        gen,
        "consumer",
        "range",
        new_leader,
        True,
        [(new_leader, "ia", b"range-meta"), (b, "ib", b"range-meta")],
    )
    assert c.group().leader_id == new_leader


def test_static_leader_replacement_before_v9_is_told_the_old_leader_id():
    c, leader, b, gen = stable_static_pair()
    reply = c.join("", instance_id="ia", client_id="ca", version=8)
    assert reply.value == JoinGroupResult(ErrorCode.NONE, "ia-uuid3", gen, "consumer", "range", leader)
    assert c.group().leader_id == "ia-uuid3"


def test_static_rejoin_with_changed_protocols_but_same_selection_stays_stable():
    c, leader, b, gen = stable_static_pair()
    # The only common protocol stays "range", so adding one does not change the selection.
    same = c.join("", instance_id="ib", protocols=[("sticky", b""), ("range", b"m")])
    assert same.done and same.value.generation_id == gen
    assert str(c.group().state) == "Stable"


def test_static_rejoin_that_changes_the_selected_protocol_rebalances():
    c = GroupTestContext()
    both = [("range", b""), ("rr", b"")]
    rr_first = [("rr", b""), ("range", b"")]
    i1 = c.join("", instance_id="i1", protocols=both)
    i2 = c.join("", instance_id="i2", protocols=rr_first)
    i3 = c.join("", instance_id="i3", protocols=both)
    i1_again = c.join(i1.value.member_id, instance_id="i1", protocols=both)
    assert i1_again.done and i2.done and i3.done
    group = c.group()
    assert group.protocol_name == "range"  # votes: range 2 (i1, i3), rr 1 (i2)
    c.sync(i1.value.member_id, group.generation_id, [], instance_id="i1")
    assert str(group.state) == "Stable"
    # i3 restarts preferring rr: votes would be rr 2, range 1, so the selection changes.
    swapped = c.join("", instance_id="i3", protocols=rr_first)
    assert not swapped.done
    assert str(group.state) == "PreparingRebalance"


def test_static_rejoin_during_completing_rebalance_triggers_rebalance_kafka_9801():
    c = GroupTestContext()
    a = c.join("", instance_id="ia")
    b = c.join("", instance_id="ib")
    a2 = c.join(a.value.member_id, instance_id="ia")
    gen = a2.value.generation_id
    old_b = b.value.member_id
    assert str(c.group().state) == "CompletingRebalance"
    parked = c.sync(old_b, gen, instance_id="ib")
    # b restarts before the leader syncs: the leader may be assigning to old_b, so rebalance.
    new_b = c.join("", instance_id="ib")
    assert parked.value == SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID)
    assert str(c.group().state) == "PreparingRebalance"
    assert not new_b.done
    a3 = c.join(a2.value.member_id, instance_id="ia")
    assert a3.done and new_b.done
    assert new_b.value.generation_id == a3.value.generation_id == gen + 1
    assert [m for m, _, _ in a3.value.members] == [a2.value.member_id, new_b.value.member_id]


def test_old_static_member_parked_join_is_fenced_when_replaced():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    s = c.join("", instance_id="is")  # a static member joins; rebalance waits for a and b
    assert not s.done
    replacement = c.join("", instance_id="is")
    assert s.done and s.value == JoinGroupResult(ErrorCode.FENCED_INSTANCE_ID, "is-uuid3")
    assert not replacement.done
    c.join(a)
    c.join(b)
    assert replacement.done and replacement.value.member_id == "is-uuid4"
