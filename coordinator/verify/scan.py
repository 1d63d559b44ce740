"""Scan one split: structural checks (S1-S6, G1) and per-key aggregation of its records.

This is the hot loop of the verifier and runs inside Spark's Python workers (and, with one
split per segment, inside the oracle). Invariants: a batch whose CRC fails contributes no
records and no offsets (its bytes are not trusted); a batch whose records do not parse
contributes no records; framing stops at the first batch that cannot be framed (bad magic,
length, or a torn tail), because a length-prefixed log cannot be resynchronised.
Records are aggregated per (region, key): count, first and last occurrence; the last record of
each key is decoded with groups/records.py, so full decoding costs one call per key per split.
Transactions (txn.py): only plain and committed records are aggregated; records whose marker
lies beyond the split are aggregated apart per (region, producer, key), and the split's
end-transaction markers are listed, for the driver to resolve them.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from typing import Any

from crc32c import crc32c

from coordinator.verify.layout import Split, Violation, read_index, segment_path
from coordinator.verify.offset_index_check import offset_index_checks
from coordinator.verify.txn import AGGREGATE, CONTROL, DEFER, G1, PLAIN, TXN_BITS, batch_modes, read_control
from storage.batch import InvalidBatch, crc_matches
from storage.batch.layout import CONTROL_BIT, DELETE_HORIZON_BIT, TIMESTAMP_TYPE_BIT, Buffer
from storage.batch.record_walk import RecordSpan, record_spans, records_region
from storage.batch.scan import Frames
from storage.index import TimeIndex
from storage.log_check import zeros_to_end

__all__ = ["ScanResult", "Summary", "scan_split", "decode_latest", "checked_spans", "g1_message", "KEY_FIELDS"]

_TIME_ENTRY = TimeIndex.ENTRY

# Per-key aggregate slots (a list, mutated in place for speed).
COUNT, FIRST_OFF, FIRST_POS, LAST_OFF, LAST_POS, LAST_TS, LAST_VH, LAST_TOMB, LAST_HORIZON, LAST_VALUE = range(10)
KEY_FIELDS = (
    "count",
    "first_offset",
    "first_pos",
    "last_offset",
    "last_pos",
    "timestamp",
    "value_hash",
    "tombstone",
    "delete_horizon",
)


@dataclass(slots=True)
class Summary:
    """Where the batch chain of a split started and ended: the driver joins consecutive
    splits with these (offsets increase across splits and segments, S2/S3)."""

    name: str
    dir: str
    segment: int
    start: int
    end: int
    reached: int  # position after the last framed batch
    broken: bool  # framing stopped early (torn tail, bad magic or length)
    first_base: int | None = None  # first CRC-valid batch
    first_pos: int | None = None
    last_offset: int | None = None  # last CRC-valid batch
    last_pos: int | None = None
    batches: int = 0
    records: int = 0
    max_timestamp: int = -1
    txn_batches: int = 0  # trusted transactional and control batches
    log_end: int | None = None  # nextOffset of the last CRC-valid batch (log end offset)
    # (index file position, entry offset) of an index entry at `start` > 0: its "every earlier
    # batch ends below the entry" half of S5 needs the previous split's last offset.
    start_entry: tuple[int, int] | None = None


@dataclass(slots=True)
class ScanResult:
    violations: list[Violation] = field(default_factory=list)
    summary: Summary | None = None
    keys: dict[tuple[int, bytes | None], list[Any]] = field(default_factory=dict)
    # (region, producer id, key) -> aggregate of records whose marker is beyond the split
    deferred: dict[tuple[int, int, bytes | None], list[Any]] = field(default_factory=dict)
    markers: list[tuple[int, int, bool]] = field(default_factory=list)  # (offset, producer id, commit)
    batches: list[tuple] = field(default_factory=list)  # (pos, base, last, crc, size, count, pid, epoch, seq, region)


G1_MESSAGES = {
    1: "record has no key or a key shorter than its int16 type",
    2: "value of key type {kt} is shorter than its int16 version",
    3: "value version {vv} is outside 0-4 for key type {kt}",
    4: "unknown key type {kt}",
}


def g1_message(code: int, kt: int, vv: int) -> str:
    return G1_MESSAGES[code].format(kt=kt, vv=vv)


def _g1(key: bytes | None, value: bytes | None) -> str | None:
    """Cheap per-record schema check of a __consumer_offsets record (G1)."""
    if key is None or len(key) < 2:
        return g1_message(1, 0, 0)
    kt = int.from_bytes(key[:2], "big", signed=True)
    if 0 <= kt <= 2:
        if value is not None:
            if len(value) < 2:
                return g1_message(2, kt, 0)
            vv = int.from_bytes(value[:2], "big", signed=True)
            if not 0 <= vv <= 4:
                return g1_message(3, kt, vv)
        return None
    if 3 <= kt <= 16:  # KIP-848/KIP-932 types: valid Kafka records this coordinator never writes
        return None
    return g1_message(4, kt, 0)


_I64 = 1 << 63


def checked_spans(data: Buffer, pos: int, stop: int, count: int) -> list[RecordSpan]:
    """storage's record_spans, plus: offset and timestamp deltas fit in 64 bits (the Arrow
    columns and the compiled path hold them as int64). Raises InvalidBatch."""
    spans = record_spans(data, pos, stop, count)
    for od, tsd, *_ in spans:
        if not (-_I64 <= od < _I64 and -_I64 <= tsd < _I64):
            raise InvalidBatch(f"offset delta {od} or timestamp delta {tsd} is outside int64")
    return spans


def scan_split(split: Split, *, emit_batches: bool = False) -> ScanResult:
    res = ScanResult(violations=list(split.notes))
    if split.segment < 0:
        return res
    log = split.log_path
    viol = res.violations.append
    fd = os.open(log, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else b""
    finally:
        os.close(fd)
    index_path = segment_path(split.dir, split.segment, ".index")
    entries = read_index(index_path)
    want = {pos: i for i, (_, pos) in enumerate(entries) if split.start <= pos < split.end}
    found: dict[int, tuple[int, int | None] | None] = {}  # entry position -> (base, prev last)
    s = Summary(split.name, split.dir, split.segment, split.start, split.end, split.start, False)
    by_region: tuple[dict, dict] = ({}, {})
    deferred: dict[tuple[int, int], dict] = {}
    rend, is_off = split.region_end, split.is_offsets_topic
    prev_last: int | None = None
    pos, end = split.start, split.end
    txn: dict[int, tuple[int, str | None]] | None = None  # built at the first such batch
    try:
        frames = Frames(mm, pos, size)  # framing only: a CRC-bad batch is reported, then skipped
        for pos, _, _, (base, blen, _, _, crc, attrs, lod, base_ts, max_ts, pid, pep, bseq, count) in frames:
            if pos >= end:
                break
            bsize = blen + 12
            s.reached = pos + bsize
            if pos in want:
                found[pos] = None
            if not crc_matches(mm, pos, bsize, crc):
                viol(("S1", log, pos, base, "CRC-32C mismatch"))
                continue
            last = base + lod
            if lod < 0 or count < 0:
                viol(("S1", log, pos, base, f"negative lastOffsetDelta {lod} or count {count}"))
                continue
            if pos in want:
                found[pos] = (base, prev_last)
            if prev_last is not None and base <= prev_last:
                viol(
                    (
                        "S2",
                        log,
                        pos,
                        base,
                        f"batch base offset {base} is not above the previous batch's last offset {prev_last}",
                    )
                )
            if s.first_base is None:
                s.first_base, s.first_pos = base, pos
            prev_last = last
            s.last_offset, s.last_pos, s.log_end = last, pos, last + 1
            s.batches += 1
            if max_ts > s.max_timestamp:
                s.max_timestamp = max_ts
            horizon = base_ts if attrs & DELETE_HORIZON_BIT else None
            region = 1 if base >= rend else 0
            mode, marker_error = PLAIN, None
            if attrs & TXN_BITS:
                s.txn_batches += 1
                if txn is None:
                    txn = _transactions(mm, pos, end, size, res.markers)
                mode, marker_error = txn[pos]
            if emit_batches:
                res.batches.append((pos, base, last, crc, bsize, count, pid, pep, bseq, region, horizon))
            if count == 0:
                continue
            try:
                data, rpos, rstop = records_region(mm[pos : pos + bsize], 0, bsize, attrs)
                assert isinstance(data, bytes)  # the batch's bytes, or a decompressed blob
                spans = checked_spans(data, rpos, rstop, count)
            except InvalidBatch as exc:
                viol(("S1", log, pos, base, f"records do not parse: {exc}"))
                continue
            s.records += len(spans)
            if marker_error is not None:
                viol(("S1", log, pos, base, marker_error))
            log_append = attrs & TIMESTAMP_TYPE_BIT
            # One dict per region (and producer, for deferred records): no tuple key per record.
            kd = by_region[region] if mode & AGGREGATE else deferred.setdefault((region, pid), {})
            check_g1, collect = is_off and mode & G1, mode & (AGGREGATE | DEFER)
            prev_od = -1
            for od, tsd, kp, kl, vp, vl, _, _, _ in spans:
                if od <= prev_od or od > lod:
                    viol(("S2", log, pos, base + od, f"record offset delta {od} is not increasing within [0, {lod}]"))
                prev_od = od
                if mode == CONTROL:
                    continue
                key = None if kl < 0 else data[kp : kp + kl]
                value = None if vl < 0 else data[vp : vp + vl]
                off = base + od
                ts = max_ts if log_append else base_ts + tsd
                # Fast path for what this coordinator writes (key type 0-2, value version 0-4);
                # anything else takes the full check.
                if check_g1 and not (
                    key is not None
                    and len(key) > 1
                    and key[0] == 0
                    and key[1] <= 2
                    and (value is None or (len(value) > 1 and value[0] == 0 and value[1] <= 4))
                ):
                    why = _g1(key, value)
                    if why:
                        viol(("G1", log, pos, off, why))
                if not collect:
                    continue
                tomb = value is None
                a = kd.get(key)
                if a is None:
                    kd[key] = [1, off, pos, off, pos, ts, -1 if value is None else crc32c(value), tomb, horizon, value]
                else:
                    a[0] += 1
                    a[3] = off
                    a[4] = pos
                    a[5] = ts
                    a[6] = -1 if value is None else crc32c(value)
                    a[7] = tomb
                    a[8] = horizon
                    a[9] = value
        problem = frames.problem
        if problem is not None and preallocated_tail(split, problem.position):
            problem = None  # zeros ending the partition's active segment: not damage (FORMAT.md)
        if problem is not None and problem.position < end:
            # Framing stopped: a torn tail (S4) or bytes that are not a batch (S1).
            viol(("S4" if problem.torn else "S1", log, problem.position, problem.offset, problem.reason))
            s.broken = True
        elif s.reached > end:
            viol(
                (
                    "S5",
                    log,
                    split.end,
                    None,
                    "split boundary taken from the index is not a batch start of the batch chain",
                )
            )
    finally:
        if isinstance(mm, mmap.mmap):
            mm.close()
    res.keys = {(r, k): a for r in (0, 1) for k, a in by_region[r].items()}
    res.deferred = {(r, p, k): a for (r, p), d in deferred.items() for k, a in d.items()}
    s.start_entry = offset_index_checks(split, entries, want, found, size, res.violations, index_path)
    if split.last:
        _time_index_checks(split, s, res.violations)
    res.summary = s
    return res


def preallocated_tail(split: Split, position: int) -> bool:
    """The partition's active segment may end in preallocated zeros after a crash."""
    return split.last and split.next_segment is None and zeros_to_end(split.log_path, position)


