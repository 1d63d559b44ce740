"""Walking the records of one RecordBatch v2 without building objects: the records region of a
batch (decompressed if needed), each record's field spans (`record_spans`), its key span and
tombstone flag (`key_spans`, the cleaner's view), the latest value per key (`fold_latest`, the
loader's view), headers and timestamp deltas. Invariant: a record is never read as valid unless
it ends inside its batch; a malformed one raises InvalidBatch.
"""

from __future__ import annotations

from . import native
from .compression import decompress
from .layout import COMPRESSION_MASK, HEADER_SIZE, Buffer, InvalidBatch, read_varint

__all__ = [
    "records_region",
    "record_spans",
    "RecordSpan",
    "key_spans",
    "KeySpan",
    "decode_headers",
    "timestamp_delta",
    "fold_latest",
]


def records_region(buf: Buffer, off: int, size: int, attrs: int) -> tuple[Buffer, int, int]:
    """(data, start, end) of the records of the batch buf[off:off + size] with attributes
    `attrs`: the batch's own bytes, or its records blob decompressed."""
    codec = attrs & COMPRESSION_MASK
    if codec:
        data = decompress(codec, bytes(buf[off + HEADER_SIZE : off + size]))
        return data, 0, len(data)
    return buf, off + HEADER_SIZE, off + size


# (offsetDelta, timestampDelta, key position, key length (-1 = null), value position, value
#  length (-1 = null: a tombstone), headers position, header count, record start). Positions
# index the data the walker was given; a record ends where the next starts (the last at `end`).
RecordSpan = tuple[int, int, int, int, int, int, int, int, int]


def record_spans(buf: Buffer, pos: int, end: int, count: int) -> list[RecordSpan]:
    """Walk the `count` records in buf[pos:end] checking the whole record grammar (DefaultRecord:
    each record's length matches its fields, header keys are UTF-8, no trailing bytes), as
    Kafka's reader does. Raises InvalidBatch. One-byte (and two-byte, for lengths) varints take
    a fast path: this loop is what every full record decode costs."""
    out: list[RecordSpan] = []
    append, vi = out.append, read_varint
    try:
        for _ in range(count):
            start = pos
            b = buf[pos]
            if b < 0x80:
                length, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif buf[pos + 1] < 0x80:
                z = (b & 0x7F) | (buf[pos + 1] << 7)
                length, pos = (z >> 1) ^ -(z & 1), pos + 2
            else:
                length, pos = vi(buf, pos)
            body = pos
            p = pos + 1  # record attributes (unused)
            b = buf[p]
            if b < 0x80:
                tsd, p = (b >> 1) ^ -(b & 1), p + 1
            else:
                tsd, p = vi(buf, p)
            b = buf[p]
            if b < 0x80:
                od, p = (b >> 1) ^ -(b & 1), p + 1
            else:
                od, p = vi(buf, p)
            b = buf[p]
            if b < 0x80:
                kl, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:
                z = (b & 0x7F) | (buf[p + 1] << 7)
                kl, p = (z >> 1) ^ -(z & 1), p + 2
            else:
                kl, p = vi(buf, p)
            kp = p
            if kl > 0:
                p += kl
            else:
                kl = -1 if kl < 0 else 0
            b = buf[p]
            if b < 0x80:
                vl, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:
                z = (b & 0x7F) | (buf[p + 1] << 7)
                vl, p = (z >> 1) ^ -(z & 1), p + 2
            else:
                vl, p = vi(buf, p)
            vp = p
            if vl > 0:
                p += vl
            else:
                vl = -1 if vl < 0 else 0
            b = buf[p]
            if b < 0x80:
                hc, p = (b >> 1) ^ -(b & 1), p + 1
            else:
                hc, p = vi(buf, p)
            hp = p
            if hc:
                p = _skip_headers(buf, p, hc)
            if p - body != length or p > end:
                raise InvalidBatch(f"record at offset delta {od} claims {length} bytes but used {p - body}")
            append((od, tsd, kp, kl, vp, vl, hp, hc, start))
            pos = p
    except IndexError:
        raise InvalidBatch("records are truncated") from None
    if pos != end:
        raise InvalidBatch(f"{end - pos} trailing bytes after {count} records")
    return out


