"""Produce validation (Kafka's LogValidator order), ListOffsets lookups and retention."""

from __future__ import annotations

import struct

from coordinator.broker.offsets import list_offset
from coordinator.runtime.clock import FakeClock
from protocol.errors import ErrorCode
from storage.batch import COMPRESSION_GZIP, COMPRESSION_ZSTD
from tests.coordinator.broker.conftest import batch, make_data


async def test_batches_are_stored_as_sent_compressed_or_not(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    sent = [batch(b"a", b"b", compression=COMPRESSION_GZIP), batch(b"c", compression=COMPRESSION_ZSTD)]
    result = await part.append(sent[0] + sent[1], 1 << 20)  # two batches in one request
    assert (result.error, result.base_offset, result.log_start_offset) == (ErrorCode.NONE, 0, 0)
    stored = [raw for _, raw in part.log.iter_batches(0)]
    assert stored[0][8:] == sent[0][8:]  # only the base offset was rewritten
    assert stored[1][:8] == struct.pack(">q", 2) and stored[1][8:] == sent[1][8:]


async def test_each_bad_batch_is_refused_with_kafkas_error(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    good = batch(b"value")
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    old_magic = bytearray(good)
    old_magic[16] = 1
    moved = bytearray(good)
    moved[0:8] = struct.pack(">q", 5)
    cases = {
        bytes(bad_crc): ErrorCode.CORRUPT_MESSAGE,
        bytes(old_magic): ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
        good[:-3]: ErrorCode.CORRUPT_MESSAGE,  # length says more bytes than were sent
        good + b"\x00\x00": ErrorCode.CORRUPT_MESSAGE,  # trailing garbage
        bytes(moved): ErrorCode.CORRUPT_MESSAGE,  # producers send base offset 0
    }
    for records, error in cases.items():
        assert (await part.append(records, 1 << 20)).error == error
    too_big = await part.append(good, len(good) - 1)
    assert too_big.error == ErrorCode.MESSAGE_TOO_LARGE
    assert part.log_end_offset == 0  # nothing was stored
    assert (await part.append(good, len(good))).error == ErrorCode.NONE


async def test_list_offsets_earliest_latest_and_by_timestamp(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await part.append(batch(b"a", b"b", ts=1000), 1 << 20)  # offsets 0-1 at 1000, 1001
    await part.append(batch(b"c", ts=5000), 1 << 20)  # offset 2 at 5000
    await part.append(batch(b"d", ts=3000), 1 << 20)  # offset 3 at 3000 (timestamps need not grow)
    assert list_offset(part, -2) == (ErrorCode.NONE, -1, 0)
    assert list_offset(part, -1) == (ErrorCode.NONE, -1, 4)
    assert list_offset(part, 0) == (ErrorCode.NONE, 1000, 0)
    assert list_offset(part, 1001) == (ErrorCode.NONE, 1001, 1)
    assert list_offset(part, 1002) == (ErrorCode.NONE, 5000, 2)
    assert list_offset(part, 5001) == (ErrorCode.NONE, -1, -1)
    assert list_offset(part, -3) == (ErrorCode.NONE, 5000, 2)


async def test_list_offsets_never_passes_the_high_watermark(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await part.append(batch(b"a", ts=1000), 1 << 20)
    part.log.append_batch(batch(b"b", ts=2000))  # not durable yet
    assert list_offset(part, -1) == (ErrorCode.NONE, -1, 1)
    assert list_offset(part, 1500) == (ErrorCode.NONE, -1, -1)


async def test_retention_by_size_deletes_whole_old_segments(tmp_path):
    data = make_data(tmp_path, topics={"t": 1}, log_retention_bytes=1)
    part = data.partition("t", 0)
    for i in range(3):
        await part.append(batch(b"v%d" % i), 1 << 20)
        part.log.roll()
    await part.append(batch(b"active"), 1 << 20)
    assert data.apply_retention() == 3
    assert part.log_start_offset == 3
    assert len(part.log.segments) == 1  # the active segment is never deleted


async def test_retention_by_time_uses_the_clock_and_per_topic_overrides(tmp_path):
    clock = FakeClock(10_000)
    data = make_data(tmp_path, clock=clock)
    data.create_topic("short", 1, {"retention.ms": "1000"})
    data.create_topic("long", 1, {})
    for name in ("short", "long"):
        part = data.partition(name, 0)
        await part.append(batch(b"old", ts=9_000), 1 << 20)
        part.log.roll()
        await part.append(batch(b"new", ts=10_000), 1 << 20)
    assert data.apply_retention() == 0  # 1000 ms old is not older than 1000 ms
    clock.advance(1)
    assert data.apply_retention() == 1
    assert data.partition("short", 0).log_start_offset == 1
    assert data.partition("long", 0).log_start_offset == 0


async def test_retention_forgets_producers_whose_batches_are_gone(tmp_path):
    data = make_data(tmp_path, topics={"t": 1}, log_retention_bytes=1)
    part = data.partition("t", 0)
    await part.append(batch(b"a", producer_id=3, epoch=0, seq=0), 1 << 20)
    part.log.roll()
    await part.append(batch(b"b"), 1 << 20)
    data.apply_retention()
    assert 3 not in part.producers.producers
    # Like Kafka after KIP-360: the forgotten producer may continue at its next sequence.
    assert (await part.append(batch(b"c", producer_id=3, epoch=0, seq=1), 1 << 20)).error == ErrorCode.NONE


async def test_logs_reopen_cleanly_with_their_data(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    await data.partition("t", 0).append(batch(b"a", b"b"), 1 << 20)
    data.close()
    assert (tmp_path / "t-0" / ".kafka_cleanshutdown").exists()
    again = make_data(tmp_path).partition("t", 0)
    assert (again.log_end_offset, again.high_watermark) == (2, 2)
    assert again.log.load_result.clean_shutdown


async def test_the_retention_task_runs_every_check_interval_and_close_marks_clean(tmp_path, autojump_clock):
    import trio

    from coordinator.runtime.clock import TrioClock

    data = make_data(
        tmp_path, clock=TrioClock(0), topics={"t": 1}, log_retention_bytes=1, log_retention_check_interval_ms=60_000
    )
    part = data.partition("t", 0)
    await part.append(batch(b"old"), 1 << 20)
    part.log.roll()
    await part.append(batch(b"new"), 1 << 20)
    async with trio.open_nursery() as nursery:
        await nursery.start(data.run)
        await trio.sleep(59)
        assert part.log_start_offset == 0  # not checked yet
        await trio.sleep(2)
        assert part.log_start_offset == 1
        nursery.cancel_scope.cancel()
    assert (tmp_path / "t-0" / ".kafka_cleanshutdown").exists()


async def test_stored_batches_carry_leader_epoch_minus_one(tmp_path):
    from storage.batch import Record, encode_batch

    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    sent = encode_batch(0, [Record(None, 1000, b"k", b"v")], partition_leader_epoch=7)
    assert (await part.append(sent, 1 << 20)).error == ErrorCode.NONE
    [(header, raw)] = list(part.log.iter_batches(0))
    assert header.partition_leader_epoch == -1 and raw[16:] == sent[16:]