def _transactions(
    mm: Any, start: int, end: int, size: int, markers: list[tuple[int, int, bool]]
) -> dict[int, tuple[int, str | None]]:
    """A framing pass from the split's first trusted transactional or control batch (`start`)
    to its end: position -> (mode, marker error) of each such batch; appends the split's markers
    (fastscan does the same over its batch table). A split without them never runs it."""
    rows: list[tuple[int, int, bool | None]] = []
    where: list[tuple[int, str | None]] = []
    for pos, _, _, (base, blen, _, _, crc, attrs, lod, _, _, pid, _, _, count) in Frames(mm, start, size):
        if pos >= end:
            break
        if not attrs & TXN_BITS or lod < 0 or count < 0 or not crc_matches(mm, pos, blen + 12, crc):
            continue
        marker, error = read_control(mm[pos : pos + blen + 12]) if attrs & CONTROL_BIT else (None, None)
        if marker is not None:
            markers.append((base, pid, marker))
        rows.append((pid, attrs, marker))
        where.append((pos, error))
    return {pos: (mode, error) for (pos, error), mode in zip(where, batch_modes(rows))}


def read_time_index(split: Split, s: Summary, out: list[Violation]) -> tuple[str, bytes, int] | None:
    """The split's `.timeindex` for the S6 checks of both scans: (path, its whole 12-byte
    entries, the highest offset an entry may name), None when there is none. A size that is not
    a multiple of 12 is reported here."""
    path = segment_path(split.dir, split.segment, ".timeindex")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    if len(data) % 12:
        out.append(("S6", path, len(data) - len(data) % 12, None, f"size {len(data)} is not a multiple of 12"))
    upper = s.last_offset if s.last_offset is not None else split.segment
    if split.next_segment is not None:
        upper = min(upper, split.next_segment - 1) if s.last_offset is not None else split.next_segment - 1
    return path, data[: len(data) - len(data) % 12], upper


