"""The loops that run once per record of a load, a cleaning round or a coordinator's append, alone
in a module so that they can be compiled: `fold_records` (the loader's latest value per key,
record_walk.fold_latest), `map_records` (the cleaner's offset map, OffsetMap.put_records) and
`encode_kv_batch` (the batch of one coordinator operation, records.encode_kv_batch).

Pure Python and the only source of these loops: `make native` compiles a copy with mypyc and
native.py runs it only while its recorded source hash matches this file. Invariant: a record is
used only once it ends inside the batch and its key (and, folding, its value) inside it;
anything else raises InvalidBatch. They walk records by their length (the batch's CRC was
checked); common shapes take short paths: one-byte timestamp and offset deltas, one- or
two-byte lengths (a zigzag varint's first byte < 0x80 is the whole varint).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from storage import crc
from storage.crc import crc32c

from . import layout
from .layout import CRC_START, HEADER_SIZE, LOG_OVERHEAD, MAGIC, BatchHeader, InvalidBatch, read_varint, write_varint

# What these loops call whose signatures a compiled copy relies on: a change makes it stale.
COMPILED_WITH = (layout, crc)


def fold_records(buf: bytes, pos: int, end: int, count: int, latest: dict[bytes, bytes | None]) -> int:
    """`fold_latest` over the `count` records in buf[pos:end] (see its docstring)."""
    pop, unkeyed = latest.pop, 0
    value: bytes | None
    try:
        for _ in range(count):
            b = buf[pos]
            if b < 0x80:  # record length (never negative)
                pos += 1
                nxt = pos + (b >> 1)
            elif buf[pos + 1] < 0x80:
                nxt = pos + 2 + (((b & 0x7F) | (buf[pos + 1] << 7)) >> 1)
                pos += 2
            else:
                length, pos = read_varint(buf, pos)
                nxt = pos + length
            if nxt > end:
                raise IndexError
            # pos: attributes; then timestampDelta, offsetDelta, keyLength
            if buf[pos + 1] < 0x80 and buf[pos + 2] < 0x80:
                b, p = buf[pos + 3], pos + 4
            else:
                p = pos + 1
                while buf[p] >= 0x80:
                    p += 1
                p += 1
                while buf[p] >= 0x80:
                    p += 1
                b, p = buf[p + 1], p + 2
            # b: keyLength's first byte; p: the byte after it
            if b < 0x80:
                if b & 1:  # negative: a null key
                    unkeyed += 1
                    pos = nxt
                    continue
                kend = p + (b >> 1)
            elif buf[p] < 0x80:
                kend = p + 1 + (((b & 0x7F) | (buf[p] << 7)) >> 1)
                p += 1
            else:
                klen, p = read_varint(buf, p - 1)
                if klen < 0:
                    unkeyed += 1
                    pos = nxt
                    continue
                kend = p + klen
            key = buf[p:kend]
            b = buf[kend]  # valueLength's first byte
            if b < 0x80:
                if b & 1:
                    value, p = None, kend + 1
                else:
                    p = kend + 1 + (b >> 1)
                    value = buf[kend + 1 : p]
            elif buf[kend + 1] < 0x80:  # two bytes, read as a length (as key_spans reads them)
                p = kend + 2 + (((b & 0x7F) | (buf[kend + 1] << 7)) >> 1)
                value = buf[kend + 2 : p]
            else:
                vlen, p = read_varint(buf, kend)
                value = None if vlen < 0 else buf[p : p + vlen]
                p += max(vlen, 0)
            if p > nxt:
                raise IndexError
            pop(key, None)
            latest[key] = value
            pos = nxt
    except IndexError:
        raise InvalidBatch("records run past the end of the batch") from None
    if pos != end:
        raise InvalidBatch(f"records end at {pos}, the batch at {end}")
    return count - unkeyed


def map_records(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base: int,
    start: int,
    keyless_bits: bytearray,
    the_map: dict[bytes, int],
    digest: Callable[[bytes], Any],
) -> tuple[bool, int]:
    """OffsetMap.put_records over the `count` records in buf[pos:end] (base offset `base`):
    the_map[digest(key).digest()] = offset for each keyed record at or after `start`, the bit
    (offset - start) of `keyless_bits` for each keyless one. Returns (a tombstone was seen, the
    last offset mapped or -1)."""
    latest = -1
    has_tomb = False
    try:
        for _ in range(count):
            b = buf[pos]
            if b < 0x80:  # record length (never negative)
                pos += 1
                nxt = pos + (b >> 1)
            elif buf[pos + 1] < 0x80:
                nxt = pos + 2 + (((b & 0x7F) | (buf[pos + 1] << 7)) >> 1)
                pos += 2
            else:
                length, pos = read_varint(buf, pos)
                nxt = pos + length
            if nxt > end:
                raise IndexError
            # pos: attributes; then timestampDelta (skipped) and offsetDelta
            if buf[pos + 1] < 0x80 and buf[pos + 2] < 0x80:
                b = buf[pos + 2]
                o, p = base + ((b >> 1) ^ -(b & 1)), pos + 3
            else:
                p = pos + 1
                while buf[p] >= 0x80:
                    p += 1
                delta, p = read_varint(buf, p + 1)
                o = base + delta
            b = buf[p]
            if b < 0x80:
                klen, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:
                klen, p = ((b & 0x7F) | (buf[p + 1] << 7)) >> 1, p + 2
            else:
                klen, p = read_varint(buf, p)
            pos = nxt
            if o < start:  # a batch straddling the first dirty offset
                continue
            if klen < 0:
                if buf[p] == 0x01:  # valueLength zigzag(-1): a tombstone
                    has_tomb = True
                keyless_bits[(o - start) >> 3] |= 1 << ((o - start) & 7)
                continue
            if buf[p + klen] == 0x01:
                has_tomb = True
            the_map[digest(buf[p : p + klen]).digest()] = o
            latest = o  # offsets only grow within a batch
    except IndexError:
        raise InvalidBatch("records run past the end of the batch") from None
    if pos != end:
        raise InvalidBatch(f"records end at {pos}, the batch at {end}")
    return has_tomb, latest


def _varint_bytes(n: int) -> bytes:
    out = bytearray()
    write_varint(out, n)
    return bytes(out)


_SMALL_VARINTS = [_varint_bytes(n) for n in range(128)]  # ZigZag varints: 0..63 one byte, 64..127 two


# A coordinator's batch after its CRC: attributes (no compression, no producer, not transactional),
# lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence,
# recordsCount; the CRC covers these and the records. Before it: baseOffset, batchLength,
# partitionLeaderEpoch, magic, crc (layout.HEADER split where the CRC starts).
_KV_COVERED = struct.Struct(">hiqqqhii")
_KV_PREFIX = struct.Struct(">qiibI")
assert _KV_PREFIX.size == CRC_START and _KV_PREFIX.size + _KV_COVERED.size == HEADER_SIZE


def encode_kv_batch(
    base_offset: int, pairs: Sequence[tuple[bytes, bytes | None]], timestamp: int
) -> tuple[bytes, BatchHeader]:
    """One uncompressed batch of (key, value) records (value None: a tombstone), all stamped
    `timestamp`, no headers, no producer: what a coordinator appends for one operation. The
    same bytes `encode_batch_and_header` writes for the same records, built without `Record`
    objects (the coordinator's append path): the header is packed as its two halves around the
    CRC, which runs over the second half and the records, so no bytearray of the whole batch is
    built, patched and copied."""
    if not pairs:
        raise ValueError("a batch needs at least one record")
    small = _SMALL_VARINTS
    varint = _varint_bytes
    parts: list[bytes] = []
    append = parts.append
    for delta, (key, value) in enumerate(pairs):
        klen = len(key)
        # attributes 0, timestamp delta 0, offset delta, key length, key, value length, value,
        # no headers; each record is preceded by the varint length of its body.
        if value is None:
            body = b"".join(
                (
                    b"\x00\x00",
                    small[delta] if delta < 128 else varint(delta),
                    small[klen] if klen < 128 else varint(klen),
                    key,
                    b"\x01\x00",
                )
            )
        else:
            vlen = len(value)
            body = b"".join(
                (
                    b"\x00\x00",
                    small[delta] if delta < 128 else varint(delta),
                    small[klen] if klen < 128 else varint(klen),
                    key,
                    small[vlen] if vlen < 128 else varint(vlen),
                    value,
                    b"\x00",
                )
            )
        n = len(body)
        append(small[n] if n < 128 else varint(n))
        append(body)
    records = b"".join(parts)
    count = len(pairs)
    covered = _KV_COVERED.pack(0, count - 1, timestamp, timestamp, -1, -1, -1, count)
    crc = crc32c(records, crc32c(covered))
    length = HEADER_SIZE - LOG_OVERHEAD + len(records)
    batch = b"".join((_KV_PREFIX.pack(base_offset, length, -1, MAGIC, crc), covered, records))
    return batch, BatchHeader(
        base_offset, length, -1, MAGIC, crc, 0, count - 1, timestamp, timestamp, -1, -1, -1, count
    )
