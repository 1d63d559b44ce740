"""RecordBatch v2 (magic 2): the only module that knows Kafka's batch and record bytes.

Layout (see FORMAT.md and Kafka's DefaultRecordBatch / DefaultRecord): a 61-byte big-endian
header, then the records (one compressed blob when the compression bits are set).
Invariants: the CRC-32C covers bytes [21, end); base offset (0..8) and partition leader epoch
(12..16) are outside it, so `assign_base_offset` can rewrite them without touching the CRC;
a batch received from a client is stored byte-for-byte apart from those two fields.
Records are decoded with a hand-written varint loop (faster than a parser library per record).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, Sequence

import cramjam
from crc32c import crc32c

__all__ = [
    "Record", "BatchHeader", "InvalidBatch", "HEADER_SIZE", "MAGIC", "LOG_OVERHEAD",
    "encode_batch", "encode_batch_and_header", "decode_header", "iter_records", "verify_crc", "validate_batch",
    "assign_base_offset", "batch_crc",
    "COMPRESSION_NONE", "COMPRESSION_GZIP", "COMPRESSION_SNAPPY", "COMPRESSION_LZ4",
    "COMPRESSION_ZSTD", "COMPRESSION_NAMES",
]

MAGIC = 2
HEADER_SIZE = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
LOG_OVERHEAD = 12  # baseOffset int64 + batchLength int32 precede the counted bytes
CRC_START = 21  # the CRC covers [attributes, end)

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
assert _HEADER.size == HEADER_SIZE
_BASE_OFFSET = struct.Struct(">q")
_EPOCH = struct.Struct(">i")
_CRC = struct.Struct(">I")

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_COMPRESSION_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_DELETE_HORIZON_BIT = 0x40


class InvalidBatch(ValueError):
    """The bytes are not a valid RecordBatch v2 (bad size, magic, CRC or record encoding)."""


@dataclass(slots=True)
class Record:
    """One record. `value=None` is a tombstone; `b""` is an empty value (not a tombstone).
    `offset`/`timestamp` may be None on input: the encoder then numbers records
    consecutively and the log stamps its clock's time."""

    offset: int | None = None
    timestamp: int | None = None
    key: bytes | None = None
    value: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


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
        return self.attributes & _COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & _TIMESTAMP_TYPE_BIT else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _CONTROL_BIT)

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: with attribute bit 6 set, baseTimestamp holds the delete horizon."""
        return self.base_timestamp if self.attributes & _DELETE_HORIZON_BIT else None

    @property
    def last_sequence(self) -> int:
        # DefaultRecordBatch.lastSequence: sequences wrap at Integer.MAX_VALUE.
        if self.base_sequence == -1:
            return -1
        return (self.base_sequence + self.last_offset_delta) % (2**31)


def decode_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Parse the 61-byte header at `pos` (no CRC check)."""
    if len(buf) - pos < HEADER_SIZE:
        raise InvalidBatch(f"batch header needs {HEADER_SIZE} bytes, {len(buf) - pos} left")
    return BatchHeader._make(_HEADER.unpack_from(buf, pos))


def batch_crc(buf: bytes | bytearray | memoryview, pos: int = 0, size: int | None = None) -> int:
    end = len(buf) if size is None else pos + size
    return crc32c(memoryview(buf)[pos + CRC_START:end])


def verify_crc(buf: bytes | bytearray | memoryview, pos: int = 0, size: int | None = None) -> bool:
    """True if the stored CRC of the batch at `pos` matches CRC-32C of its bytes [21, end)."""
    (stored,) = _CRC.unpack_from(buf, pos + 17)
    return stored == batch_crc(buf, pos, size)


def validate_batch(buf: bytes | bytearray | memoryview) -> BatchHeader:
    """Check that `buf` is exactly one well-formed v2 batch; return its header."""
    if len(buf) < HEADER_SIZE:
        raise InvalidBatch(f"batch is {len(buf)} bytes, shorter than the {HEADER_SIZE}-byte header")
    h = decode_header(buf)
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


def assign_base_offset(batch: bytes | bytearray, base_offset: int,
                       partition_leader_epoch: int | None = None) -> bytes:
    """Return the batch with its base offset (and optionally leader epoch) rewritten.
    Both fields lie outside the CRC, so the rest stays byte-identical (Kafka's
    LogValidator assigns offsets to v2 batches the same way)."""
    out = bytearray(batch)
    _BASE_OFFSET.pack_into(out, 0, base_offset)
    if partition_leader_epoch is not None:
        _EPOCH.pack_into(out, 12, partition_leader_epoch)
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# Encoding

