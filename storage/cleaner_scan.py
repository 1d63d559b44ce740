"""The cleaner's fast byte-level helpers: walk a segment's batches in big reads, list each
batch's (offset delta, key, tombstone?) without building Record objects, and build the
header-only empty batch that keeps an offset envelope.

Only what the cleaner's hot loops need; the full record grammar, compression and encoding
stay in batch.py (compressed batches are decoded with `batch.iter_records`). Invariants: every
batch handed out has passed its CRC-32C check (the cleaner never spreads corrupt bytes), and
the scanner stops at a torn tail exactly as LogSegment.iter_batches does.
"""

from __future__ import annotations

import os
import struct
from typing import Iterator

from crc32c import crc32c

from .batch import HEADER_SIZE, InvalidBatch, MAGIC, iter_records
from .recovery import CorruptLogError
from .segment import LogSegment

__all__ = ["scan_batches", "record_entries", "empty_batch", "header_fields", "rebuild_uncompressed",
           "READ_CHUNK", "Scanned"]

READ_CHUNK = 8 << 20
# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")
_CONTROL_BIT, _DELETE_HORIZON_BIT = 0x20, 0x40

# (position, buf, offset in buf, base, size, attributes, last_offset_delta, base_ts, max_ts,
#  producer_id, records_count)
Scanned = tuple


def scan_batches(seg: LogSegment, *, check_crc: bool = True, chunk: int = READ_CHUNK) -> Iterator[Scanned]:
    """Every whole batch of `seg` from position 0, read `chunk` bytes at a time. The batch is
    buf[off:off + size]; `buf` is shared by the batches of one read (no per-batch copy)."""
    fd, end = seg.fd, seg.size
    unpack = _HEADER.unpack_from
    pos, buf, buf_start = 0, b"", 0
    while end - pos >= HEADER_SIZE:
        off = pos - buf_start
        if off + HEADER_SIZE > len(buf):
            buf, buf_start, off = os.pread(fd, min(chunk, end - pos), pos), pos, 0
        (base, length, _, magic, crc, attrs, last_delta, base_ts, max_ts, pid, _, _,
         count) = unpack(buf, off)
        size = length + 12
        if magic != MAGIC or size < HEADER_SIZE:
            raise CorruptLogError(seg.log_path, pos, base, f"bad magic {magic} or length {length}")
        if pos + size > end:
            return  # torn tail (only possible in a crashed active segment; never cleaned)
        if off + size > len(buf):
            buf, buf_start, off = os.pread(fd, max(min(chunk, end - pos), size), pos), pos, 0
        if check_crc and crc32c(memoryview(buf)[off + 21:off + size]) != crc:
            raise CorruptLogError(seg.log_path, pos, base, "CRC-32C mismatch")
        yield pos, buf, off, base, size, attrs, last_delta, base_ts, max_ts, pid, count
        pos += size


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise InvalidBatch("varint longer than 10 bytes")


def record_entries(buf: bytes, off: int, size: int, attrs: int, count: int
                   ) -> list[tuple[int, bytes | None, bool, int]]:
    """(offset delta, key or None, is tombstone, start of the record in buf) of each record
    of the batch at buf[off:] (a record ends where the next starts, the last at off + size).
    Uncompressed batches are walked in place with one-byte varint fast paths; compressed
    ones go through batch.iter_records (start is then -1)."""
    if attrs & 0x07:
        batch = buf[off:off + size]
        base = _HEADER.unpack_from(batch, 0)[0]
        return [(r.offset - base, r.key, r.value is None, -1) for r in iter_records(batch)]  # type: ignore[operator]
    out = []
    append = out.append
    pos, end = off + HEADER_SIZE, off + size
    try:
        for _ in range(count):
            start = pos
            b = buf[pos]
            if b < 0x80:
                length, pos = b >> 1, pos + 1  # a record length is never negative
            elif buf[pos + 1] < 0x80:  # 64..8191 bytes: two-byte length
                length, pos = ((b & 0x7F) | (buf[pos + 1] << 7)) >> 1, pos + 2
            else:
                length, pos = _varint(buf, pos)
            nxt = pos + length
            p = pos + 1  # record attributes
            while buf[p] >= 0x80:  # timestampDelta: skipped
                p += 1
            p += 1
            b = buf[p]
            if b < 0x80:
                delta, p = (b >> 1) ^ -(b & 1), p + 1
            else:
                delta, p = _varint(buf, p)
            b = buf[p]
            if b < 0x80:
                klen, p = (b >> 1) ^ -(b & 1), p + 1
            else:
                klen, p = _varint(buf, p)
            if klen < 0:
                key = None
            else:
                key = buf[p:p + klen]
                p += klen
            append((delta, key, buf[p] == 0x01, start))  # valueLength zigzag(-1) = 0x01: tombstone
            pos = nxt
    except IndexError:
        raise InvalidBatch("records run past the end of the batch") from None
    if pos != end:
        raise InvalidBatch(f"records end at {pos - off}, the batch at {size}")
    return out


def empty_batch(base: int, last_offset_delta: int, partition_leader_epoch: int, attrs: int,
                max_ts: int, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
    """A header-only batch (recordsCount 0) keeping the offset envelope and producer fields,
    as Kafka's DefaultRecordBatch.writeEmptyHeader: no compression, no delete horizon,
    baseTimestamp -1, maxTimestamp of the original batch."""
    out = bytearray(HEADER_SIZE)
    attrs &= ~(0x07 | _DELETE_HORIZON_BIT)
    _HEADER.pack_into(out, 0, base, HEADER_SIZE - 12, partition_leader_epoch, MAGIC, 0, attrs,
                      last_offset_delta, -1, max_ts, producer_id, producer_epoch, base_sequence, 0)
    _CRC.pack_into(out, 17, crc32c(memoryview(out)[21:]))
    return bytes(out)


def header_fields(buf: bytes, off: int) -> tuple:
    """All 13 header fields of the batch at buf[off:] (BatchHeader order)."""
    return _HEADER.unpack_from(buf, off)


def rebuild_uncompressed(buf: bytes, off: int, size: int, entries, kept: list[int]) -> tuple[bytes, int]:
    """The batch at buf[off:] with only the records `kept` (indexes into `entries` from
    record_entries), their bytes copied verbatim: base offset, baseTimestamp, attributes,
    lastOffsetDelta and producer fields stay, so every kept record's offset and timestamp
    deltas still hold. New recordsCount, length, maxTimestamp (of the kept records; the
    original for LogAppendTime) and CRC. Returns (batch, max timestamp)."""
    fields = list(_HEADER.unpack_from(buf, off))
    ends = [e[3] for e in entries[1:]] + [off + size]
    body = b"".join([buf[entries[i][3]:ends[i]] for i in kept])
    if not fields[5] & 0x08:  # CreateTime: max of the kept records' timestamps
        fields[8] = fields[7] + max(_timestamp_delta(buf, entries[i][3]) for i in kept)
    fields[1] = HEADER_SIZE - 12 + len(body)
    fields[4] = 0
    fields[12] = len(kept)
    out = bytearray(HEADER_SIZE)
    _HEADER.pack_into(out, 0, *fields)
    out += body
    _CRC.pack_into(out, 17, crc32c(memoryview(out)[21:]))
    return bytes(out), fields[8]


def _timestamp_delta(buf: bytes, pos: int) -> int:
    _, pos = _varint(buf, pos)  # length
    return _varint(buf, pos + 1)[0]  # after the attributes byte
