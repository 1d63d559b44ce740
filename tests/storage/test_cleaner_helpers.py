"""Shared helpers for the cleaner tests (no tests here): a compacted log builder and the compaction
invariants of storage.md §3.6 (C1 nothing invented, C2 latest survives, C3 dedup below the
round's end, C4 uncleaned bytes untouched) checked against a pre-image."""

from __future__ import annotations

from pathlib import Path

from storage.batch import Record, decode_header, iter_records, verify_crc
from storage.log import Log, LogConfig
from tests.storage.helpers import FakeClock


def compact_config(**overrides) -> LogConfig:
    fields = dict(
        segment_bytes=1024,
        index_interval_bytes=128,
        segment_index_bytes=4096,
        cleanup_policy="compact",
        min_cleanable_dirty_ratio=0.5,
        delete_retention_ms=1000,
        min_compaction_lag_ms=0,
    )
    fields.update(overrides)
    return LogConfig(**fields)


def open_compacted(path: Path, clock: FakeClock, **overrides) -> Log:
    return Log.open(path, compact_config(**overrides), clock)


def put(log: Log, key: bytes, value: bytes | None, **options) -> int:
    return log.append_records([Record(key=key, value=value)], **options)


def records(log: Log) -> list[tuple[int, int, bytes | None, bytes | None, list]]:
    """(offset, timestamp, key, value, headers) of every record, in offset order."""
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in log.iter_records()]  # type: ignore[misc]


def latest(rows) -> dict:
    """key -> (offset, value) of its last record."""
    out = {}
    for off, _, key, value, _ in rows:
        out[key] = (off, value)
    return out


def live_state(rows) -> dict:
    """key -> value after replaying (tombstone = delete)."""
    state = {}
    for _, _, key, value, _ in rows:
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


def check_compacted(pre, post, end: int) -> None:
    """C1-C3 and C7: post is a subsequence of pre, every key's latest record survives,
    below `end` each key appears at most once, and the replayed state is unchanged."""
    pre_by_offset = {row[0]: row for row in pre}
    for row in post:
        assert pre_by_offset.get(row[0]) == row, f"record {row} was invented or altered"
    post_offsets = {row[0] for row in post}
    for key, (off, value) in latest(pre).items():
        if value is not None:
            assert off in post_offsets, f"latest record of {key!r} at {off} was lost"
    seen = set()
    for off, _, key, _, _ in post:
        if off < end and key is not None:
            assert key not in seen, f"{key!r} appears twice below the cleaned end {end}"
            seen.add(key)
    assert live_state(post) == live_state(pre)


def check_structure(log: Log) -> None:
    """S1-S3: every batch CRC-valid, offsets increase across batches and segments, each
    batch lies inside its segment's range."""
    prev_next = log.log_start_offset
    segs = log.segments
    for i, seg in enumerate(segs):
        for _, h, data in seg.iter_batches():
            assert verify_crc(data), f"bad CRC at {h.base_offset}"
            assert h.base_offset >= prev_next and h.base_offset >= seg.base_offset
            rec_offsets = [r.offset for r in iter_records(data)]
            assert len(rec_offsets) == h.records_count
            assert all(h.base_offset <= o <= h.last_offset for o in rec_offsets)
            assert rec_offsets == sorted(set(rec_offsets))
            prev_next = h.next_offset
        if i + 1 < len(segs):
            assert seg.next_offset <= segs[i + 1].base_offset


def batch_headers(log: Log):
    return [h for seg in log.segments for _, h, _ in seg.iter_batches()]


def first_header(raw: bytes):
    return decode_header(raw)
