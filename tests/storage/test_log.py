"""Segments and the Log: append, roll, read at any offset, timestamps, retention, reopen."""

from __future__ import annotations

import os

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from storage.batch import InvalidBatch, Record, decode_header, encode_batch, iter_records
from storage.log import Log, LogConfig, OffsetOutOfRangeError
from storage.recovery import CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_FILE
from tests.storage.helpers import FakeClock, fill, open_log, read_all


def offsets_in(raw: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(raw):
        h = decode_header(raw, pos)
        out.extend(r.offset for r in iter_records(raw[pos : pos + h.size]))
        pos += h.size
    return out


def test_empty_log(tmp_path):
    log = open_log(tmp_path)
    assert (log.log_start_offset, log.log_end_offset, log.read(0, 100)) == (0, 0, b"")
    assert list(log.iter_records()) == [] and log.offset_for_timestamp(0) is None
    assert (tmp_path / "00000000000000000000.log").exists()


def test_roll_by_size_names_segments_by_base_offset(tmp_path):
    log = open_log(tmp_path, segment_bytes=1000)
    model = fill(log, 40)
    assert len(log.segments) > 5
    for seg, nxt in zip(log.segments, log.segments[1:]):
        assert seg.size <= 1000 and seg.next_offset == nxt.base_offset
        assert os.path.basename(seg.log_path) == f"{seg.base_offset:020d}.log"
    assert read_all(log) == [(o, r.key, r.value) for o, r in model]


def test_roll_by_age(tmp_path):
    clock = FakeClock()
    log = open_log(tmp_path, clock, segment_ms=60_000, segment_bytes=1 << 20)
    fill(log, 2)
    clock.advance(60_001)
    fill(log, 1)
    assert [s.base_offset for s in log.segments] == [0, 6]


def test_read_at_every_offset_returns_the_batch_holding_it(tmp_path):
    log = open_log(tmp_path, segment_bytes=2000)
    model = fill(log, 60, per_batch=4)
    for offset, _ in model:
        raw = log.read(offset, 1)  # max_bytes smaller than a batch: still one whole batch
        h = decode_header(raw)
        assert h.base_offset <= offset <= h.last_offset and len(raw) == h.size
        more = log.read(offset, 700)
        got = offsets_in(more)
        assert got[0] == h.base_offset and len(more) <= max(700, h.size)
        assert got == list(range(got[0], got[0] + len(got)))
    assert log.read(log.log_end_offset, 100) == b""


def test_read_skips_offsets_removed_by_compaction(tmp_path):
    log = open_log(tmp_path)
    # A batch whose records are at offsets 0 and 5 (as a cleaned segment would hold).
    raw = encode_batch(0, [Record(0, 1, b"a", b"1"), Record(5, 1, b"b", b"2")], last_offset_delta=9)
    log.append_batch(raw)
    log.append_records([Record(key=b"c", value=b"3")])
    assert offsets_in(log.read(3, 1)) == [0, 5]
    assert offsets_in(log.read(10, 1)) == [10]
    assert [r.offset for r in log.iter_records(3)] == [5, 10]


def test_append_batch_keeps_client_bytes_and_assigns_offsets(tmp_path):
    log = open_log(tmp_path)
    fill(log, 1)
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=1,
        is_transactional=False,
        producer_id=77,
        producer_epoch=1,
        base_sequence=0,
        batch_size=1 << 20,
    )
    for i in range(4):
        builder.append(i, 1_000 + i, b"k%d" % i, b"v%d" % i, [])
    client = bytes(builder.build())
    assert log.append_batch(client) == (3, 6)
    stored = log.read(3, 1 << 20)
    assert stored[8:] == client[8:] and decode_header(stored).base_offset == 3
    assert [r.offset for r in log.iter_records(3)] == [3, 4, 5, 6]


@pytest.mark.parametrize(
    "damage", [lambda b: b[:30], lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]), lambda b: b[:16] + b"\x01" + b[17:]]
)
def test_append_batch_rejects_bad_batches_and_changes_nothing(tmp_path, damage):
    log = open_log(tmp_path)
    good = encode_batch(0, [Record(None, 5, b"k", b"v")])
    with pytest.raises(InvalidBatch):
        log.append_batch(damage(good))
    assert log.log_end_offset == 0 and log.active_segment.size == 0


