"""Data-dir layout and work splitting: which partition dirs and segments exist, and the byte
ranges (splits) the verifier scans in parallel.

A split is a byte range [start, end) of one `.log`; `start` is 0 or a position taken from the
segment's `.index` that the planner has confirmed is a real batch start (magic 2, sane length,
valid CRC), so a corrupt index can never make a worker decode from the middle of a batch.
Everything here is plain Python and picklable (splits travel to Spark's Python workers).
Files that are not `<20 digits>.log|.index|.timeindex` are reported, never scanned. Segments
wholly below a partition's log start offset (DeleteRecords: `log-start-offset-checkpoint`, which
kgc deletes at once or on its next retention pass) are not part of the log and are not planned.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from storage.batch import HEADER_SIZE
from storage.batch.scan import Frames
from storage.index import OffsetIndex
from storage.log_start import LOG_START_FILE

__all__ = [
    "Split",
    "PartitionDir",
    "list_partition_dirs",
    "plan_splits",
    "pack",
    "segment_path",
    "active_bases",
    "log_starts",
    "served_segments",
    "Violation",
    "OFFSETS_TOPIC",
]

OFFSETS_TOPIC = "__consumer_offsets"
_DIR = re.compile(r"^(.+)-(\d+)$")
_SEGMENT = re.compile(r"^(\d{20})\.(log|index|timeindex)$")
_SWAP_LEFTOVER = re.compile(r"^(\d{20})\.(log|index|timeindex)\.(cleaned|swap|deleted)$")
_INDEX_ENTRY = OffsetIndex.ENTRY

# (check id, file, position, offset, message): position/offset are None when not applicable.
Violation = tuple[str, str, "int | None", "int | None", str]


def segment_path(directory: str, base: int, ext: str = ".log") -> str:
    return os.path.join(directory, f"{base:020d}{ext}")


@dataclass(frozen=True)
class PartitionDir:
    path: str
    name: str  # e.g. "__consumer_offsets-7": the join key between a before and an after dir
    topic: str
    partition: int
    segments: tuple[int, ...]  # base offsets, ascending
    notes: tuple[Violation, ...] = ()  # layout problems found while listing


@dataclass(frozen=True)
class Split:
    dir: str
    name: str
    topic: str
    partition: int
    segment: int
    start: int
    end: int
    first: bool  # first split of its segment: checks the whole `.index`
    last: bool  # last split of its segment: checks the `.timeindex` and the log end
    next_segment: int | None
    region_end: int  # records at offsets >= this are in the uncleanable region (region 1)
    is_offsets_topic: bool
    num_offsets_partitions: int
    notes: tuple[Violation, ...] = field(default=())  # layout violations to emit once

    @property
    def log_path(self) -> str:
        return segment_path(self.dir, self.segment)


def list_partition_dirs(data_dir: str) -> list[PartitionDir]:
    out: list[PartitionDir] = []
    for name in sorted(os.listdir(data_dir)):
        path = os.path.join(data_dir, name)
        m = _DIR.match(name)
        if not m or not os.path.isdir(path):
            continue
        bases: set[int] = set()
        notes: list[Violation] = []
        for fname in sorted(os.listdir(path)):
            sm = _SEGMENT.match(fname)
            if sm:
                if sm.group(2) == "log":
                    bases.add(int(sm.group(1)))
            elif _SWAP_LEFTOVER.match(fname):
                notes.append(
                    (
                        "S3",
                        os.path.join(path, fname),
                        None,
                        int(fname[:20]),
                        "unfinished cleaner swap file left in the partition dir",
                    )
                )
            elif fname.endswith((".log", ".index", ".timeindex")):
                notes.append(
                    ("S3", os.path.join(path, fname), None, None, "segment file name is not a 20-digit base offset")
                )
        for base in sorted(bases):
            for ext in (".index", ".timeindex"):
                if not os.path.exists(segment_path(path, base, ext)):
                    notes.append(
                        (
                            "S5" if ext == ".index" else "S6",
                            segment_path(path, base, ext),
                            None,
                            base,
                            f"segment {base} has no {ext} file",
                        )
                    )
        out.append(PartitionDir(path, name, m.group(1), int(m.group(2)), tuple(sorted(bases)), tuple(notes)))
    return out


def active_bases(data_dir: str) -> dict[str, int]:
    """Partition dir name -> end of the cleaned range: the active (last) segment's base (Kafka
    never cleans the active segment), or the cleaner-offset-checkpoint if that is lower (the
    offset map filled up, or min.compaction.lag held segments back)."""
    out = {}
    for p in list_partition_dirs(data_dir):
        if p.segments:
            out[p.name] = p.segments[-1]
            ck = _read_checkpoint(os.path.join(p.path, "cleaner-offset-checkpoint"))
            if ck is not None:
                out[p.name] = min(out[p.name], ck)
    return out


def log_starts(data_dir: str) -> dict[str, int]:
    """Partition dir name -> the log start offset DeleteRecords set (only dirs that have one)."""
    out = {}
    for p in list_partition_dirs(data_dir):
        start = _read_checkpoint(os.path.join(p.path, LOG_START_FILE))
        if start is not None:
            out[p.name] = start
    return out


def served_segments(pdir: PartitionDir, log_start: dict[str, int] | None = None) -> list[int]:
    """The dir's segments less those wholly below its log start offset (its own
    log-start-offset-checkpoint or, higher, `log_start`'s entry for it)."""
    own = _read_checkpoint(os.path.join(pdir.path, LOG_START_FILE)) or 0
    start = max(own, (log_start or {}).get(pdir.name, 0))
    bases = pdir.segments
    return [b for i, b in enumerate(bases) if i + 1 == len(bases) or bases[i + 1] > start]


