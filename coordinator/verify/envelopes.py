"""C4 and C5 inside the scan task: a split's batch envelopes against the other log's batches at
the same offsets, read there and then, so no batch envelope is shuffled.

Both logs of a partition are laid out by offset, so the other log's batches with base offsets
in [lo, hi] sit in the segments whose bases bracket that range, from the `.index` entry at or
below lo (an entry is sound when earlier batches end below it, storage.md S5; a position that
is not a CRC-valid batch start falls back to the segment start). Trusted batches (CRC-valid,
non-negative lastOffsetDelta and count) count, as in the scan. Rules, with a batch identified
by its base offset: after-side region 0, C5: some before batch has the same (base, last,
producerId, producerEpoch, baseSequence); region 1, C4: some before batch has the same (base,
last, crc, size); before-side region 1, C4: the after log has a batch with that base.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from coordinator.verify.layout import Violation, _is_batch_start, segment_path
from storage.batch import Frames, crc_matches

__all__ = ["envelope_checks", "Batch", "AFTER", "BEFORE"]

AFTER, BEFORE = "after", "before"
_SEGMENT = re.compile(r"^(\d{20})\.log$")
_ENTRY = struct.Struct(">ii")
# (position, base, last, crc, size, producer id, producer epoch, base sequence, region, file)
Batch = tuple[int, int, int, int, int, int, int, int, int, str]
_segments: dict[str, tuple[int, ...]] = {}  # per worker process: the logs do not change under us


def _bases(directory: str) -> tuple[int, ...]:
    got = _segments.get(directory)
    if got is None:
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            names = []
        got = _segments[directory] = tuple(sorted(int(m.group(1)) for n in names if (m := _SEGMENT.match(n))))
    return got


def _floor_position(index_path: str, rel: int) -> int:
    """Log position of the last `.index` entry whose relative offset is <= rel (binary search
    over the file's bytes), or 0."""
    try:
        with open(index_path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return 0
    lo, hi = 0, len(data) // 8 - 1
    best = 0
    while lo <= hi:
        mid = (lo + hi) // 2
        r, pos = _ENTRY.unpack_from(data, mid * 8)
        if r <= rel:
            best, lo = pos, mid + 1
        else:
            hi = mid - 1
    return best


def ranges(directory: str, lo: int, hi: int) -> list[tuple[str, int, int]]:
    """(log path, start position, size) to walk for the batches with base in [lo, hi]."""
    bases = _bases(directory)
    out = []
    for i, seg in enumerate(bases):
        nxt = bases[i + 1] if i + 1 < len(bases) else None
        if seg > hi or (nxt is not None and nxt <= lo):
            continue
        log = segment_path(directory, seg)
        size = os.path.getsize(log)
        start = _floor_position(segment_path(directory, seg, ".index"), lo - seg) if lo > seg else 0
        if start:
            fd = os.open(log, os.O_RDONLY)
            try:
                if start >= size or not _is_batch_start(fd, start, size):
                    start = 0
            finally:
                os.close(fd)
        out.append((log, start, size))
    return out


def _walk_py(log: str, start: int, size: int, hi: int) -> Iterable[Batch]:
    fd = os.open(log, os.O_RDONLY)
    try:
        for pos, buf, off, f in Frames(fd, start, size):
            base, blen, crc, lod, pid, pep, seq, count = f[0], f[1], f[4], f[6], f[9], f[10], f[11], f[12]
            if base > hi:
                return
            if lod >= 0 and count >= 0 and crc_matches(buf, off, blen + 12, crc):
                yield pos, base, base + lod, crc, blen + 12, pid, pep, seq, 0, log
    finally:
        os.close(fd)


def other_batches_py(directory: str, lo: int, hi: int) -> list[Batch]:
    return [b for log, start, size in ranges(directory, lo, hi) for b in _walk_py(log, start, size, hi) if b[1] >= lo]


def envelope_checks(side: str, batches: Sequence[Batch], other_dir: str) -> list[Violation]:
    """The pure-Python rules (see the module docstring) for one split's trusted batches."""
    out: list[Violation] = []
    r0 = [b for b in batches if b[8] == 0]
    r1 = [b for b in batches if b[8] == 1]
    if side == AFTER and r0:
        have = {
            (b[1], b[2], b[5], b[6], b[7])
            for b in other_batches_py(other_dir, min(b[1] for b in r0), max(b[1] for b in r0))
        }
        out += [
            ("C5", b[9], b[0], b[1], "batch envelope (base, last, producer) not in before")
            for b in r0
            if (b[1], b[2], b[5], b[6], b[7]) not in have
        ]
    if r1:
        other = other_batches_py(other_dir, min(b[1] for b in r1), max(b[1] for b in r1))
        if side == AFTER:
            same = {(b[1], b[2], b[3], b[4]) for b in other}
            out += [
                ("C4", b[9], b[0], b[1], "uncleanable batch differs from before")
                for b in r1
                if (b[1], b[2], b[3], b[4]) not in same
            ]
        else:
            there = {b[1] for b in other}
            out += [
                ("C4", b[9], b[0], b[1], "uncleanable batch missing after cleaning") for b in r1 if b[1] not in there
            ]
    return out


def as_batches(rows: Any, regions: Any, log: str) -> list[Batch]:
    """scan.ScanResult.batches tuples as `Batch`es."""
    return [(r[0], r[1], r[2], r[3], r[4], r[6], r[7], r[8], region, log) for r, region in zip(rows, regions)]
