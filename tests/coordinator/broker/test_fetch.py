"""Fetch: long polling under MockClock(autojump_threshold=0), size limits, offset range, HW."""

from __future__ import annotations

import trio

from coordinator.broker.fetch import FetchWant, fetch
from coordinator.runtime.clock import TrioClock
from protocol.errors import ErrorCode
from storage.batch import frame_bounds, iter_records
from tests.coordinator.broker.conftest import batch, make_data


def want(offset=0, topic="t", partition=0, max_bytes=1 << 20):
    return FetchWant(topic, partition, offset, max_bytes)


def values(records: bytes) -> list[bytes]:
    out, pos = [], 0
    for pos, _, size in frame_bounds(records):
        out += [r.value for r in iter_records(records[pos : pos + size])]
    return out


async def test_a_waiting_fetch_returns_when_data_arrives(tmp_path, autojump_clock):
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": 1})
    part = data.partition("t", 0)
    got = {}

    async def consumer():
        got["results"] = await fetch(data, [want(0)], max_wait_ms=5000, min_bytes=1, max_bytes=1 << 20)
        got["at"] = trio.current_time()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        await trio.sleep(1)
        assert "results" not in got  # parked, not answered empty
        await part.append(batch(b"hello"), 1 << 20)
    assert got["at"] == 1  # woken by the append, not by the timeout
    assert values(got["results"][0].records) == [b"hello"]
    assert got["results"][0].high_watermark == 1


async def test_a_fetch_with_nothing_to_read_answers_empty_at_max_wait(tmp_path, autojump_clock):
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": 1, "u": 1})
    start = trio.current_time()
    results = await fetch(data, [want(0), want(0, topic="u")], max_wait_ms=750, min_bytes=1, max_bytes=1 << 20)
    assert trio.current_time() - start == 0.75
    assert [(r.error, r.records) for r in results] == [(ErrorCode.NONE, b""), (ErrorCode.NONE, b"")]


async def test_min_bytes_keeps_waiting_until_enough_arrived(tmp_path, autojump_clock):
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": 1})
    part = data.partition("t", 0)
    one = len(batch(b"x" * 10))
    got = {}

    async def consumer():
        got["results"] = await fetch(data, [want(0)], max_wait_ms=5000, min_bytes=one + 1, max_bytes=1 << 20)
        got["at"] = trio.current_time()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        await trio.sleep(1)
        await part.append(batch(b"x" * 10), 1 << 20)
        await trio.sleep(1)
        assert "results" not in got
        await part.append(batch(b"y" * 10), 1 << 20)
    assert got["at"] == 2
    assert values(got["results"][0].records) == [b"x" * 10, b"y" * 10]


async def test_no_wait_when_max_wait_is_zero_or_data_is_there(tmp_path, autojump_clock):
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": 1})
    start = trio.current_time()
    assert (await fetch(data, [want(0)], max_wait_ms=0, min_bytes=1, max_bytes=100))[0].records == b""
    await data.partition("t", 0).append(batch(b"a"), 1 << 20)
    assert values((await fetch(data, [want(0)], max_wait_ms=9000, min_bytes=1, max_bytes=100))[0].records) == [b"a"]
    assert trio.current_time() == start


