"""`kgc check`: read-only verification of segment files, partition dirs and data dirs. Checks
CRCs, record encoding, offset order, file names, indexes and aborted-transaction indexes (each
entry names an ABORT marker of its producer in its segment) and reports the first problem of each
partition precisely (file, position, offset). Also owns the read-only `.log` walk and the
segment-file naming that `kgc dump` (dump.py) shares. Files are mmapped read-only: safe to run
against a live or crashed directory. Formats: FORMAT.md.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .batch import BatchHeader, InvalidBatch, control_type, crc_matches, iter_records
from .batch.control import ABORT
from .batch.layout import Buffer
from .batch.scan import Frames
from .index import OffsetIndex, TimeIndex
from .txn_index import ENTRY as TXN_ENTRY
from .txn_index import read_entries

__all__ = [
    "check",
    "check_index",
    "Problem",
    "SegmentBatches",
    "SEGMENT_FILE_NAME",
    "segment_files",
    "partition_dirs",
    "zeros_to_end",
]


SEGMENT_FILE_NAME = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)(\.cleaned|\.swap|\.deleted)?$")


@dataclass(frozen=True)
class Problem:
    file: str
    position: int | None
    offset: int | None
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: position {self.position}: offset {self.offset}: {self.reason}"


class SegmentBatches:
    """Read-only walk over a `.log` file (mmapped): yields (position, header, bytes-view) and
    records why it stopped early in `.problem`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problem: Problem | None = None
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self.data: Buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.size = size

    def __iter__(self) -> Iterator[tuple[int, BatchHeader, memoryview]]:
        view = memoryview(self.data)
        frames = Frames(self.data)
        for pos, _, _, fields in frames:
            h = BatchHeader._make(fields)
            yield pos, h, view[pos : pos + h.size]
        if frames.problem is not None:
            p = frames.problem
            self.problem = Problem(self.path, p.position, p.offset, p.reason)


def segment_files(path: str) -> list[str]:
    return sorted(
        os.path.join(path, n)
        for n in os.listdir(path)
        if (m := SEGMENT_FILE_NAME.match(n)) and m.group(2) == "log" and not m.group(3)
    )


def partition_dirs(path: str) -> list[str]:
    if segment_files(path) or any(SEGMENT_FILE_NAME.match(n) for n in os.listdir(path)):
        return [path]
    return sorted(os.path.join(path, n) for n in os.listdir(path) if os.path.isdir(os.path.join(path, n)))


# -- dump ---------------------------------------------------------------------------------------


def check(path: str | os.PathLike[str]) -> list[Problem]:
    """First problem of each partition dir under `path` (or of the single file), [] if sound."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return _check_segment(path, None)[:1]
    problems: list[Problem] = []
    for part in partition_dirs(path):
        problems.extend(_check_partition(part)[:1])
    return problems


def _check_partition(part: str) -> list[Problem]:
    for name in sorted(os.listdir(part)):
        m = SEGMENT_FILE_NAME.match(name)
        if m and m.group(3):
            return [
                Problem(
                    os.path.join(part, name), None, None, f"leftover {m.group(3)} file of an interrupted cleaner swap"
                )
            ]
        if name.endswith((".log", ".index", ".timeindex", ".txnindex", ".snapshot")) and not m:
            return [Problem(os.path.join(part, name), None, None, "segment file name is not a 20-digit base offset")]
    prev_next: int | None = None
    files = segment_files(part)
    for log_file in files:
        # The active segment's index may be zero-filled past its entries (Kafka preallocates it;
        # a crash leaves it so); recovery rebuilds it, so that is not a problem of the data.
        problems = _check_segment(log_file, prev_next, active=log_file == files[-1])
        if problems:
            return problems
        prev_next = _last_next_offset(log_file)
    return []


def _zeros_from(data: Buffer, position: int | None) -> bool:
    view = memoryview(data)[position or 0 :]
    return len(view) > 0 and bytes(view).count(0) == len(view)


def zeros_to_end(path: str, position: int) -> bool:
    """Is the file all zeros from `position` to its end (and not empty there)? The active
    segment's preallocated tail looks so after a crash (FORMAT.md, Preallocation)."""
    with open(path, "rb") as f:
        f.seek(position)
        seen = False
        while chunk := f.read(1 << 16):
            if chunk.count(0) != len(chunk):
                return False
            seen = True
    return seen


def _last_next_offset(log_file: str) -> int | None:
    nxt = None
    for _, h, _ in SegmentBatches(log_file):
        nxt = h.next_offset
    return nxt


