"""The decoded columns of the K rows (rows.DECODED): each key's latest __consumer_offsets record,
decoded for a whole task at once.

Nearly every record of a real log is an OffsetCommitKey (key type 1) with an OffsetCommitValue
v3 or a tombstone: those take a fast path with the same checks as groups.records._decode_offset_commit_v3,
straight into column lists (no record object, no dict per key). Every other record, and every
one the fast path rejects, goes through scan.decode_latest, the reference, so the columns are
the same as decode_latest's row by row (tests/verify/test_fast_scan.py compares them).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from coordinator.verify.scan import decode_latest
from coordinator.verify.share_checks import SHARE_PREFIX, decode_share_latest

__all__ = ["DECODED", "decoded_columns"]

DECODED = ("record_type", "group", "topic", "partition", "committed_offset", "metadata", "decode_error")

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_V3 = struct.Struct(">qih")  # OffsetCommitValue v3: offset, leaderEpoch, metadata length
_COMMIT_KEY = b"\x00\x01"
_V3_PREFIX = b"\x00\x03"


def _names(key: bytes) -> tuple[str, str] | None:
    """(group, topic) of an OffsetCommitKey, or None when its lengths do not add up."""
    (glen,) = _I16.unpack_from(key, 2)
    pos = 4 + glen
    (tlen,) = _I16.unpack_from(key, pos)
    if glen < 0 or tlen < 0 or pos + 2 + tlen + 4 != len(key):
        return None
    return key[4:pos].decode(), key[pos + 2 : pos + 2 + tlen].decode()


def _fast(key: bytes, value: bytes | None, names: dict[bytes, tuple[str, str] | None]) -> tuple[Any, ...] | None:
    """The DECODED values of an OffsetCommitKey with a v3 value or none (a tombstone), or None:
    take the reference path."""
    try:
        prefix = key[:-4]
        if prefix in names:
            gt = names[prefix]
        else:
            gt = names[prefix] = _names(key)
        if gt is None:
            return None
        (partition,) = _I32.unpack_from(key, len(key) - 4)
        if value is None:
            return (1, gt[0], gt[1], partition, None, None, None)
        offset, _epoch, mlen = _V3.unpack_from(value, 2)
        end = 16 + mlen
        if mlen < 0 or end + 8 != len(value):
            return None
        metadata = value[16:end].decode() if mlen else ""
    except (struct.error, UnicodeDecodeError):
        return None
    return (1, gt[0], gt[1], partition, offset, metadata, None)


def decoded_columns(
    keys: Sequence[bytes | None],
    values: Sequence[bytes | None],
    which: Sequence[bool],
    partitions: Sequence[str] | None = None,
) -> dict[str, list[Any]]:
    """DECODED columns for rows whose `which` is true (None everywhere on the others); rows whose
    partition (name) is of __share_group_state are decoded as share-state records."""
    out: list[tuple[Any, ...]] = []
    names: dict[bytes, tuple[str, str] | None] = {}
    none = (None,) * len(DECODED)
    for i, (k, v, d) in enumerate(zip(keys, values, which)):
        if not d:
            out.append(none)
            continue
        if partitions is not None and partitions[i].startswith(SHARE_PREFIX):
            share = decode_share_latest(k, v)
            out.append(tuple(share[n] for n in DECODED))
            continue
        if k is not None and k[:2] == _COMMIT_KEY and (v is None or v[:2] == _V3_PREFIX):
            row = _fast(k, v, names)
            if row is not None:
                out.append(row)
                continue
        ref = decode_latest(k, v)
        out.append(tuple(ref[n] for n in DECODED))
    cols = list(zip(*out)) if out else [() for _ in DECODED]
    return {n: list(c) for n, c in zip(DECODED, cols)}
