"""ShareFetch and ShareAcknowledge through the share service, over a real log and an in-memory
persister, under MockClock(autojump_threshold=0): sessions, acquisition, acknowledgement,
redelivery, lock expiry, long polling and Kafka's error codes."""

from __future__ import annotations

import trio

from coordinator.share.partition import REJECT, RELEASE, AckBatch
from coordinator.share.service import AckPartition
from protocol.errors import ErrorCode
from tests.coordinator.share.harness import make_share


def acquired(answer) -> list[tuple[int, int, int]]:
    return [(a.first_offset, a.last_offset, a.delivery_count) for p in answer.partitions for a in p.acquired]


async def test_a_member_acquires_then_accepts_and_the_start_offset_moves(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    await s.produce(b"a", b"b", b"c")
    first = await s.fetch("m1")
    assert first.error == ErrorCode.NONE and acquired(first) == [(0, 2, 1)]
    assert first.partitions[0].records  # the batch holding them
    second = await s.fetch("m1", acks=[s.ack(0, 2)])
    assert [(p.partition, p.ack_error) for p in second.partitions] == [(0, ErrorCode.NONE)]
    key, start, batches = s.persister.writes[-1]
    assert start == 3 and [(b.first_offset, b.last_offset, b.delivery_state) for b in batches] == [(0, 2, 2)]


async def test_another_member_gets_nothing_until_the_lock_expires_then_a_redelivery(tmp_path, autojump_clock):
    s = make_share(tmp_path, record_lock_duration_ms=30_000)
    await s.produce(b"a", b"b")
    async with trio.open_nursery() as nursery:
        await nursery.start(s.manager.run)
        assert acquired(await s.fetch("m1")) == [(0, 1, 1)]
        assert acquired(await s.fetch("m2")) == []
        await trio.sleep(30.5)  # the lock expires at 30 s on the clock
        assert acquired(await s.fetch("m2")) == [(0, 1, 2)]
        nursery.cancel_scope.cancel()


async def test_release_and_reject(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    await s.produce(b"a", b"b")
    await s.fetch("m1")
    answer = await s.fetch("m1", acks=[AckPartition(s.topic_id, 0, (AckBatch(0, 1, (RELEASE, REJECT)),))])
    assert acquired(answer) == [(0, 0, 2)]  # released record 0 comes back at once; 1 is gone


async def test_session_rules(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    assert (await s.fetch("m1", epoch=3)).error == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert (await s.fetch("m1", epoch=0, acks=[s.ack(0, 0)])).error == ErrorCode.INVALID_REQUEST
    assert (await s.fetch("m1", epoch=0)).error == ErrorCode.NONE
    assert (await s.fetch("m1", epoch=5)).error == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    ack = await s.service.share_acknowledge(s.request("m1", 0, [s.ack(0, 0)]), lambda t: True)
    assert ack.error == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    too_long = s.request("x" * 37, 0)
    assert (await s.service.share_fetch(too_long, lambda t: True)).error == ErrorCode.INVALID_REQUEST


async def test_acknowledgement_errors_are_per_partition_and_change_nothing(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    await s.produce(b"a", b"b")
    await s.fetch("m1")
    await s.fetch("m2")  # a session, nothing acquired
    bad = {
        "other member": s.ack(0, 1),
        "descending": AckPartition(s.topic_id, 0, (AckBatch(1, 0, (1,)),)),
        "type count": AckPartition(s.topic_id, 0, (AckBatch(0, 1, (1, 1, 1)),)),
        "unknown type": AckPartition(s.topic_id, 0, (AckBatch(0, 1, (9,)),)),
    }
    codes = {}
    for name, ack in bad.items():
        answer = await s.fetch("m2", acks=[ack])
        codes[name] = answer.partitions[0].ack_error
    assert codes == {
        "other member": ErrorCode.INVALID_RECORD_STATE,
        "descending": ErrorCode.INVALID_REQUEST,
        "type count": ErrorCode.INVALID_REQUEST,
        "unknown type": ErrorCode.INVALID_REQUEST,
    }
    # m1 still holds both records and can accept them
    assert (await s.fetch("m1", acks=[s.ack(0, 1)])).partitions[0].ack_error == ErrorCode.NONE


async def test_the_final_epoch_releases_the_members_records_unread(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    await s.produce(b"a")
    await s.fetch("m1")
    closed = await s.fetch("m1", epoch=-1)
    assert closed.error == ErrorCode.NONE and acquired(closed) == []
    assert acquired(await s.fetch("m2")) == [(0, 0, 1)]  # delivery count back to 0, then 1


async def test_a_closed_connection_releases_its_sessions_records(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    await s.produce(b"a")
    await s.fetch("m1", connection_id=7)
    await s.manager.connection_closed(7)
    assert s.manager.sessions.get(("g", "m1")) is None
    assert acquired(await s.fetch("m2")) == [(0, 0, 1)]


async def test_a_fetch_waits_for_data_then_answers(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    got = {}

    async def consumer():
        got["answer"] = await s.fetch("m1", max_wait_ms=5000)
        got["at"] = trio.current_time()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        await trio.sleep(1)
        assert "answer" not in got
        await s.produce(b"late")
    assert got["at"] == 1 and acquired(got["answer"]) == [(0, 0, 1)]


async def test_incremental_answers_list_only_partitions_with_news(tmp_path, autojump_clock):
    s = make_share(tmp_path, partitions=2)
    first = await s.fetch("m1", partitions=(0, 1))
    assert sorted(p.partition for p in first.partitions) == [0, 1]  # a new session: all of them
    await s.produce(b"x", partition=1)
    second = await s.fetch("m1", partitions=())
    assert [(p.partition, acquired(type(second)(partitions=[p]))) for p in second.partitions] == [(1, [(0, 0, 1)])]


async def test_a_failed_write_undoes_the_acknowledgement(tmp_path, autojump_clock):
    s = make_share(tmp_path)
    await s.produce(b"a")
    await s.fetch("m1")
    s.persister.fail_writes = 1
    failed = await s.fetch("m1", acks=[s.ack(0, 0)])
    assert failed.partitions[0].ack_error == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert (await s.fetch("m1", acks=[s.ack(0, 0)])).partitions[0].ack_error == ErrorCode.NONE
