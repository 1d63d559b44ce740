"""The single-writer runtime under trio's MockClock(autojump_threshold=0): concurrent joins,
parked syncs, durability before replies, and timers (session, rebalance, initial delay). Real
runtime, shards and writer on real files (tests/support/runtime.py)."""

import pytest
import trio

from coordinator.groups.offset_requests import CommitPartition, OffsetCommitParams
from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.requests import HeartbeatParams, JoinGroupParams, SyncGroupParams
from protocol.errors import ErrorCode
from tests.support.runtime import GroupHarness


@pytest.fixture
def make_runtime(tmp_path):
    def make(**settings):
        harness = GroupHarness(tmp_path, **settings)
        return harness, harness.writer

    return make


def join_params(member_id="", client_id="c", **kw) -> JoinGroupParams:
    return JoinGroupParams(
        group_id="g",
        member_id=member_id,
        client_id=client_id,
        client_host="h",
        session_timeout_ms=kw.pop("session_ms", 10_000),
        rebalance_timeout_ms=kw.pop("rebalance_ms", 30_000),
        protocol_type="consumer",
        protocols=[("range", client_id.encode())],
        **kw,
    )


async def join(runtime: GroupHarness, client_id: str, member_id: str = "", **kw):
    """Join as a v9 client does: first MEMBER_ID_REQUIRED, then rejoin with the given id."""
    if not member_id:
        first = await runtime.service.join_group(join_params("", client_id, **kw))
        assert first.error == ErrorCode.MEMBER_ID_REQUIRED
        member_id = first.member_id
    return await runtime.service.join_group(join_params(member_id, client_id, **kw))


async def test_three_concurrent_joins_get_one_generation_and_one_leader(autojump_clock, make_runtime):
    runtime, writer = make_runtime(initial_rebalance_delay_ms=3_000)
    results = {}

    async def member(name: str, start_delay: float) -> None:
        await trio.sleep(start_delay)
        results[name] = await join(runtime, name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.runtime.run)
        async with trio.open_nursery() as joiners:
            for i, name in enumerate(["a", "b", "c"]):
                joiners.start_soon(member, name, i * 0.5)
        nursery.cancel_scope.cancel()

    assert {r.error for r in results.values()} == {ErrorCode.NONE}, results
    assert {r.generation_id for r in results.values()} == {1}
    assert {r.leader for r in results.values()} == {"a-u1"}
    assert [m for m, _, _ in results["a"].members] == ["a-u1", "b-u2", "c-u3"]
    assert results["b"].members == [] and results["c"].members == []
    # Delay 3 s after a; b (0.5 s) and c (1 s) arrived meanwhile -> one extension, to 6 s.
    assert trio.current_time() == 6.0
    assert writer.records == [GroupMetadataRecord("g", "", 0, None, None, 0, ())]


async def test_sync_parks_followers_until_the_leader_syncs_and_its_record_is_durable(autojump_clock, make_runtime):
    runtime, writer = make_runtime()
    a = await join(runtime, "a")
    order = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.runtime.run)
        b_join = trio.Event()
        b_result = {}

        async def join_b():
            b_result["join"] = await join(runtime, "b")
            b_join.set()

        nursery.start_soon(join_b)
        await trio.sleep(1)
        a2 = await runtime.service.join_group(join_params(a.member_id, "a"))  # a rejoins: generation 2
        await b_join.wait()
        gen = a2.generation_id
        b_id = b_result["join"].member_id

        async def follower_sync():
            result = await runtime.service.sync_group(SyncGroupParams("g", gen, b_id))
            order.append(("follower", result.assignment, trio.current_time()))

        nursery.start_soon(follower_sync)
        await trio.sleep(5)
        assert order == []  # still parked: the leader has not synced
        writer.hold()

        async def leader_sync():
            result = await runtime.service.sync_group(
                SyncGroupParams("g", gen, a.member_id, assignments=[(a.member_id, b"A"), (b_id, b"B")])
            )
            order.append(("leader", result.assignment, trio.current_time()))

        nursery.start_soon(leader_sync)
        await trio.sleep(2)
        assert order == []  # the assignment is applied but not durable: nobody is answered
        assert runtime.group("g").state.value == "Stable"
        writer.release()
        await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert sorted(order) == [("follower", b"B", 8.0), ("leader", b"A", 8.0)]
    assert writer.durable_count == len(writer.records) == 2


async def test_silent_member_is_removed_after_session_timeout_others_told_to_rejoin(autojump_clock, make_runtime):
    runtime, writer = make_runtime()
    answers = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.runtime.run)
        a = await join(runtime, "a")
        a_id = a.member_id
        await runtime.service.sync_group(SyncGroupParams("g", 1, a_id, assignments=[(a_id, b"A")]))
        b_reply = {}
        b_joined = trio.Event()

        async def join_b():
            b_reply["r"] = await join(runtime, "b")
            b_joined.set()

        nursery.start_soon(join_b)
        await trio.sleep(1)
        # a heartbeats and is told to rejoin; it rejoins, generation 2 forms with a and b.
        answers.append((await runtime.service.heartbeat(HeartbeatParams("g", 1, a_id))).error)
        a2 = await runtime.service.join_group(join_params(a_id, "a"))
        await b_joined.wait()
        b_id = b_reply["r"].member_id
        assert a2.generation_id == b_reply["r"].generation_id == 2

        async def sync_b():
            await runtime.service.sync_group(SyncGroupParams("g", 2, b_id))

        nursery.start_soon(sync_b)
        await runtime.service.sync_group(SyncGroupParams("g", 2, a_id, assignments=[(a_id, b"A"), (b_id, b"B")]))
        # Only a keeps heartbeating; b goes silent and is dropped after its 10 s session.
        for _ in range(4):
            await trio.sleep(3)
            answers.append((await runtime.service.heartbeat(HeartbeatParams("g", 2, a_id))).error)
        group = runtime.group("g")
        assert list(group.members) == [a_id]
        # a rejoins, so generation 3 forms with a alone at once.
        a3 = await runtime.service.join_group(join_params(a_id, "a"))
        assert a3.generation_id == 3 and a3.members == [(a_id, None, b"a")]
        nursery.cancel_scope.cancel()
    assert answers == [
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.NONE,
        ErrorCode.NONE,
        ErrorCode.NONE,
        ErrorCode.REBALANCE_IN_PROGRESS,
    ]


