"""Records of a RecordBatch v2 (Kafka's DefaultRecord): decoding a batch into `Record`s, encoding
records into a batch, and rebuilding a batch with only some of its records (the cleaner).

Invariants: record offsets inside a batch strictly increase from the base offset (gaps allowed,
as compaction leaves them); `value=None` is a tombstone and `b""` an empty value; an encoded
batch's CRC and length always describe its bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from storage.crc import crc32c

from .compression import compress
from .layout import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    CRC,
    CRC_AT,
    CRC_START,
    DELETE_HORIZON_BIT,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    Buffer,
    HeaderFields,
    InvalidBatch,
    decode_header,
    pack_header,
    write_varint,
)
from .native import KERNELS
from .record_walk import KeySpan, decode_headers, record_spans, records_region, timestamp_delta

__all__ = ["Record", "iter_records", "encode_batch", "encode_batch_and_header", "encode_kv_batch", "rebuild_kept"]


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


def iter_records(batch: Buffer) -> Iterator[Record]:
    """Decode the records of one whole batch (header included). No CRC check: callers that
    read from disk verify it first (`verify_crc`). Raises InvalidBatch on malformed records,
    before yielding any (the whole record grammar is checked first, by `record_spans`)."""
    h = decode_header(batch)
    if h.magic != MAGIC:
        raise InvalidBatch(f"unsupported magic {h.magic}")
    end = min(len(batch), h.size)
    raw = batch if isinstance(batch, bytes) else bytes(batch[:end])
    data, pos, stop = records_region(raw, 0, end, h.attributes)
    assert isinstance(data, bytes)  # `raw` or a decompressed blob: slices are bytes
    spans = record_spans(data, pos, stop, h.records_count)
    base_offset, base_ts = h.base_offset, h.base_timestamp
    log_append_ts = h.max_timestamp if h.timestamp_type == 1 else None
    for od, tsd, kp, kl, vp, vl, hp, hc, _ in spans:
        yield Record(
            base_offset + od,
            log_append_ts if log_append_ts is not None else base_ts + tsd,
            None if kl < 0 else data[kp : kp + kl],
            None if vl < 0 else data[vp : vp + vl],
            decode_headers(data, hp, hc) if hc else [],
        )


# -- encoding ----------------------------------------------------------------------------------


def _encode_record(out: bytearray, offset_delta: int, timestamp_delta: int, rec: Record) -> None:
    key, value, headers = rec.key, rec.value, rec.headers
    body = bytearray(b"\x00")  # record attributes: unused
    # Small deltas (the usual case) are one ZigZag byte each; skip the general encoder.
    if -64 <= timestamp_delta < 64 and 0 <= offset_delta < 64:
        body.append(((timestamp_delta << 1) ^ (timestamp_delta >> 63)) & 0xFF)
        body.append(offset_delta << 1)
    else:
        write_varint(body, timestamp_delta)
        write_varint(body, offset_delta)
    if key is None:
        body.append(0x01)  # zigzag(-1)
    else:
        write_varint(body, len(key))
        body += key
    if value is None:
        body.append(0x01)
    else:
        write_varint(body, len(value))
        body += value
    if not headers:
        body.append(0)
    else:
        write_varint(body, len(headers))
        for hkey, hvalue in headers:
            raw = hkey.encode("utf-8")
            write_varint(body, len(raw))
            body += raw
            if hvalue is None:
                body.append(0x01)
            else:
                write_varint(body, len(hvalue))
                body += hvalue
    write_varint(out, len(body))
    out += body


def encode_batch(
    base_offset: int,
    records: Sequence[Record],
    *,
    compression: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    timestamp_type: int = 0,
    partition_leader_epoch: int = -1,
    last_offset_delta: int | None = None,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """Build one v2 batch. Record offsets, when given, must be increasing and >= base_offset
    (gaps allowed, as the cleaner needs); `None` offsets are numbered from the record's index.
    Options: compression, producer_id, producer_epoch, base_sequence, transactional, control,
    timestamp_type, partition_leader_epoch (Kafka's defaults: none / -1 / False / CreateTime);
    `last_offset_delta` overrides the computed one (Kafka's overrideLastOffset, so a compacted
    batch keeps its original last offset); `delete_horizon_ms` sets attribute bit 6 and
    stores the horizon in baseTimestamp (KIP-534), rebasing timestamp deltas on it."""
    return encode_batch_and_header(
        base_offset,
        records,
        compression=compression,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        transactional=transactional,
        control=control,
        timestamp_type=timestamp_type,
        partition_leader_epoch=partition_leader_epoch,
        last_offset_delta=last_offset_delta,
        delete_horizon_ms=delete_horizon_ms,
    )[0]


def encode_batch_and_header(
    base_offset: int,
    records: Sequence[Record],
    *,
    compression: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    timestamp_type: int = 0,
    partition_leader_epoch: int = -1,
    last_offset_delta: int | None = None,
    delete_horizon_ms: int | None = None,
    default_timestamp: int | None = None,
) -> tuple[bytes, BatchHeader]:
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

    attributes = compression
    if timestamp_type:
        attributes |= TIMESTAMP_TYPE_BIT
    if transactional:
        attributes |= TRANSACTIONAL_BIT
    if control:
        attributes |= CONTROL_BIT
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_BIT

    out = bytearray(HEADER_SIZE)
    out += compress(compression, bytes(body)) if compression else body
    # pack_header inlined: this is every append's path.
    fields: HeaderFields = (
        base_offset,
        len(out) - LOG_OVERHEAD,
        partition_leader_epoch,
        MAGIC,
        0,
        attributes,
        last_offset_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    HEADER.pack_into(out, 0, *fields)
    crc = crc32c(memoryview(out)[CRC_START:])
    CRC.pack_into(out, CRC_AT, crc)
    return bytes(out), BatchHeader._make(fields[:4] + (crc,) + fields[5:])


# One uncompressed batch of (key, value) records, all stamped `timestamp`, no headers, no
# producer: what a coordinator appends for one operation (kernels.encode_kv_batch, compiled when
# built: native.py). The same bytes `encode_batch_and_header` writes for the same records.
encode_kv_batch: Callable[[int, Sequence[tuple[bytes, bytes | None]], int], tuple[bytes, BatchHeader]] = (
    KERNELS.encode_kv_batch
)


def rebuild_kept(buf: Buffer, off: int, size: int, spans: Sequence[KeySpan], kept: Sequence[int]) -> tuple[bytes, int]:
    """The uncompressed batch buf[off:off + size] with only the records `kept` (indexes into
    `spans`, from key_spans over that batch), their bytes copied verbatim: base offset,
    baseTimestamp, attributes, lastOffsetDelta and producer fields stay, so every kept record's
    offset and timestamp deltas still hold. New recordsCount, length, maxTimestamp (of the kept
    records; the original for LogAppendTime) and CRC. Returns (batch, max timestamp)."""
    h = decode_header(buf, off)
    if h.attributes & COMPRESSION_MASK:
        raise ValueError("rebuild_kept copies uncompressed records only")
    ends = [s[4] for s in spans[1:]] + [off + size]
    body = b"".join([bytes(buf[spans[i][4] : ends[i]]) for i in kept])
    max_ts = h.max_timestamp
    if not h.attributes & TIMESTAMP_TYPE_BIT:  # CreateTime: max of the kept records' timestamps
        max_ts = h.base_timestamp + max(timestamp_delta(buf, spans[i][4]) for i in kept)
    out = bytearray(HEADER_SIZE)
    out += body
    pack_header(out, h._replace(max_timestamp=max_ts, records_count=len(kept)))
    return bytes(out), max_ts