def _time_index_checks(split: Split, s: Summary, out: list[Violation]) -> None:
    found = read_time_index(split, s, out)
    if found is None:
        return
    path, data, upper = found
    prev_ts, prev_rel = None, -1
    for i, (ts, rel) in enumerate(_TIME_ENTRY.iter_unpack(data)):
        off = split.segment + rel
        if prev_ts is not None and ts < prev_ts:
            out.append(("S6", path, i * 12, off, f"timestamp {ts} decreases after {prev_ts}"))
        if rel < prev_rel or rel < 0 or off > upper:
            out.append(
                (
                    "S6",
                    path,
                    i * 12,
                    off,
                    f"offset {off} is out of order or outside the segment [{split.segment}, {upper}]",
                )
            )
        prev_ts, prev_rel = ts, rel


def decode_latest(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decoded __consumer_offsets fields of one record (only the latest per key is decoded)."""
    from coordinator.groups import records as R

    out: dict[str, Any] = {
        "record_type": None,
        "group": None,
        "topic": None,
        "partition": None,
        "committed_offset": None,
        "metadata": None,
        "commit_ts": None,
        "expire_ts": None,
        "decode_error": None,
    }
    if key is None or len(key) < 2:
        out["decode_error"] = "no key"
        return out
    out["record_type"] = int.from_bytes(key[:2], "big", signed=True)
    try:
        rec = R.decode_record(key, value)
    except (R.RecordDecodeError, ValueError) as exc:
        out["decode_error"] = str(exc) or type(exc).__name__
        return out
    if isinstance(rec, R.UnknownRecord):
        return out
    out["group"] = rec.group_id
    if isinstance(rec, (R.OffsetCommitRecord, R.OffsetTombstone)):
        out["topic"], out["partition"] = rec.topic, rec.partition
    if isinstance(rec, R.OffsetCommitRecord):
        out["committed_offset"], out["metadata"] = rec.offset, rec.metadata
        out["commit_ts"], out["expire_ts"] = rec.commit_timestamp_ms, rec.expire_timestamp_ms
    return out
