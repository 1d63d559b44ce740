"""Kafka primitive encodings (protocol.md §1.5-1.6).

Every `read_*` takes a bytes-like `data` and an `offset` and returns `(value, new_offset)`; it
raises `DecodeError` on truncation, a negative length other than the null marker, a length past
the end of the buffer, invalid UTF-8, or an over-long varint. Every `write_*` returns `bytes`.

The generated message codecs (protocol/codegen.py) inline the common cases for speed and call
the varint readers here for the rare multi-byte cases; these functions are also the readable
reference for what the generated code does.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .errors import DecodeError

T = TypeVar("T")

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

ZERO_UUID = uuid.UUID(int=0)

# Upper bound for element counts read from the wire: a count can never exceed the bytes left
# (every element takes at least one byte), which stops `range(2**31)` loops on hostile input.


def _need(data: Any, offset: int, n: int) -> None:
    if offset < 0 or offset + n > len(data):
        raise DecodeError(f"truncated: need {n} bytes at offset {offset}, have {len(data) - offset}")


def _fixed(s: struct.Struct) -> Callable[[Any, int], tuple[Any, int]]:
    size = s.size
    unpack_from = s.unpack_from

    def read(data: Any, offset: int) -> tuple[Any, int]:
        _need(data, offset, size)
        return unpack_from(data, offset)[0], offset + size

    read.__doc__ = f"Read a big-endian `{s.format}` ({size} bytes)."
    return read


read_int8 = _fixed(_I8)
read_int16 = _fixed(_I16)
read_uint16 = _fixed(_U16)
read_int32 = _fixed(_I32)
read_uint32 = _fixed(_U32)
read_int64 = _fixed(_I64)
read_float64 = _fixed(_F64)


def read_bool(data: Any, offset: int) -> tuple[bool, int]:
    """One byte; any non-zero value is true (as Kafka's `readByte() != 0`)."""
    _need(data, offset, 1)
    return data[offset] != 0, offset + 1


def read_uuid(data: Any, offset: int) -> tuple[uuid.UUID, int]:
    _need(data, offset, 16)
    return uuid.UUID(bytes=bytes(data[offset : offset + 16])), offset + 16


def write_int8(v: int) -> bytes:
    return _I8.pack(v)


def write_int16(v: int) -> bytes:
    return _I16.pack(v)


def write_uint16(v: int) -> bytes:
    return _U16.pack(v)


def write_int32(v: int) -> bytes:
    return _I32.pack(v)


def write_uint32(v: int) -> bytes:
    return _U32.pack(v)


def write_int64(v: int) -> bytes:
    return _I64.pack(v)


def write_float64(v: float) -> bytes:
    return _F64.pack(v)


def write_bool(v: bool) -> bytes:
    return b"\x01" if v else b"\x00"


def write_uuid(v: uuid.UUID) -> bytes:
    return v.bytes


# --- varints ---------------------------------------------------------------------------------


def _read_leb128(data: Any, offset: int, max_bytes: int, bits: int, what: str) -> tuple[int, int]:
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


def read_uvarint(data: Any, offset: int) -> tuple[int, int]:
    """Unsigned LEB128, at most 5 bytes, value < 2**32."""
    return _read_leb128(data, offset, 5, 32, "unsigned varint")


def read_uvarlong(data: Any, offset: int) -> tuple[int, int]:
    """Unsigned LEB128, at most 10 bytes, value < 2**64."""
    return _read_leb128(data, offset, 10, 64, "unsigned varlong")


def read_varint(data: Any, offset: int) -> tuple[int, int]:
    """Zig-zag signed 32-bit varint (record batches)."""
    n, pos = read_uvarint(data, offset)
    return (n >> 1) ^ -(n & 1), pos


def read_varlong(data: Any, offset: int) -> tuple[int, int]:
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


# --- strings and bytes -----------------------------------------------------------------------


def _take(data: Any, pos: int, n: int, what: str) -> tuple[bytes, int]:
    end = pos + n
    if end > len(data):
        raise DecodeError(f"{what} length {n} at offset {pos} runs past the end ({len(data)})")
    return bytes(data[pos:end]), end


def _utf8(raw: bytes, pos: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DecodeError(f"invalid UTF-8 in string at offset {pos}: {e.reason}") from None


def _classic_len(data: Any, offset: int, size: struct.Struct, nullable: bool, what: str) -> tuple[int, int]:
    _need(data, offset, size.size)
    (n,) = size.unpack_from(data, offset)
    if n < 0 and not (nullable and n == -1):
        raise DecodeError(f"invalid {what} length {n} at offset {offset}")
    return n, offset + size.size


def _compact_len(data: Any, offset: int, nullable: bool, what: str) -> tuple[int, int]:
    n, pos = read_uvarint(data, offset)
    if n == 0 and not nullable:
        raise DecodeError(f"null {what} at offset {offset} where null is not allowed")
    return n - 1, pos


def read_string(data: Any, offset: int) -> tuple[str, int]:
    n, pos = _classic_len(data, offset, _I16, False, "string")
    raw, pos2 = _take(data, pos, n, "string")
    return _utf8(raw, pos), pos2


def read_nullable_string(data: Any, offset: int) -> tuple[str | None, int]:
    n, pos = _classic_len(data, offset, _I16, True, "string")
    if n == -1:
        return None, pos
    raw, pos2 = _take(data, pos, n, "string")
    return _utf8(raw, pos), pos2


def read_compact_string(data: Any, offset: int) -> tuple[str, int]:
    n, pos = _compact_len(data, offset, False, "compact string")
    raw, pos2 = _take(data, pos, n, "compact string")
    return _utf8(raw, pos), pos2


def read_compact_nullable_string(data: Any, offset: int) -> tuple[str | None, int]:
    n, pos = _compact_len(data, offset, True, "compact string")
    if n == -1:
        return None, pos
    raw, pos2 = _take(data, pos, n, "compact string")
    return _utf8(raw, pos), pos2


def read_bytes(data: Any, offset: int) -> tuple[bytes, int]:
    n, pos = _classic_len(data, offset, _I32, False, "bytes")
    return _take(data, pos, n, "bytes")


def read_nullable_bytes(data: Any, offset: int) -> tuple[bytes | None, int]:
    n, pos = _classic_len(data, offset, _I32, True, "bytes")
    if n == -1:
        return None, pos
    return _take(data, pos, n, "bytes")


def read_compact_bytes(data: Any, offset: int) -> tuple[bytes, int]:
    n, pos = _compact_len(data, offset, False, "compact bytes")
    return _take(data, pos, n, "compact bytes")


def read_compact_nullable_bytes(data: Any, offset: int) -> tuple[bytes | None, int]:
    n, pos = _compact_len(data, offset, True, "compact bytes")
    if n == -1:
        return None, pos
    return _take(data, pos, n, "compact bytes")


def _enc(v: str) -> bytes:
    return v.encode("utf-8")


def write_string(v: str) -> bytes:
    raw = _enc(v)
    if len(raw) > 0x7FFF:
        raise ValueError(f"string too long for an int16 length: {len(raw)} bytes")
    return _I16.pack(len(raw)) + raw


def write_nullable_string(v: str | None) -> bytes:
    return b"\xff\xff" if v is None else write_string(v)


def write_compact_string(v: str) -> bytes:
    raw = _enc(v)
    return write_uvarint(len(raw) + 1) + raw


def write_compact_nullable_string(v: str | None) -> bytes:
    return b"\x00" if v is None else write_compact_string(v)


def write_bytes(v: bytes) -> bytes:
    return _I32.pack(len(v)) + bytes(v)


def write_nullable_bytes(v: bytes | None) -> bytes:
    return b"\xff\xff\xff\xff" if v is None else write_bytes(v)


def write_compact_bytes(v: bytes) -> bytes:
    return write_uvarint(len(v) + 1) + bytes(v)


def write_compact_nullable_bytes(v: bytes | None) -> bytes:
    return b"\x00" if v is None else write_compact_bytes(v)


# --- arrays ----------------------------------------------------------------------------------


def _check_count(data: Any, pos: int, n: int) -> None:
    if n > len(data) - pos:
        raise DecodeError(f"array count {n} at offset {pos} exceeds the {len(data) - pos} bytes left")


def _read_items(data: Any, pos: int, n: int, read_item: Callable[[Any, int], tuple[T, int]]) -> tuple[list[T], int]:
    _check_count(data, pos, n)
    items = []
    for _ in range(n):
        item, pos = read_item(data, pos)
        items.append(item)
    return items, pos


def read_array(data: Any, offset: int, read_item: Callable[[Any, int], tuple[T, int]]) -> tuple[list[T], int]:
    n, pos = _classic_len(data, offset, _I32, False, "array")
    return _read_items(data, pos, n, read_item)


def read_nullable_array(
    data: Any, offset: int, read_item: Callable[[Any, int], tuple[T, int]]
) -> tuple[list[T] | None, int]:
    n, pos = _classic_len(data, offset, _I32, True, "array")
    if n == -1:
        return None, pos
    return _read_items(data, pos, n, read_item)


def read_compact_array(data: Any, offset: int, read_item: Callable[[Any, int], tuple[T, int]]) -> tuple[list[T], int]:
    n, pos = _compact_len(data, offset, False, "compact array")
    return _read_items(data, pos, n, read_item)


def read_compact_nullable_array(
    data: Any, offset: int, read_item: Callable[[Any, int], tuple[T, int]]
) -> tuple[list[T] | None, int]:
    n, pos = _compact_len(data, offset, True, "compact array")
    if n == -1:
        return None, pos
    return _read_items(data, pos, n, read_item)


def write_array(items: Sequence[T], write_item: Callable[[T], bytes]) -> bytes:
    return _I32.pack(len(items)) + b"".join(write_item(i) for i in items)


def write_nullable_array(items: Sequence[T] | None, write_item: Callable[[T], bytes]) -> bytes:
    return b"\xff\xff\xff\xff" if items is None else write_array(items, write_item)


def write_compact_array(items: Sequence[T], write_item: Callable[[T], bytes]) -> bytes:
    return write_uvarint(len(items) + 1) + b"".join(write_item(i) for i in items)


def write_compact_nullable_array(items: Sequence[T] | None, write_item: Callable[[T], bytes]) -> bytes:
    return b"\x00" if items is None else write_compact_array(items, write_item)


# --- tagged fields (KIP-482) -----------------------------------------------------------------


def read_tagged_fields(data: Any, offset: int) -> tuple[dict[int, bytes], int]:
    """Read a tagged-field section into {tag: raw value bytes}.

    Like Kafka's readers, this does not insist on ascending order; a repeated tag keeps the last
    value."""
    count, pos = read_uvarint(data, offset)
    _check_count(data, pos, count)
    fields: dict[int, bytes] = {}
    for _ in range(count):
        tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        fields[tag], pos = _take(data, pos, size, "tagged field")
    return fields, pos


def skip_tagged_fields(data: Any, offset: int) -> int:
    """Skip a tagged-field section; return the offset after it."""
    return read_tagged_fields(data, offset)[1]


def write_tagged_fields(fields: dict[int, bytes] | None = None) -> bytes:
    """Write {tag: raw value bytes} as a tagged-field section (tags in ascending order)."""
    if not fields:
        return b"\x00"
    out = bytearray(write_uvarint(len(fields)))
    for tag in sorted(fields):
        raw = fields[tag]
        out += write_uvarint(tag)
        out += write_uvarint(len(raw))
        out += raw
    return bytes(out)
