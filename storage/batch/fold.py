"""The loader's walk of a segment file: whole batches read straight from the file, CRC-checked,
their records folded into the latest value per key (`fold_latest`) without a header object or
a copy per batch (what `Log.iter_batches` + `fold_latest` per batch cost a load).

Invariant: it folds exactly the batches `Log.iter_batches` would yield from the same position
up to the first one it does not fold, and folds them the same way; it stops before a
transactional or control batch (the loader replays those in order) and before anything that is
not a whole batch with magic 2 and a matching CRC (the caller re-reads from there through
`Log.iter_batches`, which reports it as it always did).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from storage.crc import crc32c

from . import native
from .compression import decompress
from .layout import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    TRANSACTIONAL_BIT,
)
from .record_walk import fold_latest

__all__ = ["FOLD_CHUNK", "Folded", "fold_region"]

FOLD_CHUNK = 1 << 20  # bytes read (and folded) per call: the loader yields to trio between calls
_NOT_PLAIN = TRANSACTIONAL_BIT | CONTROL_BIT


class Folded(NamedTuple):
    """What one `fold_region` call did: `position` is where the next unread batch starts,
    `next_offset` the offset after the last folded batch (-1 if none was), `stopped` True when
    the batch at `position` was not folded (transactional, control, or not a valid batch)."""

    position: int
    next_offset: int
    batches: int
    records: int
    stopped: bool


def fold_region(fd: int, start: int, end: int, latest: dict[bytes, bytes | None], chunk: int = FOLD_CHUNK) -> Folded:
    """Fold the batches of file bytes [start, end) into `latest`, reading about `chunk` bytes
    (at least one whole batch). Returns before `end` when the chunk is used up or at the first
    batch it does not fold. A batch whose records are malformed raises InvalidBatch, as
    `fold_latest` does."""
    left = end - start
    if left < HEADER_SIZE:
        return Folded(start, -1, 0, 0, left > 0)
    buf = os.pread(fd, min(max(chunk, HEADER_SIZE), left), start)
    fields = HEADER.unpack_from(buf, 0) if len(buf) >= HEADER_SIZE else None
    if fields is not None and len(buf) < fields[1] + LOG_OVERHEAD <= left:
        buf = os.pread(fd, fields[1] + LOG_OVERHEAD, start)  # one batch bigger than the chunk
    view = memoryview(buf)
    unpack, fold_records = HEADER.unpack_from, native.KERNELS.fold_records  # fold_latest's loop on bytes
    off, buf_len, batches, keyed, next_offset = 0, len(buf), 0, 0, -1
    while buf_len - off >= HEADER_SIZE:
        base, length, _, magic, crc, attrs, last_delta, _, _, _, _, _, count = unpack(buf, off)
        size = length + LOG_OVERHEAD
        if off + size > buf_len:
            if off and magic == MAGIC and size >= HEADER_SIZE and start + off + size <= end:
                break  # a whole batch the chunk cut: the next call reads it
            return Folded(start + off, next_offset, batches, keyed, True)
        if (
            magic != MAGIC
            or size < HEADER_SIZE
            or attrs & _NOT_PLAIN
            or crc32c(view[off + CRC_START : off + size]) != crc
        ):
            return Folded(start + off, next_offset, batches, keyed, True)
        if attrs & COMPRESSION_MASK:
            data = decompress(attrs & COMPRESSION_MASK, bytes(view[off + HEADER_SIZE : off + size]))
            keyed += fold_latest(data, 0, len(data), count, latest)
        else:
            keyed += fold_records(buf, off + HEADER_SIZE, off + size, count, latest)
        batches += 1
        next_offset = base + last_delta + 1
        off += size
    pos = start + off
    # Stopped: a tail shorter than a header, or no whole batch at `start` (the file shrank).
    return Folded(pos, next_offset, batches, keyed, pos < end and (off == 0 or end - pos < HEADER_SIZE))
