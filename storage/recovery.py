"""Loading a partition directory: finish or discard a cleaner swap, open the segments, and
after an unclean stop rescan and repair them (Kafka's LogLoader + LogSegment.recover).

Rules (FORMAT.md "Recovery"): `.deleted` files are removed; `.cleaned` files are removed, and
so is every `.swap` at or above the lowest `.cleaned` base; remaining `.swap` segments replace
the normal segments they cover. Without the clean-shutdown marker every segment holding
offsets at or above the recovery point is rescanned with CRC checks (headers + CRC-32C, no
record decode) and its indexes rebuilt; a torn or corrupt batch in the LAST segment truncates
it there; in any earlier segment it is a CorruptLogError (rolls fsync the old segment, so only
the last one can have a torn tail). Bad or missing indexes are rebuilt in every case.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field

from . import fsutil
from .batch.scan import FrameProblem, Frames
from .segment import LogSegment
from .swap import CLEANED, DELETED, SEGMENT_FILE, SWAP, complete_swaps

__all__ = [
    "CorruptLogError",
    "RecoveryPoint",
    "Resume",
    "resume_point",
    "LoadResult",
    "load_segments",
    "scan_segment",
    "ScanProblem",
    "CLEAN_SHUTDOWN_FILE",
    "RECOVERY_POINT_FILE",
    "read_recovery_point",
    "write_recovery_point",
    "complete_swaps",
    "CLEANED",
    "SWAP",
    "DELETED",
]

log = logging.getLogger(__name__)

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"  # CleanShutdownFileHandler (per partition here)
RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"  # per partition dir here, not per data dir
_SEGMENT_FILE = SEGMENT_FILE
_SCAN_CHUNK = 8 << 20
_RESUME_CHUNK = 64 << 10


class CorruptLogError(Exception):
    """A batch that should be valid is not; never served, never silently dropped."""

    def __init__(self, file: str, position: int, offset: int | None, reason: str) -> None:
        super().__init__(f"{file}: position {position}: offset {offset}: {reason}")
        self.file, self.position, self.offset, self.reason = file, position, offset, reason


# Why a recovery scan stopped: a torn tail, bytes that are not a batch, or offsets out of order.
ScanProblem = FrameProblem


@dataclass
class LoadResult:
    segments: list[LogSegment]
    recovery_point: int
    clean_shutdown: bool
    truncated_bytes: int = 0  # cut from the last segment (a torn batch, or preallocated zeros)
    rescanned_bytes: int = 0  # bytes checked batch by batch (after the recovery point)
    marker_removed: bool = False  # the clean-shutdown marker was unlinked, not yet fsynced
    rebuilt_indexes: list[str] = field(default_factory=list)


# -- checkpoint and marker files ------------------------------------------------------------------


def read_recovery_point(directory: str) -> int:
    """Kafka's OffsetCheckpointFile text: version 0, entry count, `topic partition offset`."""
    path = os.path.join(directory, RECOVERY_POINT_FILE)
    try:
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return 0
    try:
        if lines[0].strip() != "0" or int(lines[1]) != 1:
            raise ValueError("unsupported version or count")
        return int(lines[2].split()[-1])
    except (ValueError, IndexError):
        log.warning("ignoring unreadable %s; recovering from offset 0", path)
        return 0


class RecoveryPoint:
    """A partition's recovery point: every segment below the one holding it, and that
    segment's data and index entries below it, are fsynced. `record` never moves it back and
    may be called from a worker thread (Log.checkpoint) while the log's thread rolls."""

    def __init__(self, directory: str, offset: int) -> None:
        self.directory = directory
        self.offset = offset
        self._lock = threading.Lock()

    def record(self, offset: int) -> None:
        with self._lock:
            if offset >= self.offset:
                write_recovery_point(self.directory, offset)
                self.offset = offset


def write_recovery_point(directory: str, offset: int) -> None:
    name = os.path.basename(os.path.abspath(directory))
    topic, sep, partition = name.rpartition("-")
    if not sep or not partition.isdigit():
        topic, partition = name, "0"
    fsutil.atomic_write(
        os.path.join(directory, RECOVERY_POINT_FILE), f"0\n1\n{topic} {partition} {offset}\n".encode("ascii")
    )


