"""The compiled twin of scan.scan_split: the same violations, split summary, per-key aggregates
and batch envelopes, computed by kernels.py over a memory map of the segment, as arrays.

Python keeps what is per split or rare: decompressing compressed batches (their records are
then walked by the same kernel), the text of each violation, the `.index` and `.timeindex`
checks (numpy, entry by entry as scan.py states them), the modes of transactional and control
batches (txn.py, which reads their markers). A batch whose records the kernel rejects gets its
message from scan.checked_spans, the reference grammar. Needs numpy and numba
(kernels.AVAILABLE); tests/verify/test_fast_scan.py holds it equal to scan.py. Its C4/C5 envelope checks are in
fast_envelopes.py.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coordinator.verify import kernels as kn
from coordinator.verify.layout import Split, Violation, segment_path
from coordinator.verify.scan import Summary, checked_spans, g1_message, preallocated_tail, read_time_index
from coordinator.verify.txn import PLAIN, TXN_BITS, batch_modes, read_control
from storage.batch import HEADER_SIZE, InvalidBatch, records_region
from storage.batch.layout import COMPRESSION_MASK, CONTROL_BIT

__all__ = ["FastResult", "scan_split_fast", "map_file", "index_arrays"]

_NO_LAST = -(1 << 63)  # kernels.frame's "no previous valid batch"
_EMPTY = np.frombuffer(b"", dtype=np.uint8)


@dataclass
class FastResult:
    violations: list[Violation] = field(default_factory=list)
    summary: Summary | None = None
    keys: Any = None  # kernels.records' key table (one row per (region, key), K_* columns;
    # deferred transactional records per (region, producer, key): K_PID >= 0)
    key_bytes: Any = None  # the keys, back to back in row order
    value_hash: Any = None  # CRC-32C of each key's last value, -1 for a tombstone
    values: Any = None  # the last values back to back (want_values), ends in value_ends
    value_ends: Any = None
    batches: Any = None  # frame rows (H_* columns) of the trusted batches
    regions: Any = None  # region of each trusted batch
    markers: list[tuple[int, int, bool]] = field(default_factory=list)  # (offset, producer id, commit)


def map_file(path: str) -> tuple[Any, Any, int]:
    """(mmap or None, uint8 array over it, size) of a whole file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else None
    finally:
        os.close(fd)
    return mm, (np.frombuffer(mm, dtype=np.uint8) if mm is not None else _EMPTY), size


