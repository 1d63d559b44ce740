"""Removing and replacing a Log's old segments (mixin of log.Log): retention for
cleanup.policy=delete (which segments: retention.py), DeleteRecords' log start offset (its file:
log_start.py) and the cleaner's crash-safe swap of cleaned segments (LocalLog.replaceSegments;
the file steps: swap.py). Invariants: never touches the active segment; a half-done rename fails
the log so that reopening (recovery) finishes it; a new log start offset is durable before it
is served, and segments wholly below it go (at once, or on the next retention pass after a crash).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import fsutil
from .durability import GroupCommitter
from .log_config import Clock, LogConfig, OffsetOutOfRangeError
from .log_start import write_log_start
from .log_txn import LogTransactions
from .recovery import RecoveryPoint
from .retention import segments_past_retention
from .segment import LogSegment
from .swap import DELETED, check_replacement, new_cleaned, prepare_new, rename_into_place

__all__ = ["LogSegmentRemoval"]


class LogSegmentRemoval:
    directory: str
    config: LogConfig
    txns: LogTransactions
    _segments: list[LogSegment]
    _bases: list[int]
    _log_start: int
    _next_offset: int
    _committer: GroupCommitter
    _recovery_point: RecoveryPoint
    clock: Clock

    # Provided by Log (log.py); declared here so this mixin type-checks on its own.
    def _begin_write(self) -> None:
        raise NotImplementedError

    def _fail(self, exc: BaseException) -> None:
        raise NotImplementedError

    @property
    def log_start_offset(self) -> int:
        raise NotImplementedError

    @property
    def log_end_offset(self) -> int:
        raise NotImplementedError

    # -- DeleteRecords --------------------------------------------------------------------------
    def increment_log_start_offset(self, offset: int) -> int:
        """Move the log start offset up to `offset` (UnifiedLog.maybeIncrementLogStartOffset;
        the caller checks Kafka's bound, the high watermark): the checkpoint is written and
        fsynced first, then reads below it are refused, producers whose data is gone are
        forgotten, and the non-active segments wholly below it are deleted (Kafka's
        deleteLogStartOffsetBreachedSegments, which its retention thread runs later). An offset
        at or below the current start changes nothing. Returns the segments deleted. Raises
        OffsetOutOfRangeError past the log end, OSError if the checkpoint cannot be written
        (nothing changed then)."""
        if offset > self.log_end_offset:
            raise OffsetOutOfRangeError(f"offset {offset} is past the log end offset {self.log_end_offset}")
        if offset <= self.log_start_offset:
            return 0
        self._begin_write()
        write_log_start(self.directory, offset)
        self._log_start = offset
        self.txns.on_log_start(offset)
        return self.delete_segments_before(offset)

    def load_log_start(self) -> None:
        """At open: a checkpointed start past the log end (data lost after the checkpoint, with
        log.flush.mode=interval) starts the log afresh there, as Kafka's LogLoader truncates
        fully; producers below the start are forgotten."""
        if self._log_start > self.log_end_offset:
            self._start_afresh_at(self._log_start)
        if self._log_start > self._segments[0].base_offset:
            self.txns.state.evict_before(self._log_start)

    def _start_afresh_at(self, offset: int) -> None:
        """A new empty active segment at `offset`, then every older segment deleted
        (crash-safe: the new one is durable first; recovery removes *.deleted)."""
        self._begin_write()
        old = list(self._segments)
        try:
            old[-1].become_inactive()
            new = LogSegment(
                self.directory,
                offset,
                index_interval_bytes=self.config.index_interval_bytes,
                segment_index_bytes=self.config.segment_index_bytes,
                active=True,
                created_ms=self.clock.time_ms(),
                preallocate_bytes=self.config.preallocate_bytes,
            )
            fsutil.fsync_dir(self.directory)
        except OSError as exc:
            self._fail(exc)
            raise
        self._segments.append(new)
        self._bases.append(offset)
        self._next_offset = offset
        self._committer.advance(offset)
        self._recovery_point.record(offset)
        for _ in old:
            self._delete_oldest()
        self.txns.on_log_start(offset)

    # -- retention ----------------------------------------------------------------------------
    def delete_segments_before(self, offset: int) -> int:
        """Delete non-active segments whose every offset is below `offset`; returns how many."""
        count = sum(1 for s in self._segments[1:] if s.base_offset <= offset)
        for _ in range(count):
            self._delete_oldest()
        if count:
            self.txns.on_log_start(self.log_start_offset)
        return count

    def apply_retention(self, now_ms: int) -> int:
        """Time and size retention for cleanup.policy=delete (retention.py), and segments wholly
        below the log start offset; never deletes the active segment. Returns the number of
        segments deleted."""
        below_start = sum(1 for s in self._segments[1:] if s.base_offset <= self._log_start)
        count = max(below_start, segments_past_retention(self._segments, self.config, now_ms))
        for _ in range(count):
            self._delete_oldest()
        if count:
            self.txns.on_log_start(self.log_start_offset)
        return count

    def _delete_oldest(self) -> None:
        self._begin_write()
        seg = self._segments[0]
        try:
            seg.change_suffix(DELETED)  # crash-safe: recovery removes *.deleted
            del self._segments[0], self._bases[0]
            fsutil.fsync_dir(self.directory)
            seg.delete()
        except OSError as exc:
            self._fail(exc)  # half-renamed files: reopen (recovery) decides
            raise

    # -- the cleaner's swap (LocalLog.replaceSegments) ------------------------------------------
    def new_cleaned_segment(self, base_offset: int) -> LogSegment:
        """An empty `<base>.log.cleaned` segment for the cleaner to append batches to."""
        return new_cleaned(
            self.directory,
            base_offset,
            index_interval_bytes=self.config.index_interval_bytes,
            segment_index_bytes=self.config.segment_index_bytes,
        )

    def replace_segments(self, old: Sequence[LogSegment], new: Sequence[LogSegment]) -> None:
        """Swap cleaned segments `new` (suffix .cleaned, from `new_cleaned_segment`) in for the
        consecutive non-active segments `old`. Crash-safe sequence, FORMAT.md "Swap":
        1 fsync new; 2 rename new .cleaned -> .swap in descending base order, fsync dir (commit);
        3 rename old -> .deleted; 4 rename .swap -> final names, fsync dir; 5 delete .deleted.
        Every old base must lie inside some new segment's [base, next_offset), so that
        recovery can tell which old segments a .swap replaces."""
        self._begin_write()
        old, new = list(old), sorted(new, key=lambda s: s.base_offset)
        first, last = check_replacement(self._segments, old, new)
        prepare_new(new)  # an OSError here changed nothing the log serves: the log stays usable
        try:
            rename_into_place(self.directory, old, new)
        except OSError as exc:
            # The directory is now half-way through the sequence; only recovery (reopen) may
            # finish or discard it (FORMAT.md "Swap").
            self._fail(exc)
            raise
        self._segments[first : last + 1] = new
        self._bases = [s.base_offset for s in self._segments]
