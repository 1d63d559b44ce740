"""Random sequences of requests and clock moves never break the group's invariants.

Hypothesis (derandomized, so deterministic) drives a GroupTestContext with joins (dynamic and
static, every JoinGroup version family), syncs, heartbeats, leaves, deletes and sleeps; after
every step the bookkeeping must agree with itself and with the state table.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.groups.group_config import GroupConfig
from coordinator.groups.rebalance import heartbeat_key, join_key
from coordinator.groups.requests import DeleteGroupsParams, LeaveGroupParams, LeavingMember, SyncGroupParams
from coordinator.groups.state import GroupState
from coordinator.runtime.operation import ParkedReply
from tests.support.group_context import GroupTestContext

PROTOCOL_CHOICES = [[("range", b"r")], [("range", b"r2")], [("rr", b"x"), ("range", b"r")]]

step = st.one_of(
    st.tuples(
        st.just("join"),
        st.integers(0, 5),
        st.sampled_from([None, "i1", "i2"]),
        st.sampled_from([3, 4, 9]),
        st.integers(0, 2),
    ),
    st.tuples(st.just("sync"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("heartbeat"), st.integers(0, 5)),
    st.tuples(st.just("leave"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("sleep"), st.sampled_from([1, 1_000, 5_000, 10_000, 30_000, 300_000])),
    st.tuples(st.just("delete")),
)


def check_invariants(c: GroupTestContext) -> None:
    for group_id, group in c.shard.groups.items():
        members = group.members
        assert (group.leader_id is None) == (not members)
        assert group.leader_id is None or group.leader_id in members
        assert group.static_members == {m.group_instance_id: m.member_id for m in members.values() if m.is_static}
        assert set(group.pending_sync_members) <= set(members)
        assert not set(group.pending_join_members) & set(members)
        if group.state is GroupState.EMPTY:
            assert not members
        if group.state is GroupState.PREPARING_REBALANCE:
            assert join_key(group_id) in c.timers
        for member in members.values():
            if member.is_awaiting_join:
                assert group.state is GroupState.PREPARING_REBALANCE
            if member.is_awaiting_sync:
                assert group.state is GroupState.COMPLETING_REBALANCE
            if not (member.is_awaiting_join or member.is_awaiting_sync):
                assert heartbeat_key(group_id, member.member_id) in c.timers
        assert group.state is not GroupState.DEAD


@settings(derandomize=True, max_examples=300, deadline=None)
@given(steps=st.lists(step, max_size=40), delay=st.sampled_from([0, 3_000]))
def test_random_histories_keep_invariants(steps, delay):
    c = GroupTestContext(GroupConfig(initial_rebalance_delay_ms=delay))
    known: list[str] = []  # member ids the "clients" have learned

    def pick(i: int) -> str:
        return known[i % len(known)] if known and i < 5 else ""

    for action, *args in steps:
        group = c.shard.group("g")
        generation = group.generation_id if group else 0
        if action == "join":
            index, instance, version, protocols = args
            answer = c.join(pick(index), instance_id=instance, version=version, protocols=PROTOCOL_CHOICES[protocols])
            value = answer.value if isinstance(answer, ParkedReply) and answer.done else answer
            if not isinstance(value, ParkedReply) and value.member_id:
                known.append(value.member_id)
        elif action == "sync":
            index, as_leader = args
            member_id = (group.leader_id or "") if (group and as_leader) else pick(index)
            assignments = [(m, b"a") for m in group.members] if group and as_leader else []
            c.send(SyncGroupParams("g", generation, member_id, assignments=assignments))
        elif action == "heartbeat":
            c.heartbeat(pick(args[0]), generation)
        elif action == "leave":
            index, by_instance = args
            who = LeavingMember("", "i1") if by_instance else LeavingMember(pick(index))
            c.send(LeaveGroupParams("g", [who]))
        elif action == "sleep":
            c.sleep(args[0])
        else:
            c.send(DeleteGroupsParams(["g"]))
        check_invariants(c)