def _check_segment(log_file: str, prev_next: int | None, active: bool = True) -> list[Problem]:
    m = SEGMENT_FILE_NAME.match(os.path.basename(log_file))
    if not m:
        return [Problem(log_file, None, None, "segment file name is not a 20-digit base offset")]
    base = int(m.group(1))
    if prev_next is not None and base < prev_next:
        return [
            Problem(log_file, 0, base, f"segment base {base} is below the previous segment's next offset {prev_next}")
        ]
    expected = max(base, prev_next or 0)
    batches = SegmentBatches(log_file)
    for pos, h, view in batches:
        if not crc_matches(view, 0, h.size, h.crc):
            return [Problem(log_file, pos, h.base_offset, "CRC-32C mismatch")]
        if h.base_offset < expected or h.last_offset_delta < 0:
            return [
                Problem(
                    log_file, pos, h.base_offset, f"offsets go backwards: base {h.base_offset} < expected {expected}"
                )
            ]
        try:
            records = list(iter_records(view))
        except InvalidBatch as exc:
            return [Problem(log_file, pos, h.base_offset, f"bad records: {exc}")]
        offsets = [r.offset for r in records if r.offset is not None]
        if (
            len(records) != h.records_count
            or offsets != sorted(set(offsets))
            or (offsets and (offsets[0] < h.base_offset or offsets[-1] > h.last_offset))
        ):
            return [Problem(log_file, pos, h.base_offset, "record offsets are outside the batch or unordered")]
        expected = h.next_offset
    if batches.problem is not None and not (active and _zeros_from(batches.data, batches.problem.position)):
        return [batches.problem]  # (zeros ending the active segment: its preallocated tail, FORMAT.md)
    for is_time in (False, True):
        problems = check_index(log_file, base, is_time, allow_zero_tail=active)
        if problems:
            return problems
    return _check_txn_index(log_file)


def _check_txn_index(log_file: str) -> list[Problem]:
    """Every entry of a `.txnindex` names an ABORT marker of its producer in this segment, in
    increasing order (recovery rewrites the file if a crash lost entries)."""
    path = log_file[:-4] + ".txnindex"
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % TXN_ENTRY.size:
        return [Problem(path, len(data), None, f"size {len(data)} is not a multiple of {TXN_ENTRY.size}")]
    markers = {}
    for _, h, view in SegmentBatches(log_file):
        if h.is_control:
            for r in iter_records(view):
                if control_type(r.key) == ABORT:
                    markers[h.base_offset] = h.producer_id
    prev = -1
    for i, t in enumerate(read_entries(data)):
        if t.last_offset <= prev or t.first_offset > t.last_offset or markers.get(t.last_offset) != t.producer_id:
            return [
                Problem(
                    path,
                    i * TXN_ENTRY.size,
                    t.last_offset,
                    f"aborted transaction entry {i} (producer {t.producer_id}, {t.first_offset}-"
                    f"{t.last_offset}) has no ABORT marker of its producer there, or is out of order",
                )
            ]
        prev = t.last_offset
    return []


def check_index(log_file: str, base: int, is_time: bool, allow_zero_tail: bool = False) -> list[Problem]:
    path = log_file[:-4] + (".timeindex" if is_time else ".index")
    if not os.path.exists(path):
        if allow_zero_tail and os.path.getsize(log_file) == 0:
            # A kill -9 in a roll: the new segment's .log is made before its indexes (segment.py),
            # nothing is appended until they exist, and recovery makes them, as Kafka's LogLoader.
            return []
        return [Problem(path, None, None, "index file is missing")]
    with open(path, "rb") as f:
        data = f.read()
    entry = TimeIndex.ENTRY if is_time else OffsetIndex.ENTRY
    if len(data) % entry.size:
        return [Problem(path, len(data), None, f"size {len(data)} is not a multiple of {entry.size}")]
    if allow_zero_tail:
        used = -(-len(data.rstrip(b"\0")) // entry.size) * entry.size
        data = data[:used]
    headers = {pos: h for pos, h, _ in SegmentBatches(log_file)}
    last_next = max((h.next_offset for h in headers.values()), default=base)
    prev = (-1, -1)
    for i, (a, b) in enumerate(entry.iter_unpack(data)):
        at = i * entry.size
        if is_time:
            if a <= prev[0] and i or b < prev[1] or not base <= base + b < max(last_next, base + 1):
                return [
                    Problem(
                        path,
                        at,
                        base + b,
                        f"time index entry {i} ({a}, {base + b}) is out of order or outside the segment",
                    )
                ]
        else:
            if a <= prev[0] or b <= prev[1]:
                return [Problem(path, at, base + a, f"index entry {i} does not increase")]
            h = headers.get(b)
            if h is None:
                return [Problem(path, at, base + a, f"index entry {i} position {b} is not a batch start")]
            if not h.base_offset <= base + a:
                return [Problem(path, at, base + a, f"index entry {i} offset is below its batch's base")]
        prev = (a, b)
    return []