async def test_rebalance_timeout_removes_members_that_do_not_rejoin(autojump_clock, make_runtime):
    runtime, writer = make_runtime()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.runtime.run)
        a = await join(runtime, "a", session_ms=60_000)
        b_reply = {}
        b_joined = trio.Event()

        async def join_b():
            b_reply["r"] = await join(runtime, "b", session_ms=60_000)
            b_joined.set()

        nursery.start_soon(join_b)
        await trio.sleep(0.5)
        a2 = await runtime.service.join_group(join_params(a.member_id, "a", session_ms=60_000))
        await b_joined.wait()
        b_id = b_reply["r"].member_id
        nursery.start_soon(runtime.service.sync_group, SyncGroupParams("g", 2, b_id))
        await runtime.service.sync_group(SyncGroupParams("g", 2, a.member_id, assignments=[]))
        start = trio.current_time()
        # b asks for a rebalance by rejoining with new metadata; a (session 60 s) never rejoins.
        rejoin = await runtime.service.join_group(
            JoinGroupParams("g", b_id, 60_000, "consumer", [("range", b"new")], 30_000, client_id="b")
        )
        assert trio.current_time() - start == 30.0  # the group's rebalance timeout
        assert rejoin.generation_id == 3 and rejoin.leader == b_id
        assert list(runtime.group("g").members) == [b_id]
        nursery.cancel_scope.cancel()
    del a2


async def test_timer_driven_changes_are_written_too(autojump_clock, make_runtime):
    runtime, writer = make_runtime()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(runtime.runtime.run)
        a = await join(runtime, "a")
        await runtime.service.sync_group(SyncGroupParams("g", 1, a.member_id, assignments=[(a.member_id, b"A")]))
        assert len(writer.records) == 2  # new group, generation 1 with its assignment
        await trio.sleep(10)  # the only member never heartbeats: its session expires
        await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert runtime.group("g").state.value == "Empty"
    assert writer.records[2] == GroupMetadataRecord("g", "consumer", 2, None, None, 10_000, ())
    assert writer.durable_count == 3


async def test_a_manual_clock_moves_only_when_told_and_timers_fire_at_their_deadlines(tmp_path, autojump_clock):
    """clock.mode=manual: a silent member survives any amount of real (here: trio) time, and
    is expired exactly when the clock is set past its session timeout (fire_due waits for its
    records)."""
    from coordinator.runtime.clock import ManualClock
    from tests.support.runtime import GroupHarness

    clock = ManualClock(start_ms=0)
    harness = GroupHarness(tmp_path, clock=clock)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(harness.runtime.run)
        a = await join(harness, "a")
        await harness.service.sync_group(SyncGroupParams("g", 1, a.member_id, assignments=[(a.member_id, b"A")]))
        await trio.sleep(3600)  # an hour of trio time: the manual clock did not move
        assert harness.group("g").state.value == "Stable"
        clock.set_time(9_999)
        await harness.runtime.fire_due()
        assert harness.group("g").state.value == "Stable"
        clock.set_time(10_000)  # the session timeout
        await harness.runtime.fire_due()
        assert harness.group("g").state.value == "Empty"
        nursery.cancel_scope.cancel()


async def test_an_op_without_records_waits_only_while_a_write_of_its_partition_is_pending(autojump_clock, make_runtime):
    # Kafka's CoordinatorRuntime: a write op without records completes at once unless a write is pending.
    runtime, writer = make_runtime()
    a = await join(runtime, "a")
    await runtime.service.sync_group(SyncGroupParams("g", 1, a.member_id, assignments=[(a.member_id, b"A")]))
    writer.hold()
    heartbeat = HeartbeatParams("g", 1, a.member_id)
    with trio.fail_after(1):  # nothing pending: answered without a durability wait
        assert (await runtime.service.heartbeat(heartbeat)).error == ErrorCode.NONE
    answered = []
    async with trio.open_nursery() as nursery:

        async def commit():
            params = OffsetCommitParams("g", [("t", [CommitPartition(0, 5)])], 1, a.member_id)
            answered.append(("commit", (await runtime.service.commit_offsets(params)).error))

        async def beat():
            answered.append(("heartbeat", (await runtime.service.heartbeat(heartbeat)).error))

        nursery.start_soon(commit)
        await trio.sleep(1)
        nursery.start_soon(beat)  # the commit's record is not durable yet: the heartbeat waits for it
        await trio.sleep(1)
        assert answered == []
        writer.release()
    assert sorted(answered) == [("commit", ErrorCode.NONE), ("heartbeat", ErrorCode.NONE)]
    assert (await runtime.service.heartbeat(heartbeat)).error == ErrorCode.NONE