# -- scanning -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a rescan may start instead of byte 0 (see `resume_point`): the batch at `position`
    carries the segment's last trusted index entry; `max_timestamp` / `offset_of_max` are the
    segment's facts up to and including it."""

    position: int
    max_timestamp: int
    offset_of_max: int


def resume_point(seg: LogSegment, recovery_point: int) -> Resume | None:
    """The last offset-index entry of `seg` below the recovery point, when the entries up to it
    are sound and a CRC-valid batch holding its offset starts at its position: Log.checkpoint
    fsynced the data and the index entries below the recovery point, so only what follows that
    entry needs a rescan. The indexes are cut to the trusted prefix and collect the rest in
    memory. None: rescan from byte 0."""
    oi, ti = seg.offset_index, seg.time_index
    limit, size = recovery_point - seg.base_offset, seg.size
    count, rel, pos = 0, -1, -1
    for r, p in zip(oi.keys, oi.values):
        if r >= limit or r <= rel or p <= pos or p >= size:
            break
        count, rel, pos = count + 1, r, p
    if not count:
        return None
    first = next(iter(Frames(seg.fd, pos, size, check_crc=True, chunk=_RESUME_CHUNK)), None)
    if first is None or not first[3][0] <= seg.base_offset + rel <= first[3][0] + first[3][6]:
        return None
    # Time entries appended up to that index entry are exactly those with offset <= it.
    tcount, ts, trel = 0, None, -1
    for t, r in zip(ti.keys, ti.values):
        if r > rel or r < trel or (ts is not None and t <= ts):
            break
        tcount, ts, trel = tcount + 1, t, r
    if ts is None:
        return None
    oi.truncate_entries(count)
    ti.truncate_entries(tcount)
    oi.defer_writes()
    ti.defer_writes()
    return Resume(pos, ts, seg.base_offset + trel)


def scan_segment(seg: LogSegment, *, rebuild: bool, resume: Resume | None = None) -> tuple[int, ScanProblem | None]:
    """Walk every batch of `seg` from position 0 (or from `resume`) checking size, magic, CRC
    and offset order. Returns (bytes of valid batches, first problem or None). With `rebuild`,
    the indexes and in-memory facts are rebuilt from the valid batches (LogSegment.recover);
    the indexes then wait in memory for `persist`. This loop is the recovery hot path:
    batch.Frames unpacks each header once and checks its CRC, nothing decodes records and
    nothing allocates per batch here (LogSegment.append's index rule is inlined)."""
    if rebuild and resume is None:
        seg.reset_for_rebuild()
    base = seg.base_offset
    interval = seg.index_interval_bytes
    index_append, time_append = seg.offset_index.append, seg.time_index.maybe_append
    since = 0  # from a resume point too: its batch carries the last entry (LogSegment.append)
    max_ts, offset_of_max, first_ts = -1, base, None
    start = 0
    if resume is not None:
        start, max_ts, offset_of_max = resume.position, resume.max_timestamp, resume.offset_of_max
    prev_next = base
    max_rel = base + 2**31 - 1
    valid = start
    problem = None
    frames = Frames(seg.fd, start, seg.size, check_crc=True, chunk=_SCAN_CHUNK)
    for pos, _, _, (base_offset, length, _, _, _, _, last_delta, _, batch_max_ts, _, _, _, _) in frames:
        last = base_offset + last_delta
        if base_offset < prev_next or last_delta < 0 or last > max_rel:
            problem = ScanProblem(
                pos,
                base_offset,
                f"offsets [{base_offset}, {last}] go backwards "
                f"(previous next offset {prev_next}) or overflow "
                f"the segment",
                False,
            )
            break
        prev_next = last + 1
        batch_size = length + 12
        if rebuild:
            if first_ts is None:
                first_ts = batch_max_ts
            if batch_max_ts > max_ts:
                max_ts, offset_of_max = batch_max_ts, last
            if since > interval:
                index_append(last, pos)
                time_append(max_ts, offset_of_max)
                since = 0
            since += batch_size
        valid = pos + batch_size
    else:
        problem = frames.problem
    if rebuild:
        seg.set_rebuilt_facts(
            next_offset=prev_next,
            max_timestamp=max_ts,
            offset_of_max_timestamp=offset_of_max,
            first_batch_timestamp=None if resume else first_ts,
            bytes_since_last_index_entry=since,
        )
    return valid, problem


