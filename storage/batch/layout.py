"""The RecordBatch v2 header (Kafka's DefaultRecordBatch): field layout, attribute bits, CRC,
ZigZag varints, and the few whole-header operations (decode, validate, rewrite, empty batch).

Invariants: every integer is big-endian; the CRC-32C covers bytes [21, end), so the base
offset (0..8) and partition leader epoch (12..16) can be rewritten without touching it; a batch
is at least HEADER_SIZE (61) bytes and its size is batchLength + LOG_OVERHEAD (12).
"""

from __future__ import annotations

import mmap
import struct
from typing import NamedTuple

from storage.crc import crc32c

__all__ = [
    "MAGIC",
    "HEADER_SIZE",
    "LOG_OVERHEAD",
    "CRC_START",
    "CRC",
    "CRC_AT",
    "HEADER_SIZE_UP_TO_MAGIC",
    "HEADER",
    "HeaderFields",
    "Buffer",
    "COMPRESSION_MASK",
    "TIMESTAMP_TYPE_BIT",
    "TRANSACTIONAL_BIT",
    "CONTROL_BIT",
    "DELETE_HORIZON_BIT",
    "COMPRESSION_NONE",
    "COMPRESSION_GZIP",
    "COMPRESSION_SNAPPY",
    "COMPRESSION_LZ4",
    "COMPRESSION_ZSTD",
    "COMPRESSION_NAMES",
    "InvalidBatch",
    "BatchHeader",
    "decode_header",
    "batch_attributes",
    "batch_next_offset",
    "peek_frame",
    "batch_size",
    "batch_crc",
    "verify_crc",
    "crc_matches",
    "validate_batch",
    "assign_base_offset",
    "empty_batch",
    "pack_header",
    "read_varint",
    "write_varint",
]

MAGIC = 2
HEADER_SIZE = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
LOG_OVERHEAD = 12  # baseOffset int64 + batchLength int32 precede the counted bytes
CRC_START = 21  # the CRC covers [attributes, end)
HEADER_SIZE_UP_TO_MAGIC = 17  # Kafka's name: the bytes needed to read a batch's magic

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
HEADER = struct.Struct(">qiibIhiqqqhii")
assert HEADER.size == HEADER_SIZE
HeaderFields = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]
# What the scanners and walkers read from: a file's bytes, a mapped file or a view of either.
Buffer = bytes | bytearray | memoryview | mmap.mmap

_BASE_OFFSET = struct.Struct(">q")
_EPOCH = struct.Struct(">i")
CRC = struct.Struct(">I")
CRC_AT = 17
_LENGTH = struct.Struct(">i")
_LENGTH_AT = 8
_UP_TO_MAGIC = struct.Struct(">qiib")  # baseOffset, batchLength, partitionLeaderEpoch, magic
_EPOCH_AT = 12
_ATTRIBUTES = struct.Struct(">h")
_ATTRIBUTES_AT = 21
_LAST_DELTA = struct.Struct(">i")
_LAST_DELTA_AT = 23

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40  # KIP-534: baseTimestamp holds the delete horizon


class InvalidBatch(ValueError):
    """The bytes are not a valid RecordBatch v2 (bad size, magic, CRC or record encoding)."""


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Total bytes of the batch on disk."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & TIMESTAMP_TYPE_BIT else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: with attribute bit 6 set, baseTimestamp holds the delete horizon."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_BIT else None

    @property
    def last_sequence(self) -> int:
        # DefaultRecordBatch.lastSequence: sequences wrap at Integer.MAX_VALUE.
        if self.base_sequence == -1:
            return -1
        return (self.base_sequence + self.last_offset_delta) % (2**31)


def decode_header(buf: Buffer, pos: int = 0) -> BatchHeader:
    """Parse the 61-byte header at `pos` (no CRC check)."""
    if len(buf) - pos < HEADER_SIZE:
        raise InvalidBatch(f"batch header needs {HEADER_SIZE} bytes, {len(buf) - pos} left")
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


def batch_next_offset(buf: Buffer, pos: int = 0) -> int:
    """The offset after the batch at `pos` (baseOffset + lastOffsetDelta + 1; needs HEADER_SIZE
    bytes there; no other field read)."""
    return int(_BASE_OFFSET.unpack_from(buf, pos)[0]) + int(_LAST_DELTA.unpack_from(buf, pos + _LAST_DELTA_AT)[0]) + 1


def batch_attributes(buf: Buffer, pos: int = 0) -> int:
    """The attributes of the batch at `pos` (needs HEADER_SIZE bytes there; no other field read)."""
    return int(_ATTRIBUTES.unpack_from(buf, pos + _ATTRIBUTES_AT)[0])


def batch_size(buf: Buffer, pos: int = 0) -> int:
    """Total size of the batch at `pos` from its batchLength field (needs 12 bytes)."""
    return int(_LENGTH.unpack_from(buf, pos + _LENGTH_AT)[0]) + LOG_OVERHEAD