async def test_max_bytes_whole_batches_and_at_least_one_for_the_first_partition(tmp_path):
    data = make_data(tmp_path, topics={"t": 2})
    p0, p1 = data.partition("t", 0), data.partition("t", 1)
    for i in range(3):
        await p0.append(batch(bytes([65 + i]) * 100), 1 << 20)
    await p1.append(batch(b"z" * 100), 1 << 20)
    size = len(batch(b"a" * 100))
    # A response limit below one batch: the first partition still gets one, the second none.
    results = await fetch(data, [want(0), want(0, partition=1)], max_wait_ms=0, min_bytes=0, max_bytes=10)
    assert values(results[0].records) == [b"A" * 100]
    assert results[1].records == b""
    # Two and a half batches: whole batches only.
    results = await fetch(data, [want(0)], max_wait_ms=0, min_bytes=0, max_bytes=size * 5 // 2)
    assert values(results[0].records) == [b"A" * 100, b"B" * 100]
    # partition_max_bytes bounds each partition; the response limit is shared.
    results = await fetch(
        data, [want(0, max_bytes=size), want(0, partition=1)], max_wait_ms=0, min_bytes=0, max_bytes=size * 2
    )
    assert values(results[0].records) == [b"A" * 100]
    assert values(results[1].records) == [b"z" * 100]
    results = await fetch(
        data, [want(0, max_bytes=size * 2), want(0, partition=1)], max_wait_ms=0, min_bytes=0, max_bytes=size * 2
    )
    assert results[1].records == b""
    # An empty first partition does not use up the oversized-batch allowance.
    results = await fetch(data, [want(1, partition=1), want(0)], max_wait_ms=0, min_bytes=0, max_bytes=10)
    assert results[0].records == b"" and values(results[1].records) == [b"A" * 100]


async def test_offsets_out_of_range_and_unknown_partitions_answer_at_once(tmp_path, autojump_clock):
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": 1})
    await data.partition("t", 0).append(batch(b"a", b"b"), 1 << 20)
    start = trio.current_time()
    results = await fetch(
        data,
        [want(3), want(0, topic="nope"), want(0, partition=5), want(2)],
        max_wait_ms=5000,
        min_bytes=1 << 20,
        max_bytes=1 << 20,
    )
    assert [r.error for r in results] == [
        ErrorCode.OFFSET_OUT_OF_RANGE,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NONE,
    ]
    assert (results[0].high_watermark, results[0].log_start_offset) == (2, 0)
    assert trio.current_time() == start


async def test_offset_below_the_log_start_is_out_of_range(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    for i in range(4):
        await part.append(batch(b"v%d" % i), 1 << 20)
        part.log.roll()
    part.log.delete_segments_before(2)
    assert part.log_start_offset == 2
    results = await fetch(data, [want(1), want(2)], max_wait_ms=0, min_bytes=0, max_bytes=1 << 20)
    assert results[0].error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert values(results[1].records)[0] == b"v2"


async def test_fetch_stops_at_the_high_watermark(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    await part.append(batch(b"durable"), 1 << 20)
    part.log.append_batch(batch(b"not yet durable"))  # appended, high watermark not moved
    results = await fetch(data, [want(0)], max_wait_ms=0, min_bytes=0, max_bytes=1 << 20)
    assert values(results[0].records) == [b"durable"]
    assert results[0].high_watermark == 1
    assert (await fetch(data, [want(1)], max_wait_ms=0, min_bytes=0, max_bytes=1 << 20))[0].error == ErrorCode.NONE


async def test_a_fetch_inside_a_compacted_gap_returns_the_next_batch(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    for i in range(5):
        await part.append(batch(b"v%d" % i), 1 << 20)
    part.log.roll()
    # What the cleaner does: copy the kept batches (offsets 0, 3, 4) into a .cleaned segment and
    # swap it in; offsets 1 and 2 no longer exist.
    old = part.log.segments[0]
    kept = [(h, raw) for h, raw in part.log.iter_batches(0) if h.base_offset in (0, 3, 4)]
    cleaned = part.log.new_cleaned_segment(0)
    for header, raw in kept:
        cleaned.append(raw, header)
    part.log.replace_segments([old], [cleaned])
    results = await fetch(data, [want(1)], max_wait_ms=0, min_bytes=0, max_bytes=1 << 20)
    assert results[0].error == ErrorCode.NONE
    assert values(results[0].records) == [b"v3", b"v4"]


async def test_a_parked_fetch_answers_at_once_when_its_topic_is_deleted(tmp_path, autojump_clock):
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": 1})
    got = {}

    async def consumer():
        got["results"] = await fetch(data, [want(0)], max_wait_ms=5000, min_bytes=1, max_bytes=1 << 20)
        got["at"] = trio.current_time()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        await trio.sleep(1)
        data.delete_topic("t")
    assert got["at"] == 1
    assert got["results"][0].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
