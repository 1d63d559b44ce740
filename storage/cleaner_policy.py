"""What the cleaner cleans and where it stands (Kafka's LogCleanerManager + CleanerConfig).

Owns the cleaner settings, the per-partition `cleaner-offset-checkpoint` file (first dirty
offset), the dirty-section bounds and ratio (cleanableOffsets), and the grouping of segments
into output segments (Cleaner.groupSegmentsBySize). Invariant: the dirty section never
reaches into the active segment nor past the first segment younger than min.compaction.lag.ms.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from . import fsutil
from .log import Log
from .segment import LogSegment

__all__ = [
    "CleanerConfig",
    "Cleanable",
    "CleanStats",
    "CLEANER_CHECKPOINT_FILE",
    "read_cleaner_checkpoint",
    "write_cleaner_checkpoint",
    "cleanable_info",
    "group_segments_by_size",
]

log = logging.getLogger(__name__)

CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"  # per partition dir (Kafka: per data dir)
_MAX_RELATIVE = 2**31 - 1


@dataclass
class CleanerConfig:
    """Kafka's CleanerConfig, snake_case. The dedupe buffer is the OffsetMap's whole budget."""

    dedupe_buffer_size: int = 128 << 20  # log.cleaner.dedupe.buffer.size
    load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    write_chunk_bytes: int = 32 << 10  # retained batches are appended in chunks of this size


@dataclass
class Cleanable:
    """LogCleanerManager.cleanableOffsets + LogToClean: where the dirty section lies."""

    first_dirty: int
    first_uncleanable: int
    clean_bytes: int
    dirty_bytes: int
    compaction_lag_exceeded: bool = False

    @property
    def ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


@dataclass
class CleanStats:
    first_dirty: int = 0
    end_offset: int = 0
    map_entries: int = 0
    map_full: bool = False
    segments_in: int = 0
    segments_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    batches_copied: int = 0
    batches_rebuilt: int = 0
    batches_emptied: int = 0
    batches_dropped: int = 0
    groups: list[tuple[int, int]] = field(default_factory=list)  # (base, old segment count)


# -- cleaner-offset-checkpoint --------------------------------------------------------------------


def read_cleaner_checkpoint(directory: str) -> int | None:
    """First dirty offset from `cleaner-offset-checkpoint` (OffsetCheckpointFile text), or None
    if the file is missing or unreadable."""
    try:
        with open(os.path.join(directory, CLEANER_CHECKPOINT_FILE), encoding="ascii") as f:
            lines = f.read().split("\n")
        if lines[0].strip() != "0" or int(lines[1]) != 1:
            raise ValueError("unsupported version or count")
        return int(lines[2].split()[-1])
    except FileNotFoundError:
        return None
    except (ValueError, IndexError):
        log.warning("ignoring unreadable %s in %s", CLEANER_CHECKPOINT_FILE, directory)
        return None


def write_cleaner_checkpoint(directory: str, offset: int) -> None:
    name = os.path.basename(os.path.abspath(directory))
    topic, sep, partition = name.rpartition("-")
    if not sep or not partition.isdigit():
        topic, partition = name, "0"
    fsutil.atomic_write(
        os.path.join(directory, CLEANER_CHECKPOINT_FILE), f"0\n1\n{topic} {partition} {offset}\n".encode("ascii")
    )


# -- what to clean --------------------------------------------------------------------------------


def cleanable_info(log_: Log, now_ms: int, checkpoint: int | None) -> Cleanable:
    """LogCleanerManager.cleanableOffsets: the first dirty offset is the checkpoint (the log
    start if missing or out of range); the first uncleanable one is the active segment's base,
    the first offset of an open transaction (Kafka: the last stable offset), or the base of the
    first dirty segment holding a record newer than now - min.compaction.lag."""
    segments = log_.segments
    active = segments[-1]
    first_dirty = checkpoint if checkpoint is not None else log_.log_start_offset
    if not log_.log_start_offset <= first_dirty <= active.base_offset:
        first_dirty = log_.log_start_offset
    first_uncleanable = active.base_offset
    undecided = log_.producer_state.first_undecided_offset()
    if undecided is not None:
        first_uncleanable = min(first_uncleanable, undecided)
    lag = log_.config.min_compaction_lag_ms
    dirty = [s for s in segments[:-1] if s.next_offset > first_dirty]
    if lag > 0:
        for seg in dirty:
            if seg.max_timestamp > now_ms - lag:
                first_uncleanable = min(first_uncleanable, seg.base_offset)
                break
    first_uncleanable = max(first_uncleanable, first_dirty)
    dirty_bytes = sum(s.size for s in dirty if s.base_offset < first_uncleanable)
    clean_bytes = sum(s.size for s in segments[:-1] if s.base_offset < first_dirty)
    lag_exceeded = False
    if dirty_bytes and log_.config.max_compaction_lag_ms < 2**62:
        first_ts = dirty[0].first_batch_timestamp
        lag_exceeded = first_ts is not None and first_ts >= 0 and now_ms - first_ts > log_.config.max_compaction_lag_ms
    return Cleanable(first_dirty, first_uncleanable, clean_bytes, dirty_bytes, lag_exceeded)


def group_segments_by_size(segments: list[LogSegment], max_bytes: int, max_index_bytes: int) -> list[list[LogSegment]]:
    """Cleaner.groupSegmentsBySize: consecutive segments share one output segment while the
    summed .log sizes stay <= segment.bytes, each summed index <= segment.index.bytes, and
    every offset stays within int32 of the group's base."""
    groups: list[list[LogSegment]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        size = group[0].size
        index = group[0].offset_index.size_bytes
        time_index = group[0].time_index.size_bytes
        while rest:
            nxt = rest[0]
            if (
                size + nxt.size > max_bytes
                or index + nxt.offset_index.size_bytes > max_index_bytes
                or time_index + nxt.time_index.size_bytes > max_index_bytes
                or nxt.next_offset - 1 - group[0].base_offset > _MAX_RELATIVE
            ):
                break
            group.append(rest.pop(0))
            size += nxt.size
            index += nxt.offset_index.size_bytes
            time_index += nxt.time_index.size_bytes
        groups.append(group)
    return groups