def _read_checkpoint(path: str) -> int | None:
    """Kafka's OffsetCheckpointFile text: version 0, count, then `topic partition offset`."""
    try:
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
        if lines[0].strip() != "0" or int(lines[1]) != 1:
            return None
        return int(lines[2].split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def read_index(path: str) -> list[tuple[int, int]]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    return list(_INDEX_ENTRY.iter_unpack(data[: len(data) - len(data) % 8]))


def _is_batch_start(fd: int, pos: int, size: int) -> bool:
    """A whole, CRC-valid batch starts at `pos` (one header read, then the batch)."""
    return next(iter(Frames(fd, pos, size, check_crc=True, chunk=HEADER_SIZE)), None) is not None


def _split_points(log: str, index: str, size: int, split_bytes: int) -> list[int]:
    if size <= split_bytes:
        return [0]
    points = [0]
    entries = read_index(index)
    target = split_bytes
    fd = os.open(log, os.O_RDONLY)
    try:
        for _, pos in entries:
            if pos < target or pos >= size:
                continue
            if pos > points[-1] and _is_batch_start(fd, pos, size):
                points.append(pos)
                target = pos + split_bytes
    finally:
        os.close(fd)
    return points


def plan_splits(
    data_dir: str,
    *,
    split_bytes: int = 64 << 20,
    region_end: dict[str, int] | None = None,
    num_offsets_partitions: int = 50,
    log_start: dict[str, int] | None = None,
) -> list[Split]:
    """One split per segment, or index-aligned sub-ranges of about `split_bytes` each.
    `region_end` maps a dir name to the first offset of its uncleanable region (default: its
    own active segment base). Segments wholly below a dir's log start offset are skipped: its
    own (log-start-offset-checkpoint) or, higher, `log_start`'s (a before image checked against
    an after image whose DeleteRecords removed them)."""
    splits: list[Split] = []
    for pdir in list_partition_dirs(data_dir):
        notes = pdir.notes
        ends = region_end or {}
        rend = ends.get(pdir.name, pdir.segments[-1] if pdir.segments else 0)
        served = served_segments(pdir, log_start)
        for i, base in enumerate(pdir.segments):
            nxt = pdir.segments[i + 1] if i + 1 < len(pdir.segments) else None
            if base not in served:
                continue  # deleted by DeleteRecords (FORMAT.md, log-start-offset-checkpoint)
            log = segment_path(pdir.path, base)
            size = os.path.getsize(log)
            points = _split_points(log, segment_path(pdir.path, base, ".index"), size, split_bytes)
            for j, start in enumerate(points):
                end = points[j + 1] if j + 1 < len(points) else size
                splits.append(
                    Split(
                        pdir.path,
                        pdir.name,
                        pdir.topic,
                        pdir.partition,
                        base,
                        start,
                        end,
                        j == 0,
                        j == len(points) - 1,
                        nxt,
                        rend,
                        pdir.topic == OFFSETS_TOPIC,
                        num_offsets_partitions,
                        notes,
                    )
                )
                notes = ()
        if notes:  # a dir without segments still reports its layout problems
            splits.append(
                Split(
                    pdir.path,
                    pdir.name,
                    pdir.topic,
                    pdir.partition,
                    -1,
                    0,
                    0,
                    False,
                    False,
                    None,
                    rend,
                    pdir.topic == OFFSETS_TOPIC,
                    num_offsets_partitions,
                    notes,
                )
            )
    return splits


def pack(splits: list[Split], pack_bytes: int, *, whole_dirs: bool = False) -> list[list[Split]]:
    """Consecutive splits (log order, so a task's splits are mostly of one partition and its
    key aggregates merge, rows.task_rows) into bins of about `pack_bytes`; biggest bins first,
    so that on few cores a large one does not start last. `whole_dirs`: a partition dir's
    splits always share a bin (one bigger than `pack_bytes` is a bin of its own), so that a
    task sees every record of its dirs."""
    units: list[list[Split]] = []
    for s in splits:
        if not units or not whole_dirs or units[-1][0].dir != s.dir:
            units.append([])
        units[-1].append(s)
    bins: list[list[Split]] = []
    sizes: list[int] = []
    for unit in units:
        n = sum(s.end - s.start for s in unit)
        if not bins or sizes[-1] + n > pack_bytes:
            bins.append([])
            sizes.append(0)
        bins[-1] += unit
        sizes[-1] += n
    order = sorted(range(len(bins)), key=lambda i: -sizes[i])
    return [bins[i] for i in order]
