"""Removing and replacing a Log's old segments (mixin of log.Log): retention for
cleanup.policy=delete (which segments: retention.py) and the cleaner's crash-safe swap of cleaned
segments (LocalLog.replaceSegments; the file steps: swap.py). Invariants: never touches the
active segment; a half-done rename fails the log so that reopening (recovery) finishes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import fsutil
from .log_config import LogConfig
from .log_txn import LogTransactions
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

    # Provided by Log (log.py); declared here so this mixin type-checks on its own.
    def _begin_write(self) -> None:
        raise NotImplementedError

    def _fail(self, exc: BaseException) -> None:
        raise NotImplementedError

    @property
    def log_start_offset(self) -> int:
        raise NotImplementedError

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
        """Time and size retention for cleanup.policy=delete (retention.py); never deletes the
        active segment. Returns the number of segments deleted."""
        count = segments_past_retention(self._segments, self.config, now_ms)
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