def _zigzag_varint(out: bytearray, n: int) -> None:
    if -64 <= n < 64:  # the common case: one byte
        out.append(((n << 1) ^ (n >> 63)) & 0xFF)
        return
    z = (n << 1) ^ (n >> 63)
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def _encode_record(out: bytearray, offset_delta: int, timestamp_delta: int, rec: Record) -> None:
    key, value, headers = rec.key, rec.value, rec.headers
    body = bytearray(b"\x00")  # record attributes: unused
    # Small deltas (the usual case) are one ZigZag byte each; skip the general encoder.
    if -64 <= timestamp_delta < 64 and 0 <= offset_delta < 64:
        body.append(((timestamp_delta << 1) ^ (timestamp_delta >> 63)) & 0xFF)
        body.append(offset_delta << 1)
    else:
        _zigzag_varint(body, timestamp_delta)
        _zigzag_varint(body, offset_delta)
    if key is None:
        body.append(0x01)  # zigzag(-1)
    else:
        _zigzag_varint(body, len(key))
        body += key
    if value is None:
        body.append(0x01)
    else:
        _zigzag_varint(body, len(value))
        body += value
    if not headers:
        body.append(0)
    else:
        _zigzag_varint(body, len(headers))
        for hkey, hvalue in headers:
            raw = hkey.encode("utf-8")
            _zigzag_varint(body, len(raw))
            body += raw
            if hvalue is None:
                body.append(0x01)
            else:
                _zigzag_varint(body, len(hvalue))
                body += hvalue
    _zigzag_varint(out, len(body))
    out += body


def encode_batch(base_offset: int, records: Sequence[Record], **options) -> bytes:
    """Build one v2 batch. Record offsets, when given, must be increasing and >= base_offset
    (gaps allowed, as the cleaner needs); `None` offsets are numbered from the record's index.
    Options: compression, producer_id, producer_epoch, base_sequence, transactional, control,
    timestamp_type, partition_leader_epoch (Kafka's defaults: none / -1 / False / CreateTime);
    `last_offset_delta` overrides the computed one (Kafka's overrideLastOffset, so a compacted
    batch keeps its original last offset); `delete_horizon_ms` sets attribute bit 6 and
    stores the horizon in baseTimestamp (KIP-534), rebasing timestamp deltas on it."""
    return encode_batch_and_header(base_offset, records, **options)[0]


def encode_batch_and_header(base_offset: int, records: Sequence[Record], *, compression: int = 0,
                            producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                            transactional: bool = False, control: bool = False,
                            timestamp_type: int = 0, partition_leader_epoch: int = -1,
                            last_offset_delta: int | None = None,
                            delete_horizon_ms: int | None = None,
                            default_timestamp: int | None = None) -> tuple[bytes, BatchHeader]:
    """`encode_batch` that also returns the header; records without a timestamp get
    `default_timestamp` (the log's append path uses this to avoid copying records)."""
    if not 0 <= compression <= 4:
        raise ValueError(f"unknown compression type {compression}")
    deltas = []
    timestamps = []
    prev = -1
    for i, r in enumerate(records):
        d = i if r.offset is None else r.offset - base_offset
        if d <= prev:
            raise ValueError(f"record offsets must be increasing and >= base offset {base_offset}")
        prev = d
        deltas.append(d)
        ts = r.timestamp if r.timestamp is not None else default_timestamp
        if ts is None:
            raise ValueError("every record needs a timestamp to be encoded")
        timestamps.append(ts)
    if delete_horizon_ms is not None:
        base_ts = delete_horizon_ms
    else:
        base_ts = timestamps[0] if records else -1
    max_ts = max(timestamps) if records else -1
    if last_offset_delta is None:
        last_offset_delta = deltas[-1] if records else 0
    elif records and last_offset_delta < deltas[-1]:
        raise ValueError("last_offset_delta is below the last record's offset delta")

    body = bytearray()
    for delta, ts, rec in zip(deltas, timestamps, records):
        _encode_record(body, delta, ts - base_ts, rec)
    payload = _compress(compression, bytes(body)) if compression else body

    attributes = compression
    if timestamp_type:
        attributes |= _TIMESTAMP_TYPE_BIT
    if transactional:
        attributes |= _TRANSACTIONAL_BIT
    if control:
        attributes |= _CONTROL_BIT
    if delete_horizon_ms is not None:
        attributes |= _DELETE_HORIZON_BIT

    out = bytearray(HEADER_SIZE)
    out += payload
    fields = (base_offset, len(out) - LOG_OVERHEAD, partition_leader_epoch, MAGIC, 0, attributes,
              last_offset_delta, base_ts, max_ts, producer_id, producer_epoch, base_sequence,
              len(records))
    _HEADER.pack_into(out, 0, *fields)
    crc = crc32c(memoryview(out)[CRC_START:])
    _CRC.pack_into(out, 17, crc)
    return bytes(out), BatchHeader._make(fields[:4] + (crc,) + fields[5:])


