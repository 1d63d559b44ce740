"""The cleaner's crash-safe segment swap (Kafka's LocalLog.replaceSegments, and LogLoader's
removeTempFilesAndCollectSwapFiles that finishes or discards it after a crash).

The file suffix is the state (FORMAT.md "Swap"): `.cleaned` (written) -> `.swap` in descending
base order (committed once all are) -> old ones `.deleted` -> `.swap` renamed to final names ->
`.deleted` removed. Invariant: before the first rename nothing the log serves has changed (an
error there leaves the log intact); after it, only `complete_swaps` (on open) decides.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from . import fsutil
from .segment import LogSegment, segment_file_name

__all__ = [
    "CLEANED",
    "SWAP",
    "DELETED",
    "SEGMENT_FILE",
    "new_cleaned",
    "check_replacement",
    "prepare_new",
    "rename_into_place",
    "complete_swaps",
]

CLEANED, SWAP, DELETED = ".cleaned", ".swap", ".deleted"
SEGMENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex)(\.cleaned|\.swap|\.deleted)?$")
_EXTS = (".log", ".index", ".timeindex", ".txnindex")


def new_cleaned(directory: str, base_offset: int, *, index_interval_bytes: int, segment_index_bytes: int) -> LogSegment:
    """An empty `<base>.log.cleaned` segment (step 0; a stale one from an aborted round goes)."""
    for ext in _EXTS:
        _unlink(os.path.join(directory, segment_file_name(base_offset, ext, CLEANED)))
    try:
        return LogSegment(
            directory,
            base_offset,
            suffix=CLEANED,
            active=True,
            index_interval_bytes=index_interval_bytes,
            segment_index_bytes=segment_index_bytes,
        )
    except OSError:  # (a full disk while creating its files): leave none of them behind
        for ext in _EXTS:
            _unlink(os.path.join(directory, segment_file_name(base_offset, ext, CLEANED)))
        raise


def check_replacement(
    segments: Sequence[LogSegment], old: Sequence[LogSegment], new: Sequence[LogSegment]
) -> tuple[int, int]:
    """Check that `new` (sorted by base) may replace `old` in `segments`; returns the index range
    [first, last] of `old` in `segments`. Raises ValueError otherwise. Every old base must lie
    in some new segment's [base, next offset), so that recovery can tell which old segments a
    `.swap` replaces."""
    idx = [i for i, s in enumerate(segments) if any(s is o for o in old)]
    if len(idx) != len(old) or not old or idx != list(range(idx[0], idx[0] + len(old))):
        raise ValueError("old must be consecutive segments of this log")
    if idx[-1] == len(segments) - 1:
        raise ValueError("the active segment cannot be replaced")
    if not new or new[0].base_offset != old[0].base_offset or any(s.suffix != CLEANED for s in new):
        raise ValueError("new must be .cleaned segments starting at old[0]'s base offset")
    for o in old:
        if not any(n.base_offset <= o.base_offset < max(n.next_offset, n.base_offset + 1) for n in new):
            raise ValueError(
                f"old segment {o.base_offset} is not covered by any new segment's "
                f"offset range; keep its last batch (possibly empty)"
            )
    if new[-1].next_offset > segments[idx[-1] + 1].base_offset:
        raise ValueError("new segments overlap the segment after the replaced ones")
    return idx[0], idx[-1]


def prepare_new(new: Sequence[LogSegment]) -> None:
    """Step 1: final time-index entry, trimmed indexes and an fsync of every new segment. An
    OSError here leaves every file where it was (still `.cleaned`)."""
    for seg in new:
        seg.become_inactive()


def rename_into_place(directory: str, old: Sequence[LogSegment], new: Sequence[LogSegment]) -> None:
    """Steps 2-5. An OSError here leaves the directory half-way: the log must fail and be
    reopened, whose recovery (`complete_swaps`) finishes or discards the swap."""
    for seg in sorted(new, key=lambda s: -s.base_offset):
        seg.change_suffix(SWAP)
    fsutil.fsync_dir(directory)  # committed
    for seg in old:
        seg.change_suffix(DELETED)
    for seg in new:
        seg.change_suffix("")
    fsutil.fsync_dir(directory)
    for seg in old:
        seg.delete()


def complete_swaps(directory: str) -> None:
    """Delete `.deleted` and `.cleaned` files and every `.swap` at or above the lowest `.cleaned`
    base (an interrupted step 2: abandon it); complete every other `.swap` (step 3 or 4 was
    interrupted): delete the normal segments it replaces, rename it to the final names."""
    names = os.listdir(directory)
    cleaned_bases, swap_bases = [], set()
    for name in names:
        m = SEGMENT_FILE.match(name)
        if not m or not m.group(3):
            continue
        base, suffix = int(m.group(1)), m.group(3)
        path = os.path.join(directory, name)
        if suffix == DELETED:
            os.unlink(path)
        elif suffix == CLEANED:
            cleaned_bases.append(base)
            os.unlink(path)
        else:
            swap_bases.add(base)
    min_cleaned = min(cleaned_bases, default=None)
    for base in sorted(swap_bases):
        if min_cleaned is not None and base >= min_cleaned:
            for ext in _EXTS:
                _unlink(os.path.join(directory, segment_file_name(base, ext, SWAP)))
            swap_bases.discard(base)
    if not swap_bases:
        if cleaned_bases:
            fsutil.fsync_dir(directory)
        return
    # Each remaining swap replaces the normal segments whose base is in [swapBase, swapNext).
    for base in sorted(swap_bases):
        swap_log = os.path.join(directory, segment_file_name(base, ".log", SWAP))
        if not os.path.exists(swap_log):
            for ext in (".index", ".timeindex", ".txnindex"):
                _unlink(os.path.join(directory, segment_file_name(base, ext, SWAP)))
            continue
        swap = LogSegment(directory, base, index_interval_bytes=4096, segment_index_bytes=0, suffix=SWAP)
        nxt = base
        for _, h in swap.iter_headers(0):  # its index is not trusted yet: scan from 0
            nxt = h.next_offset
        swap.close_unclean()
        for name in os.listdir(directory):
            m = SEGMENT_FILE.match(name)
            if m and not m.group(3) and base <= int(m.group(1)) < max(nxt, base + 1):
                os.unlink(os.path.join(directory, name))
        for ext in _EXTS:
            src = os.path.join(directory, segment_file_name(base, ext, SWAP))
            if os.path.exists(src):
                os.replace(src, os.path.join(directory, segment_file_name(base, ext)))
    fsutil.fsync_dir(directory)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