def _skip_headers(buf: Buffer, p: int, count: int) -> int:
    if count < 0:
        raise InvalidBatch(f"negative header count {count}")
    for _ in range(count):
        hk, p = read_varint(buf, p)
        if hk < 0:
            raise InvalidBatch("negative header key length")
        try:
            bytes(buf[p : p + hk]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidBatch(f"header key is not UTF-8: {exc}") from None
        p += hk
        hv, p = read_varint(buf, p)
        if hv > 0:
            p += hv
    return p


def decode_headers(buf: Buffer, pos: int, count: int) -> list[tuple[str, bytes | None]]:
    """The `count` headers at `pos` (a span's headers position, already checked by record_spans)."""
    out: list[tuple[str, bytes | None]] = []
    for _ in range(count):
        hk, pos = read_varint(buf, pos)
        key = bytes(buf[pos : pos + hk]).decode("utf-8")
        pos += hk
        hv, pos = read_varint(buf, pos)
        if hv < 0:
            out.append((key, None))
        else:
            out.append((key, bytes(buf[pos : pos + hv])))
            pos += hv
    return out


# (offsetDelta, key position, key length (-1 = null), is tombstone, record start)
KeySpan = tuple[int, int, int, bool, int]


def key_spans(buf: Buffer, pos: int, end: int, count: int) -> list[KeySpan]:
    """The cleaner's walk: offset delta, key and tombstone flag of each record, jumping from
    record to record by its length (the batch's CRC was checked; only the framing of records
    inside the batch is). Faster than record_spans: it skips values and headers."""
    out: list[KeySpan] = []
    append, vi = out.append, read_varint
    try:
        for _ in range(count):
            start = pos
            b = buf[pos]
            if b < 0x80:
                length, pos = b >> 1, pos + 1  # a record length is never negative
            elif buf[pos + 1] < 0x80:  # 64..8191 bytes: two-byte length
                length, pos = ((b & 0x7F) | (buf[pos + 1] << 7)) >> 1, pos + 2
            else:
                length, pos = vi(buf, pos)
            nxt = pos + length
            if nxt > end:
                raise IndexError
            p = pos + 1  # record attributes
            while buf[p] >= 0x80:  # timestampDelta: skipped
                p += 1
            b = buf[p + 1]
            if b < 0x80:
                delta, p = (b >> 1) ^ -(b & 1), p + 2
            else:
                delta, p = vi(buf, p + 1)
            b = buf[p]
            if b < 0x80:
                klen, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:  # keys of 64..8191 bytes
                klen, p = ((b & 0x7F) | (buf[p + 1] << 7)) >> 1, p + 2
            else:
                klen, p = vi(buf, p)
            if klen < 0:
                append((delta, p, -1, buf[p] == 0x01, start))  # valueLength zigzag(-1) = 0x01
            else:
                append((delta, p, klen, buf[p + klen] == 0x01, start))
            pos = nxt
    except IndexError:
        raise InvalidBatch("records run past the end of the batch") from None
    if pos != end:
        raise InvalidBatch(f"records end at {pos}, the batch at {end}")
    return out


def fold_latest(buf: Buffer, pos: int, end: int, count: int, latest: dict[bytes, bytes | None]) -> int:
    """A loader's walk: for each keyed record of the batch's records buf[pos:end], in order,
    `latest[key] = value` (None for a tombstone), the key moved to the end of `latest`, so that
    after all batches `latest` holds each key's last value in order of last occurrence. Jumps
    from record to record by its length, like key_spans (the batch's CRC was checked; a key or
    value running past its record is InvalidBatch). Returns how many keyed records it saw. Keys
    and values are slices of a bytes object (any other buffer's region is copied to one first).
    The common shapes take short paths: one-byte timestamp and offset deltas, one- or two-byte
    lengths (a zigzag varint's first byte < 0x80 is the whole varint)."""
    if not isinstance(buf, bytes):
        buf, pos, end = bytes(buf[pos:end]), 0, end - pos
    keyed: int = native.KERNELS.fold_records(buf, pos, end, count, latest)
    return keyed


def timestamp_delta(buf: Buffer, start: int) -> int:
    """timestampDelta of the record starting at `start` (a span's record start)."""
    _, pos = read_varint(buf, start)  # length
    return read_varint(buf, pos + 1)[0]  # after the attributes byte
