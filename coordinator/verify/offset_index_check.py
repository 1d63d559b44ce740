"""The S5 check of a split's `.index` entries (storage.md S5), for scan.py: entry file size,
entries increasing and inside the log, and each entry pointing at a batch start whose base is at
most the entry's offset and after a batch that ends below it, so a floor lookup never starts past
its target. An entry at the split's start whose previous batch lies in an earlier split is
returned (deferred) for the driver to judge.
"""

from __future__ import annotations

import os

from coordinator.verify.layout import Split, Violation

__all__ = ["offset_index_checks"]


def offset_index_checks(
    split: Split,
    entries: list[tuple[int, int]],
    want: dict[int, int],
    found: dict[int, tuple[int, int | None] | None],
    size: int,
    out: list[Violation],
    path: str,
) -> tuple[int, int] | None:
    """S5. An entry (offset, position) is sound when a batch starts at the position, that
    batch's base <= offset, and every earlier batch ends below offset (storage.md S5), so a
    floor lookup never starts past the target. The offset need not lie inside the batch:
    Kafka's older LogSegment.append, like storage's cleaner, indexes a multi-batch chunk by its
    largest offset at the chunk's first position."""
    seg = split.segment
    if split.first:
        fsize = os.path.getsize(path) if os.path.exists(path) else 0
        if fsize % 8:
            out.append(("S5", path, fsize - fsize % 8, None, f"size {fsize} is not a multiple of 8"))
        prev_rel, prev_pos = -1, -1
        for i, (rel, pos) in enumerate(entries):
            if rel <= prev_rel or pos <= prev_pos:
                out.append(
                    (
                        "S5",
                        path,
                        i * 8,
                        seg + rel,
                        f"entry ({rel}, {pos}) does not increase after ({prev_rel}, {prev_pos})",
                    )
                )
            if pos < 0 or pos >= size:
                out.append(("S5", path, i * 8, seg + rel, f"entry position {pos} is outside the log ({size} bytes)"))
            prev_rel, prev_pos = rel, pos
    deferred = None
    for pos, i in want.items():
        off = seg + entries[i][0]
        if pos not in found:
            out.append(("S5", path, i * 8, off, f"entry points at log position {pos}, which is not a batch start"))
            continue
        hit = found[pos]
        if hit is not None:
            base, prev_last = hit
            if base > off:
                out.append(
                    (
                        "S5",
                        path,
                        i * 8,
                        off,
                        f"entry offset {off} is below the base offset {base} of the batch at {pos}",
                    )
                )
            elif prev_last is not None and prev_last >= off:
                out.append(
                    (
                        "S5",
                        path,
                        i * 8,
                        off,
                        f"entry offset {off} is not above the previous batch's last offset {prev_last}",
                    )
                )
            elif prev_last is None and pos == split.start and pos > 0:
                deferred = (i * 8, off)
    return deferred
