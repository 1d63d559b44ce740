"""Kafka's length-prefixed values: strings, bytes, arrays and tagged-field sections
(protocol.md §1.5-1.6), classic (int16/int32 length, -1 = null) and compact (uvarint length+1,
0 = null).

Readers return `(value, new_offset)` and raise `DecodeError` on truncation, a negative length
other than the null marker, or a length or count past the end of the buffer; malformed UTF-8 in a
string is replaced (U+FFFD), as Kafka does (protocol/utf8.py).
An array count is checked against the bytes left before any element is read (every element
takes at least one byte), so a hostile count never starts a `range(2**31)` loop. Writers return
`bytes`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import TypeVar

from . import utf8
from .errors import DecodeError
from .ints import I16, I32, Buf, need, read_uvarint, write_uvarint

T = TypeVar("T")
# An element reader: (data, offset) -> (element, new offset).
Reader = Callable[[Buf, int], tuple[T, int]]


# --- strings and bytes -----------------------------------------------------------------------


def _take(data: Buf, pos: int, n: int, what: str) -> tuple[bytes, int]:
    end = pos + n
    if end > len(data):
        raise DecodeError(f"{what} length {n} at offset {pos} runs past the end ({len(data)})")
    return bytes(data[pos:end]), end


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return utf8.decode(raw)  # malformed input replaced, as Kafka's Readable.readString does


def _classic_len(data: Buf, offset: int, size: struct.Struct, nullable: bool, what: str) -> tuple[int, int]:
    need(data, offset, size.size)
    (n,) = size.unpack_from(data, offset)
    if n < 0 and not (nullable and n == -1):
        raise DecodeError(f"invalid {what} length {n} at offset {offset}")
    return n, offset + size.size


def _compact_len(data: Buf, offset: int, nullable: bool, what: str) -> tuple[int, int]:
    n, pos = read_uvarint(data, offset)
    if n == 0 and not nullable:
        raise DecodeError(f"null {what} at offset {offset} where null is not allowed")
    return n - 1, pos


def read_string(data: Buf, offset: int) -> tuple[str, int]:
    n, pos = _classic_len(data, offset, I16, False, "string")
    raw, pos2 = _take(data, pos, n, "string")
    return _utf8(raw), pos2


def read_nullable_string(data: Buf, offset: int) -> tuple[str | None, int]:
    n, pos = _classic_len(data, offset, I16, True, "string")
    if n == -1:
        return None, pos
    raw, pos2 = _take(data, pos, n, "string")
    return _utf8(raw), pos2


def read_compact_string(data: Buf, offset: int) -> tuple[str, int]:
    n, pos = _compact_len(data, offset, False, "compact string")
    raw, pos2 = _take(data, pos, n, "compact string")
    return _utf8(raw), pos2


def read_compact_nullable_string(data: Buf, offset: int) -> tuple[str | None, int]:
    n, pos = _compact_len(data, offset, True, "compact string")
    if n == -1:
        return None, pos
    raw, pos2 = _take(data, pos, n, "compact string")
    return _utf8(raw), pos2


def read_bytes(data: Buf, offset: int) -> tuple[bytes, int]:
    n, pos = _classic_len(data, offset, I32, False, "bytes")
    return _take(data, pos, n, "bytes")


def read_nullable_bytes(data: Buf, offset: int) -> tuple[bytes | None, int]:
    n, pos = _classic_len(data, offset, I32, True, "bytes")
    if n == -1:
        return None, pos
    return _take(data, pos, n, "bytes")


def read_compact_bytes(data: Buf, offset: int) -> tuple[bytes, int]:
    n, pos = _compact_len(data, offset, False, "compact bytes")
    return _take(data, pos, n, "compact bytes")


def read_compact_nullable_bytes(data: Buf, offset: int) -> tuple[bytes | None, int]:
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
    return I16.pack(len(raw)) + raw


def write_nullable_string(v: str | None) -> bytes:
    return b"\xff\xff" if v is None else write_string(v)


def write_compact_string(v: str) -> bytes:
    raw = _enc(v)
    return write_uvarint(len(raw) + 1) + raw


def write_compact_nullable_string(v: str | None) -> bytes:
    return b"\x00" if v is None else write_compact_string(v)


def write_bytes(v: bytes) -> bytes:
    return I32.pack(len(v)) + bytes(v)


def write_nullable_bytes(v: bytes | None) -> bytes:
    return b"\xff\xff\xff\xff" if v is None else write_bytes(v)


def write_compact_bytes(v: bytes) -> bytes:
    return write_uvarint(len(v) + 1) + bytes(v)


def write_compact_nullable_bytes(v: bytes | None) -> bytes:
    return b"\x00" if v is None else write_compact_bytes(v)


# --- arrays ----------------------------------------------------------------------------------


def _check_count(data: Buf, pos: int, n: int) -> None:
    if n > len(data) - pos:
        raise DecodeError(f"array count {n} at offset {pos} exceeds the {len(data) - pos} bytes left")


def _read_items(data: Buf, pos: int, n: int, read_item: Reader[T]) -> tuple[list[T], int]:
    _check_count(data, pos, n)
    items: list[T] = []
    for _ in range(n):
        item, pos = read_item(data, pos)
        items.append(item)
    return items, pos


def read_array(data: Buf, offset: int, read_item: Reader[T]) -> tuple[list[T], int]:
    n, pos = _classic_len(data, offset, I32, False, "array")
    return _read_items(data, pos, n, read_item)


def read_nullable_array(data: Buf, offset: int, read_item: Reader[T]) -> tuple[list[T] | None, int]:
    n, pos = _classic_len(data, offset, I32, True, "array")
    if n == -1:
        return None, pos
    return _read_items(data, pos, n, read_item)


def read_compact_array(data: Buf, offset: int, read_item: Reader[T]) -> tuple[list[T], int]:
    n, pos = _compact_len(data, offset, False, "compact array")
    return _read_items(data, pos, n, read_item)


def read_compact_nullable_array(data: Buf, offset: int, read_item: Reader[T]) -> tuple[list[T] | None, int]:
    n, pos = _compact_len(data, offset, True, "compact array")
    if n == -1:
        return None, pos
    return _read_items(data, pos, n, read_item)


def write_array(items: Sequence[T], write_item: Callable[[T], bytes]) -> bytes:
    return I32.pack(len(items)) + b"".join(write_item(i) for i in items)


def write_nullable_array(items: Sequence[T] | None, write_item: Callable[[T], bytes]) -> bytes:
    return b"\xff\xff\xff\xff" if items is None else write_array(items, write_item)


def write_compact_array(items: Sequence[T], write_item: Callable[[T], bytes]) -> bytes:
    return write_uvarint(len(items) + 1) + b"".join(write_item(i) for i in items)


def write_compact_nullable_array(items: Sequence[T] | None, write_item: Callable[[T], bytes]) -> bytes:
    return b"\x00" if items is None else write_compact_array(items, write_item)


# --- tagged fields (KIP-482) -----------------------------------------------------------------


def read_tagged_fields(data: Buf, offset: int) -> tuple[dict[int, bytes], int]:
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


def skip_tagged_fields(data: Buf, offset: int) -> int:
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