def peek_frame(buf: Buffer, pos: int = 0) -> tuple[int, int, int]:
    """(base offset, total size, magic) of the batch at `pos`, from its first
    HEADER_SIZE_UP_TO_MAGIC bytes (what Kafka's reader checks before trusting anything else)."""
    base, length, _, magic = _UP_TO_MAGIC.unpack_from(buf, pos)
    return int(base), int(length) + LOG_OVERHEAD, int(magic)


def batch_crc(buf: Buffer, pos: int = 0, size: int | None = None) -> int:
    end = len(buf) if size is None else pos + size
    return crc32c(memoryview(buf)[pos + CRC_START : end])


def crc_matches(buf: Buffer, pos: int, size: int, stored: int) -> bool:
    """True if `stored` (the header's crc) is the CRC-32C of the batch buf[pos:pos + size]."""
    return crc32c(memoryview(buf)[pos + CRC_START : pos + size]) == stored


def verify_crc(buf: Buffer, pos: int = 0, size: int | None = None) -> bool:
    """True if the stored CRC of the batch at `pos` matches CRC-32C of its bytes [21, end)."""
    (stored,) = CRC.unpack_from(buf, pos + CRC_AT)
    return bool(stored == batch_crc(buf, pos, size))


def validate_batch(buf: Buffer, header: BatchHeader | None = None) -> BatchHeader:
    """Check that `buf` is exactly one well-formed v2 batch; return its header. `header`:
    decode_header(buf), when the caller has it already (it is checked all the same)."""
    if len(buf) < HEADER_SIZE:
        raise InvalidBatch(f"batch is {len(buf)} bytes, shorter than the {HEADER_SIZE}-byte header")
    h = decode_header(buf) if header is None else header
    if h.magic != MAGIC:
        raise InvalidBatch(f"unsupported magic {h.magic} (only RecordBatch v2, magic 2)")
    if h.size != len(buf):
        raise InvalidBatch(f"batchLength says {h.size} bytes in total but {len(buf)} were given")
    if h.last_offset_delta < 0 or h.records_count < 0:
        raise InvalidBatch(f"negative lastOffsetDelta {h.last_offset_delta} or count {h.records_count}")
    actual = batch_crc(buf)
    if actual != h.crc:
        raise InvalidBatch(f"CRC mismatch: stored {h.crc:#010x}, computed {actual:#010x}")
    return h


def assign_base_offset(batch: Buffer, base_offset: int, partition_leader_epoch: int | None = None) -> bytes:
    """Return the batch with its base offset (and optionally leader epoch) rewritten.
    Both fields lie outside the CRC, so the rest stays byte-identical (Kafka's
    LogValidator assigns offsets to v2 batches the same way)."""
    out = bytearray(batch)
    _BASE_OFFSET.pack_into(out, 0, base_offset)
    if partition_leader_epoch is not None:
        _EPOCH.pack_into(out, _EPOCH_AT, partition_leader_epoch)
    return bytes(out)


def pack_header(out: bytearray, fields: HeaderFields) -> int:
    """Write `fields` (their crc ignored) as the header of the batch in `out`, whose records
    already follow it, with batchLength from len(out); then compute and store the CRC.
    Returns the CRC."""
    HEADER.pack_into(out, 0, fields[0], len(out) - LOG_OVERHEAD, *fields[2:4], 0, *fields[5:])
    crc = crc32c(memoryview(out)[CRC_START:])
    CRC.pack_into(out, CRC_AT, crc)
    return int(crc)


def empty_batch(
    base: int,
    last_offset_delta: int,
    partition_leader_epoch: int,
    attrs: int,
    max_ts: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> bytes:
    """A header-only batch (recordsCount 0) keeping the offset envelope and producer fields,
    as Kafka's DefaultRecordBatch.writeEmptyHeader: no compression, no delete horizon,
    baseTimestamp -1, maxTimestamp of the original batch."""
    out = bytearray(HEADER_SIZE)
    attrs &= ~(COMPRESSION_MASK | DELETE_HORIZON_BIT)
    pack_header(
        out,
        (
            base,
            0,
            partition_leader_epoch,
            MAGIC,
            0,
            attrs,
            last_offset_delta,
            -1,
            max_ts,
            producer_id,
            producer_epoch,
            base_sequence,
            0,
        ),
    )
    return bytes(out)


# -- ZigZag varints (ByteUtils): varint and varlong share the encoding -----------------------------


def read_varint(buf: Buffer, pos: int) -> tuple[int, int]:
    """ZigZag LEB128 varint/varlong at `pos` -> (value, next position). Raises IndexError
    past the end of `buf` (callers turn it into InvalidBatch)."""
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


def write_varint(out: bytearray, n: int) -> None:
    if -64 <= n < 64:  # the common case: one byte
        out.append(((n << 1) ^ (n >> 63)) & 0xFF)
        return
    z = (n << 1) ^ (n >> 63)
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