def index_arrays(path: str) -> tuple[Any, Any, int]:
    """(relative offsets, positions, file size) of a `.index` (whole 8-byte entries)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return np.empty(0, np.int64), np.empty(0, np.int64), 0
    e = np.frombuffer(data, dtype=">i4", count=len(data) // 8 * 2).astype(np.int64).reshape(-1, 2)
    return e[:, 0], e[:, 1], len(data)


def scan_split_fast(split: Split, *, want_values: bool = False) -> FastResult:
    res = FastResult(violations=list(split.notes))
    if split.segment < 0:
        return res
    log = split.log_path
    mm, buf, size = map_file(log)
    try:
        _scan(split, log, buf, size, res, want_values)
    finally:
        del buf
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                # A view of the map is still referenced, by garbage in a reference cycle the
                # collector has not reached yet (not by `res`: its arrays are copies). The map
                # closes when that view goes; closing it under the view would be unsafe anyway.
                pass
    return res


def _scan(split: Split, log: str, buf: Any, size: int, res: FastResult, want_values: bool) -> None:
    out = res.violations
    hdr, prob = kn.frame(buf, split.start, split.end, size, (1 << 63) - 1)
    pos, base, lod = hdr[:, kn.H_POS], hdr[:, kn.H_BASE], hdr[:, kn.H_LOD]
    valid = hdr[:, kn.H_VALID] == 1
    for i in np.flatnonzero(~valid):
        r = hdr[i]
        out.append(
            (
                "S1",
                log,
                int(r[kn.H_POS]),
                int(r[kn.H_BASE]),
                "CRC-32C mismatch"
                if not r[kn.H_CRC_OK]
                else f"negative lastOffsetDelta {int(r[kn.H_LOD])} or count {int(r[kn.H_COUNT])}",
            )
        )
    prev = hdr[:, kn.H_PREV_LAST]
    for i in np.flatnonzero(valid & (prev != _NO_LAST) & (base <= prev)):
        out.append(
            (
                "S2",
                log,
                int(pos[i]),
                int(base[i]),
                f"batch base offset {int(base[i])} is not above the previous batch's last offset {int(prev[i])}",
            )
        )
    region = (base >= split.region_end).astype(np.int8)
    src = np.full(len(hdr), -1, np.int64)
    rstart = pos + HEADER_SIZE
    rend = pos + hdr[:, kn.H_SIZE]
    work = valid & (hdr[:, kn.H_COUNT] > 0)
    codec = hdr[:, kn.H_ATTRS] & COMPRESSION_MASK
    src[work & (codec == 0)] = 0
    aux = _decompress(buf, hdr, np.flatnonzero(work & (codec != 0)), src, rstart, rend, log, out)
    mode, txn, marker_errors = _modes(buf, hdr, valid, res.markers)
    status, nrec, viol, keys, kbytes, vh, vals, vends = kn.records(
        buf, aux, hdr, src, rstart, rend, region, mode, split.is_offsets_topic, want_values
    )
    for row, why in marker_errors.items():  # as scan.py: only where the records parse
        if src[row] >= 0 and not status[row]:
            out.append(("S1", log, int(pos[row]), int(base[row]), why))
    for i in np.flatnonzero(status):
        data = buf if src[i] == 0 else aux
        try:
            checked_spans(bytes(data[rstart[i] : rend[i]]), 0, int(rend[i] - rstart[i]), int(hdr[i, kn.H_COUNT]))
            why = "the compiled and the Python record walkers disagree"
        except InvalidBatch as exc:
            why = str(exc)
        out.append(("S1", log, int(pos[i]), int(base[i]), f"records do not parse: {why}"))
    for kind, i, off, code, kt, vv in viol.tolist():
        if kind == kn.V_S2:
            out.append(
                ("S2", log, int(pos[i]), off, f"record offset delta {code} is not increasing within [0, {int(lod[i])}]")
            )
        else:
            out.append(("G1", log, int(pos[i]), off, g1_message(code, kt, vv)))
    s = Summary(split.name, split.dir, split.segment, split.start, split.end, split.start, False)
    if len(hdr):
        s.reached = int(pos[-1] + hdr[-1, kn.H_SIZE])
    vi = np.flatnonzero(valid)
    if len(vi):
        first, last = vi[0], vi[-1]
        s.first_base, s.first_pos = int(base[first]), int(pos[first])
        s.last_offset, s.last_pos = int(base[last] + lod[last]), int(pos[last])
        s.log_end = s.last_offset + 1
        s.batches = len(vi)
        s.max_timestamp = max(-1, int(hdr[vi, kn.H_MAX_TS].max()))
    s.records = int(nrec.sum())
    s.txn_batches = txn
    _problem(split, log, prob, s, out)
    s.start_entry = _index_checks(split, hdr, valid, size, out)
    if split.last:
        _time_index_checks(split, s, out)
    res.summary = s
    res.keys, res.key_bytes, res.value_hash = keys, kbytes, vh
    res.values, res.value_ends = (vals, vends) if want_values else (None, None)
    res.batches, res.regions = hdr[vi], region[vi]


def _modes(buf: Any, hdr: Any, valid: Any, markers: list[tuple[int, int, bool]]) -> tuple[Any, int, dict[int, str]]:
    """txn.py's mode of every batch (PLAIN unless transactional or control), how many trusted
    transactional and control batches there are, and the markers that do not parse (by row)."""
    mode = np.full(len(hdr), PLAIN, np.int8)
    rows = np.flatnonzero(valid & ((hdr[:, kn.H_ATTRS] & TXN_BITS) != 0))
    errors: dict[int, str] = {}
    if not len(rows):
        return mode, 0, errors
    found: list[tuple[int, int, bool | None]] = []
    cols = hdr[rows][:, [kn.H_POS, kn.H_SIZE, kn.H_ATTRS, kn.H_PID, kn.H_BASE]].tolist()
    for i, (p, n, attrs, pid, base) in zip(rows.tolist(), cols):
        marker, error = read_control(bytes(buf[p : p + n])) if attrs & CONTROL_BIT else (None, None)
        if marker is not None:
            markers.append((base, pid, marker))
        if error is not None:
            errors[i] = error
        found.append((pid, attrs, marker))
    mode[rows] = batch_modes(found)
    return mode, len(rows), errors


def _decompress(buf: Any, hdr: Any, rows: Any, src: Any, rstart: Any, rend: Any, log: str, out: list[Violation]) -> Any:
    """Decompress the records of compressed batches into one buffer; point their rows at it."""
    if not len(rows):
        return _EMPTY
    parts, at = [], 0
    for i in rows:
        p, n = int(hdr[i, kn.H_POS]), int(hdr[i, kn.H_SIZE])
        try:
            data, _, _ = records_region(buf, p, n, int(hdr[i, kn.H_ATTRS]))
        except InvalidBatch as exc:
            out.append(("S1", log, p, int(hdr[i, kn.H_BASE]), f"records do not parse: {exc}"))
            continue
        parts.append(bytes(data))
        src[i], rstart[i], rend[i] = 1, at, at + len(data)
        at += len(data)
    return np.frombuffer(b"".join(parts), dtype=np.uint8)


def _problem(split: Split, log: str, prob: Any, s: Summary, out: list[Violation]) -> None:
    kind, pos, left = int(prob[kn.P_KIND]), int(prob[kn.P_POS]), int(prob[kn.P_LEFT])
    base = int(prob[kn.P_BASE]) if prob[kn.P_HAS_BASE] else None
    if kind == 0:
        if s.reached > split.end:
            out.append(
                (
                    "S5",
                    log,
                    split.end,
                    None,
                    "split boundary taken from the index is not a batch start of the batch chain",
                )
            )
        return
    if preallocated_tail(split, pos):
        return  # zeros ending the partition's active segment: not damage (FORMAT.md)
    why = {
        1: f"torn tail: {left} bytes, less than a batch header",
        2: f"bad magic {int(prob[kn.P_MAGIC])}",
        3: f"batch length {int(prob[kn.P_LENGTH])} is too small",
        4: f"torn tail: batch of {int(prob[kn.P_LENGTH]) + 12} bytes, {left} left",
    }[kind]
    out.append(("S4" if kind in (1, 4) else "S1", log, pos, base, why))
    s.broken = True


def _index_checks(split: Split, hdr: Any, valid: Any, size: int, out: list[Violation]) -> tuple[int, int] | None:
    """offset_index_check.offset_index_checks over arrays (same order of checks, same messages)."""
    seg = split.segment
    path = segment_path(split.dir, seg, ".index")
    rel, ipos, fsize = index_arrays(path)
    if split.first:
        if fsize % 8:
            out.append(("S5", path, fsize - fsize % 8, None, f"size {fsize} is not a multiple of 8"))
        prel = np.concatenate(([-1], rel[:-1]))
        ppos = np.concatenate(([-1], ipos[:-1]))
        for i in np.flatnonzero((rel <= prel) | (ipos <= ppos) | (ipos < 0) | (ipos >= size)):
            r, p = int(rel[i]), int(ipos[i])
            if r <= prel[i] or p <= ppos[i]:
                out.append(
                    (
                        "S5",
                        path,
                        int(i) * 8,
                        seg + r,
                        f"entry ({r}, {p}) does not increase after ({int(prel[i])}, {int(ppos[i])})",
                    )
                )
            if p < 0 or p >= size:
                out.append(("S5", path, int(i) * 8, seg + r, f"entry position {p} is outside the log ({size} bytes)"))
    sel = np.flatnonzero((ipos >= split.start) & (ipos < split.end))
    if len(np.unique(ipos[sel])) != len(sel):  # repeated positions: scan.py's dict keeps the last
        last = {int(ipos[i]): int(i) for i in sel}
        sel = np.array([last[p] for p in dict.fromkeys(int(ipos[i]) for i in sel)], np.int64)
    fpos = hdr[:, kn.H_POS]
    j = np.searchsorted(fpos, ipos[sel])
    jc = np.minimum(j, max(len(fpos) - 1, 0))
    hit = (j < len(fpos)) & (fpos[jc] == ipos[sel]) if len(fpos) else np.zeros(len(sel), bool)
    deferred = None
    row = jc[hit]
    ok = np.zeros(len(sel), bool)
    ok[hit] = valid[row] if len(row) else ok[hit]
    off = seg + rel[sel]
    bases = np.full(len(sel), _NO_LAST)
    prevs = np.full(len(sel), _NO_LAST)
    bases[hit], prevs[hit] = hdr[row, kn.H_BASE], hdr[row, kn.H_PREV_LAST]
    below = ok & (bases > off)
    behind = ok & ~below & (prevs != _NO_LAST) & (prevs >= off)
    first = ok & (prevs == _NO_LAST) & (ipos[sel] == split.start) & (split.start > 0)
    for k in np.flatnonzero(~hit | below | behind | first):
        e, p, o = int(sel[k]), int(ipos[sel[k]]), int(off[k])
        if not hit[k]:
            out.append(("S5", path, e * 8, o, f"entry points at log position {p}, which is not a batch start"))
        elif below[k]:
            out.append(
                ("S5", path, e * 8, o, f"entry offset {o} is below the base offset {int(bases[k])} of the batch at {p}")
            )
        elif behind[k]:
            out.append(
                (
                    "S5",
                    path,
                    e * 8,
                    o,
                    f"entry offset {o} is not above the previous batch's last offset {int(prevs[k])}",
                )
            )
        elif first[k] and not below[k]:
            deferred = (e * 8, o)
    return deferred


def _time_index_checks(split: Split, s: Summary, out: list[Violation]) -> None:
    found = read_time_index(split, s, out)
    if found is None:
        return
    path, data, upper = found
    e = np.frombuffer(data, dtype=np.dtype([("ts", ">i8"), ("rel", ">i4")]), count=len(data) // 12)
    ts, rel = e["ts"].astype(np.int64), e["rel"].astype(np.int64)
    off = split.segment + rel
    prel = np.concatenate(([-1], rel[:-1]))
    down = np.zeros(len(ts), bool)
    down[1:] = ts[1:] < ts[:-1]
    bad = (rel < prel) | (rel < 0) | (off > upper)
    for i in np.flatnonzero(down | bad):
        if down[i]:
            out.append(
                ("S6", path, int(i) * 12, int(off[i]), f"timestamp {int(ts[i])} decreases after {int(ts[i - 1])}")
            )
        if bad[i]:
            out.append(
                (
                    "S6",
                    path,
                    int(i) * 12,
                    int(off[i]),
                    f"offset {int(off[i])} is out of order or outside the segment [{split.segment}, {upper}]",
                )
            )


def key_columns(res: FastResult) -> dict[str, Any]:
    """The K-row columns of a scan (pyarrow arrays, imported here: only the source needs them)."""
    import pyarrow as pa

    k = res.keys
    n = len(k)
    ends = np.empty(n + 1, np.int32)
    ends[:n], ends[n] = k[:, kn.K_KOFF], len(res.key_bytes)
    null = k[:, kn.K_NULL] == 1
    validity = pa.py_buffer(np.packbits(~null, bitorder="little")) if null.any() else None
    key = pa.Array.from_buffers(
        pa.binary(), n, [validity, pa.py_buffer(ends), pa.py_buffer(res.key_bytes)], int(null.sum())
    )
    return {
        "region": pa.array(k[:, kn.K_REGION].astype(np.int32)),
        "key": key,
        "count": pa.array(k[:, kn.K_COUNT]),
        "first_offset": pa.array(k[:, kn.K_FIRST_OFF]),
        "first_pos": pa.array(k[:, kn.K_FIRST_POS]),
        "last_offset": pa.array(k[:, kn.K_LAST_OFF]),
        "last_pos": pa.array(k[:, kn.K_LAST_POS]),
        "timestamp": pa.array(k[:, kn.K_TS]),
        "value_hash": pa.array(res.value_hash),
        "tombstone": pa.array(k[:, kn.K_VLEN] < 0),
        "delete_horizon": pa.array(k[:, kn.K_HOR], mask=k[:, kn.K_HAS_HOR] == 0),
        "producer_id": pa.array(k[:, kn.K_PID], mask=k[:, kn.K_PID] < 0),
    }


def last_values(res: FastResult) -> list[bytes | None]:
    """Each key's last value (None for a tombstone); needs want_values."""
    data, ends = bytes(res.values), res.value_ends.tolist()
    return [None if vl < 0 else data[ends[i] : ends[i + 1]] for i, vl in enumerate(res.keys[:, kn.K_VLEN].tolist())]
