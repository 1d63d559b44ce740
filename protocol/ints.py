"""Kafka's fixed-width and variable-width integers, bools and UUIDs (protocol.md §1.5).

Every `read_*` takes a bytes-like `data` and an `offset` and returns `(value, new_offset)`; it
raises `DecodeError` on truncation, an over-long varint or one that overflows its width. Every
`write_*` returns `bytes` and raises `ValueError` (struct.error is one) for a value out of range.
Big-endian throughout; varints are unsigned LEB128 (uvarint/uvarlong) or zig-zag (varint/varlong,
used inside record batches), as Kafka's ByteUtils.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from .errors import DecodeError

# What the readers accept: anything indexable to ints and sliceable, as struct.unpack_from takes.
Buf = bytes | bytearray | memoryview

I8 = struct.Struct(">b")
I16 = struct.Struct(">h")
U16 = struct.Struct(">H")
I32 = struct.Struct(">i")
U32 = struct.Struct(">I")
I64 = struct.Struct(">q")
F64 = struct.Struct(">d")

ZERO_UUID = uuid.UUID(int=0)


def need(data: Buf, offset: int, n: int) -> None:
    """Raise DecodeError unless `n` bytes are available at `offset`."""
    if offset < 0 or offset + n > len(data):
        raise DecodeError(f"truncated: need {n} bytes at offset {offset}, have {len(data) - offset}")


def _fixed(s: struct.Struct) -> Callable[[Buf, int], tuple[Any, int]]:
    size = s.size
    unpack_from = s.unpack_from

    def read(data: Buf, offset: int) -> tuple[Any, int]:
        need(data, offset, size)
        return unpack_from(data, offset)[0], offset + size

    read.__doc__ = f"Read a big-endian `{s.format}` ({size} bytes)."
    return read


read_int8: Callable[[Buf, int], tuple[int, int]] = _fixed(I8)
read_int16: Callable[[Buf, int], tuple[int, int]] = _fixed(I16)
read_uint16: Callable[[Buf, int], tuple[int, int]] = _fixed(U16)
read_int32: Callable[[Buf, int], tuple[int, int]] = _fixed(I32)
read_uint32: Callable[[Buf, int], tuple[int, int]] = _fixed(U32)
read_int64: Callable[[Buf, int], tuple[int, int]] = _fixed(I64)
read_float64: Callable[[Buf, int], tuple[float, int]] = _fixed(F64)


def read_bool(data: Buf, offset: int) -> tuple[bool, int]:
    """One byte; any non-zero value is true (as Kafka's `readByte() != 0`)."""
    need(data, offset, 1)
    return data[offset] != 0, offset + 1


_UUIDS: dict[bytes, uuid.UUID] = {}
_UUIDS_KEPT = 4096  # distinct ids remembered; then the memo starts over (a client may send any)


def uuid_of(raw: bytes) -> uuid.UUID:
    """uuid.UUID(bytes=raw) for 16 bytes, remembered: a broker sees the same few ids (its topics'),
    and UUID's constructor costs more than a request's whole header decode. UUIDs are immutable,
    so a remembered one is the one the constructor would build."""
    found = _UUIDS.get(raw)
    if found is None:
        if len(_UUIDS) >= _UUIDS_KEPT:
            _UUIDS.clear()
        found = _UUIDS[raw] = uuid.UUID(bytes=raw)
    return found


def read_uuid(data: Buf, offset: int) -> tuple[uuid.UUID, int]:
    need(data, offset, 16)
    return uuid.UUID(bytes=bytes(data[offset : offset + 16])), offset + 16


def write_int8(v: int) -> bytes:
    return I8.pack(v)


def write_int16(v: int) -> bytes:
    return I16.pack(v)


def write_uint16(v: int) -> bytes:
    return U16.pack(v)


def write_int32(v: int) -> bytes:
    return I32.pack(v)


def write_uint32(v: int) -> bytes:
    return U32.pack(v)


def write_int64(v: int) -> bytes:
    return I64.pack(v)


def write_float64(v: float) -> bytes:
    return F64.pack(v)


def write_bool(v: bool) -> bytes:
    return b"\x01" if v else b"\x00"


def write_uuid(v: uuid.UUID) -> bytes:
    return v.bytes


# --- varints ---------------------------------------------------------------------------------


def _read_leb128(data: Buf, offset: int, max_bytes: int, bits: int, what: str) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(data)
    pos = offset
    while True:
        if pos >= end:
            raise DecodeError(f"truncated {what} at offset {offset}")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift >= 7 * max_bytes:
            raise DecodeError(f"{what} longer than {max_bytes} bytes at offset {offset}")
    if result >> bits:
        raise DecodeError(f"{what} overflows {bits} bits at offset {offset}")
    return result, pos


def read_uvarint(data: Buf, offset: int) -> tuple[int, int]:
    """Unsigned LEB128, at most 5 bytes, value < 2**32. Two bytes (128..16383: the compact
    length of a Produce request's records, of a long string) are read here; the generated
    decoders read one byte themselves and call this past it."""
    if offset + 1 < len(data):
        low, high = data[offset], data[offset + 1]
        if low & 0x80 and not high & 0x80:
            return (low & 0x7F) | (high << 7), offset + 2
    return _read_leb128(data, offset, 5, 32, "unsigned varint")


def read_uvarlong(data: Buf, offset: int) -> tuple[int, int]:
    """Unsigned LEB128, at most 10 bytes, value < 2**64."""
    return _read_leb128(data, offset, 10, 64, "unsigned varlong")


def read_varint(data: Buf, offset: int) -> tuple[int, int]:
    """Zig-zag signed 32-bit varint (record batches)."""
    n, pos = read_uvarint(data, offset)
    return (n >> 1) ^ -(n & 1), pos


def read_varlong(data: Buf, offset: int) -> tuple[int, int]:
    """Zig-zag signed 64-bit varlong (record batches)."""
    n, pos = read_uvarlong(data, offset)
    return (n >> 1) ^ -(n & 1), pos


def _write_leb128(v: int) -> bytes:
    if v < 0x80:
        return bytes((v,))
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def write_uvarint(v: int) -> bytes:
    if v < 0 or v > 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of range: {v}")
    return _write_leb128(v)


def write_uvarlong(v: int) -> bytes:
    if v < 0 or v > 0xFFFFFFFFFFFFFFFF:
        raise ValueError(f"unsigned varlong out of range: {v}")
    return _write_leb128(v)


def write_varint(v: int) -> bytes:
    if not -(2**31) <= v < 2**31:
        raise ValueError(f"varint out of range: {v}")
    return write_uvarint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)


def write_varlong(v: int) -> bytes:
    if not -(2**63) <= v < 2**63:
        raise ValueError(f"varlong out of range: {v}")
    return write_uvarlong(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)
