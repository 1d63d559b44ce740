"""The compiled twin of envelopes.envelope_checks: the C4/C5 batch-envelope checks over the
frame rows fastscan.py produces, against the other log's trusted batches framed by kernels.py.
Same rules and messages as envelopes.py (tests/verify/test_fast_scan.py holds them equal); a
repeated base offset (an S2 violation) matches any batch with that base.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coordinator.verify import kernels as kn
from coordinator.verify.fastscan import map_file
from coordinator.verify.layout import Violation

__all__ = ["envelope_checks_fast"]


def _other_rows(directory: str, lo: int, hi: int) -> Any:
    """Frame rows of the other log's trusted batches with base in [lo, hi] (envelopes.ranges)."""
    from coordinator.verify.envelopes import ranges

    parts = []
    for log, start, size in ranges(directory, lo, hi):
        mm, buf, _ = map_file(log)
        try:
            hdr, _ = kn.frame(buf, start, size, size, hi)
        finally:
            del buf
            if mm is not None:
                mm.close()
        hdr = hdr[(hdr[:, kn.H_VALID] == 1) & (hdr[:, kn.H_BASE] >= lo)]
        parts.append(hdr)
    return np.concatenate(parts) if parts else np.empty((0, kn.H), np.int64)


def _found(mine: Any, other: Any, cols: list[int]) -> Any:
    """Per row of `mine`: some row of `other` has the same base and the same `cols`."""
    order = np.argsort(other[:, kn.H_BASE], kind="stable")
    o = other[order]
    lo = np.searchsorted(o[:, kn.H_BASE], mine[:, kn.H_BASE], "left")
    hi = np.searchsorted(o[:, kn.H_BASE], mine[:, kn.H_BASE], "right")
    found = np.zeros(len(mine), bool)
    one = hi - lo == 1
    at = np.minimum(lo, max(len(o) - 1, 0))
    if len(o):
        found[one] = np.all(o[at[one]][:, cols] == mine[one][:, cols], axis=1)
    for i in np.flatnonzero(hi - lo > 1):  # repeated base offsets (an S2 violation): any match
        found[i] = bool(np.any(np.all(o[lo[i] : hi[i]][:, cols] == mine[i, cols], axis=1)))
    return found


def envelope_checks_fast(side: str, rows: Any, regions: Any, log: str, other_dir: str) -> list[Violation]:
    """envelopes.envelope_checks over frame rows (same rules, same messages)."""
    from coordinator.verify.envelopes import AFTER

    out: list[Violation] = []
    env = [kn.H_LOD, kn.H_PID, kn.H_PEP, kn.H_SEQ]  # with the base: (base, last, producer)
    for region in (0, 1):
        mine = rows[regions == region]
        if not len(mine) or (region == 0 and side != AFTER):
            continue
        other = _other_rows(other_dir, int(mine[:, kn.H_BASE].min()), int(mine[:, kn.H_BASE].max()))
        if region == 0:
            bad, what = ~_found(mine, other, env), ("C5", "batch envelope (base, last, producer) not in before")
        elif side == AFTER:
            bad, what = (
                ~_found(mine, other, [kn.H_LOD, kn.H_CRC, kn.H_SIZE]),
                ("C4", "uncleanable batch differs from before"),
            )
        else:
            bad, what = ~_found(mine, other, []), ("C4", "uncleanable batch missing after cleaning")
        out += [(what[0], log, int(mine[i, kn.H_POS]), int(mine[i, kn.H_BASE]), what[1]) for i in np.flatnonzero(bad)]
    return out