# ---------------------------------------------------------------------------------------------
# Compression. Snappy from the Java client and librdkafka uses xerial framing
# (SnappyOutputStream: 16-byte header, then int32-length-prefixed raw snappy blocks).

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"
_XERIAL_BLOCK = 32 * 1024


def _compress(codec: int, data: bytes) -> bytes:
    if codec == COMPRESSION_GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == COMPRESSION_SNAPPY:
        out = bytearray(_XERIAL_HEADER)
        for i in range(0, len(data), _XERIAL_BLOCK):
            block = bytes(cramjam.snappy.compress_raw(data[i:i + _XERIAL_BLOCK]))
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == COMPRESSION_LZ4:
        return bytes(cramjam.lz4.compress(data))
    return bytes(cramjam.zstd.compress(data))


def _decompress(codec: int, data: bytes) -> bytes:
    try:
        if codec == COMPRESSION_GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec == COMPRESSION_SNAPPY:
            if data.startswith(_XERIAL_MAGIC):
                out = bytearray()
                pos, end = 16, len(data)
                while pos < end:
                    (n,) = struct.unpack_from(">i", data, pos)
                    out += bytes(cramjam.snappy.decompress_raw(data[pos + 4:pos + 4 + n]))
                    pos += 4 + n
                return bytes(out)
            if data.startswith(_SNAPPY_FRAMED_MAGIC):
                return bytes(cramjam.snappy.decompress(data))
            return bytes(cramjam.snappy.decompress_raw(data))
        if codec == COMPRESSION_LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == COMPRESSION_ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (cramjam.DecompressionError, struct.error, ValueError) as exc:
        raise InvalidBatch(f"cannot decompress {COMPRESSION_NAMES[codec]} records: {exc}") from exc
    raise InvalidBatch(f"unknown compression type {codec}")


# ---------------------------------------------------------------------------------------------
# Decoding

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """ZigZag LEB128 varint/varlong at `pos` -> (value, next position)."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise InvalidBatch("varint longer than 10 bytes")


def iter_records(batch: bytes | bytearray | memoryview) -> Iterator[Record]:
    """Decode the records of one whole batch (header included). No CRC check: callers that
    read from disk verify it first (`verify_crc`). Raises InvalidBatch on malformed records."""
    h = decode_header(batch)
    if h.magic != MAGIC:
        raise InvalidBatch(f"unsupported magic {h.magic}")
    end = min(len(batch), h.size)
    data = bytes(batch[HEADER_SIZE:end])
    if h.compression:
        data = _decompress(h.compression, data)
    base_offset, base_ts = h.base_offset, h.base_timestamp
    log_append_ts = h.max_timestamp if h.timestamp_type == 1 else None
    pos, limit = 0, len(data)
    try:
        for _ in range(h.records_count):
            length, pos = _varint(data, pos)
            start = pos
            pos += 1  # record attributes (unused)
            ts_delta, pos = _varint(data, pos)
            off_delta, pos = _varint(data, pos)
            klen, pos = _varint(data, pos)
            if klen < 0:
                key = None
            else:
                key = data[pos:pos + klen]
                pos += klen
            vlen, pos = _varint(data, pos)
            if vlen < 0:
                value = None
            else:
                value = data[pos:pos + vlen]
                pos += vlen
            hcount, pos = _varint(data, pos)
            if hcount < 0:
                raise InvalidBatch(f"negative header count {hcount}")
            headers: list[tuple[str, bytes | None]] = []
            for _ in range(hcount):
                hklen, pos = _varint(data, pos)
                if hklen < 0:
                    raise InvalidBatch("negative header key length")
                hkey = data[pos:pos + hklen].decode("utf-8")
                pos += hklen
                hvlen, pos = _varint(data, pos)
                if hvlen < 0:
                    hval = None
                else:
                    hval = data[pos:pos + hvlen]
                    pos += hvlen
                headers.append((hkey, hval))
            if pos - start != length or pos > limit:
                raise InvalidBatch(f"record at offset delta {off_delta} claims {length} bytes "
                                   f"but used {pos - start}")
            yield Record(base_offset + off_delta,
                         log_append_ts if log_append_ts is not None else base_ts + ts_delta,
                         key, value, headers)
    except IndexError:
        raise InvalidBatch(f"records of batch at offset {base_offset} are truncated") from None
    except UnicodeDecodeError as exc:
        raise InvalidBatch(f"header key is not UTF-8: {exc}") from None
    if pos != limit:
        raise InvalidBatch(f"{limit - pos} trailing bytes after {h.records_count} records")