def test_offset_for_timestamp_finds_the_first_record_at_or_after(tmp_path):
    log = open_log(tmp_path, segment_bytes=600)
    for i in range(50):
        log.append_records([Record(key=b"k", value=b"v" * 30)], timestamp_ms=1000 + 10 * i)
    assert len(log.segments) > 3
    assert log.offset_for_timestamp(0) == 0
    assert log.offset_for_timestamp(1000 + 10 * 17) == 17
    assert log.offset_for_timestamp(1000 + 10 * 17 + 1) == 18
    assert log.offset_for_timestamp(10**12) is None


def test_index_entries_point_at_batch_starts_every_interval(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=300)
    fill(log, 50)
    seg = log.active_segment
    starts = {pos: h for pos, h in seg.iter_headers()}
    entries = list(zip(seg.offset_index.keys, seg.offset_index.values))
    assert len(entries) > 5 and 0 not in [p for _, p in entries]
    for rel, pos in entries:
        assert pos in starts and starts[pos].last_offset == rel  # (lastOffset, batch start)


def test_indexes_hold_exactly_their_entries_while_active_and_after_roll_and_close(tmp_path):
    log = open_log(tmp_path, segment_bytes=2000, segment_index_bytes=4096)
    fill(log, 5)
    active = log.active_segment
    assert os.path.getsize(active.offset_index.path) == 8 * len(active.offset_index)
    fill(log, 30)
    first = log.segments[0]
    assert os.path.getsize(first.offset_index.path) == 8 * len(first.offset_index)
    assert os.path.getsize(first.time_index.path) == 12 * len(first.time_index) > 0
    log.close()
    for seg in log.segments:
        assert os.path.getsize(seg.offset_index.path) % 8 == 0
        assert os.path.getsize(seg.offset_index.path) < 4096


def test_close_writes_marker_and_checkpoint_and_reopen_trusts_them(tmp_path):
    log = open_log(tmp_path, segment_bytes=800)
    model = fill(log, 30)
    log.close()
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    lines = (tmp_path / RECOVERY_POINT_FILE).read_text().splitlines()
    assert lines[:2] == ["0", "1"] and lines[2].endswith(" 90")
    again = open_log(tmp_path, segment_bytes=800)
    assert again.load_result.clean_shutdown and not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    assert read_all(again) == [(o, r.key, r.value) for o, r in model]
    assert again.append_records([Record(key=b"x", value=b"y")]) == 90


def test_retention_by_time_and_size_never_deletes_the_active_segment(tmp_path):
    clock = FakeClock(10_000)
    log = open_log(tmp_path, clock, segment_bytes=500, retention_ms=5_000)
    for _ in range(20):
        log.append_records([Record(key=b"k", value=b"v" * 100)])
        clock.advance(1_000)
    n = len(log.segments)
    deleted = log.apply_retention(clock.time_ms())
    assert 0 < deleted < n and log.log_start_offset == log.segments[0].base_offset
    assert all(clock.time_ms() - s.max_timestamp <= 5_000 for s in log.segments[:-1])
    assert not list(tmp_path.glob("*.deleted"))
    log.config.retention_bytes = 0
    log.config.retention_ms = -1
    log.apply_retention(clock.time_ms())
    assert len(log.segments) == 1 and log.read(log.log_start_offset, 10)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 10)


def test_unknown_files_in_the_directory_are_ignored(tmp_path):
    (tmp_path / "partition.metadata").write_text("version: 0\n")
    log = open_log(tmp_path)
    fill(log, 2)
    log.close()
    assert read_all(open_log(tmp_path))[-1][0] == 5


def test_log_open_without_clock_is_refused(tmp_path):
    with pytest.raises(ValueError):
        Log.open(tmp_path, LogConfig(), None)


def test_batches_larger_than_the_read_chunk_are_iterated(tmp_path):
    log = open_log(tmp_path, segment_bytes=64 << 20, max_message_bytes=16 << 20)
    big = [Record(key=b"big", value=bytes(5 << 20))]
    log.append_records([Record(key=b"a", value=b"1")])
    log.append_records(big)
    log.append_records([Record(key=b"b", value=b"2")])
    assert [(r.offset, len(r.value)) for r in log.iter_records()] == [(0, 1), (1, 5 << 20), (2, 1)]
    assert len(log.read(1, 10)) > 5 << 20