# -- loading ------------------------------------------------------------------------------------


def load_segments(directory: str, *, index_interval_bytes: int, segment_index_bytes: int) -> LoadResult:
    """Open (and if needed recover) every segment of a partition directory."""
    complete_swaps(directory)
    marker = os.path.join(directory, CLEAN_SHUTDOWN_FILE)
    clean = os.path.exists(marker)
    recovery_point = read_recovery_point(directory)
    names = os.listdir(directory)
    bases = sorted(
        int(m.group(1)) for m in map(_SEGMENT_FILE.match, names) if m and m.group(2) == "log" and not m.group(3)
    )
    # An index without its .log (left by a crash between two unlinks) must not be picked up
    # by a future segment with the same base.
    for m in map(_SEGMENT_FILE.match, names):
        if m and m.group(2) != "log" and not m.group(3) and int(m.group(1)) not in bases:
            os.unlink(os.path.join(directory, m.group(0)))
    segments = [
        LogSegment(directory, b, index_interval_bytes=index_interval_bytes, segment_index_bytes=segment_index_bytes)
        for b in bases
    ]
    result = LoadResult(segments, recovery_point, clean)
    try:
        _check_and_recover(result, directory)
    except BaseException:
        for seg in result.segments:
            seg.close_unclean()
        raise
    if not result.segments:
        result.segments.append(
            LogSegment(directory, 0, index_interval_bytes=index_interval_bytes, segment_index_bytes=segment_index_bytes)
        )
    result.segments[-1].make_active()
    if clean:
        # A later crash must not look clean: the owner fsyncs the directory before its first
        # write (Log does), so opening a clean log costs no fsync.
        os.unlink(marker)
        result.marker_removed = True
    return result


def _check_and_recover(result: LoadResult, directory: str) -> None:
    segments = result.segments
    i = 0
    while i < len(segments):
        seg = segments[i]
        is_last = i == len(segments) - 1
        next_base = None if is_last else segments[i + 1].base_offset
        needs_recovery = not result.clean_shutdown and (next_base is None or next_base > result.recovery_point)
        reason = None if needs_recovery else _index_problem(seg)
        if needs_recovery or reason:
            if reason:
                log.warning("rebuilding indexes of %s: %s", seg.log_path, reason)
                result.rebuilt_indexes.append(seg.log_path)
            resume = None
            if needs_recovery and seg.base_offset < result.recovery_point:
                resume = resume_point(seg, result.recovery_point)
            valid, problem = scan_segment(seg, rebuild=True, resume=resume)
            result.rescanned_bytes += valid - (resume.position if resume else 0)
            if problem is not None:
                if not is_last:
                    raise CorruptLogError(seg.log_path, problem.position, problem.offset, problem.reason)
                if _all_zeros(seg.fd, valid, seg.size):  # e.g. a preallocated tail: no data lost
                    log.info("cutting %d bytes of zeros off %s at %d", seg.size - valid, seg.log_path, valid)
                else:
                    log.warning(
                        "truncating %s at position %d (%s): %d bytes dropped",
                        seg.log_path,
                        problem.position,
                        problem.reason,
                        seg.size - valid,
                    )
                result.truncated_bytes += seg.size - valid
                seg.truncate_to_size(valid)
            seg.offset_index.persist()  # a full disk raises here: the open fails as a whole
            seg.time_index.persist()
        if next_base is not None and seg.next_offset > next_base:
            raise CorruptLogError(
                seg.log_path,
                seg.size,
                seg.next_offset,
                f"segment ends at offset {seg.next_offset}, past the next segment's base {next_base}",
            )
        i += 1


def _all_zeros(fd: int, start: int, end: int, chunk: int = 1 << 16) -> bool:
    while start < end:
        data = os.pread(fd, min(chunk, end - start), start)
        if not data or data.count(0) != len(data):
            return False
        start += len(data)
    return True


def _index_problem(seg: LogSegment) -> str | None:
    if not seg.offset_index.existed or not seg.time_index.existed:
        return "index file missing"
    problem = seg.offset_index.problem(seg.size)
    if problem:
        return f"offset index: {problem}"
    problem = seg.time_index.problem(seg.next_offset)
    if problem:
        return f"time index: {problem}"
    return None
