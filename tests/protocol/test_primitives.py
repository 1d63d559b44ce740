"""Primitive encodings: values, edge cases and every malformed case."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import ints
from protocol import primitives as p
from protocol.errors import DecodeError


@pytest.mark.parametrize(
    "read,write,fmt,values",
    [
        (p.read_int8, p.write_int8, ">b", [-128, -1, 0, 127]),
        (p.read_int16, p.write_int16, ">h", [-32768, -1, 0, 32767]),
        (p.read_uint16, p.write_uint16, ">H", [0, 65535]),
        (p.read_int32, p.write_int32, ">i", [-(2**31), -1, 0, 2**31 - 1]),
        (p.read_uint32, p.write_uint32, ">I", [0, 2**32 - 1]),
        (p.read_int64, p.write_int64, ">q", [-(2**63), -1, 0, 2**63 - 1]),
        (p.read_float64, p.write_float64, ">d", [0.0, -1.5, 1e300]),
    ],
)
def test_fixed_width(read, write, fmt, values) -> None:
    size = struct.calcsize(fmt)
    for v in values:
        raw = write(v)
        assert raw == struct.pack(fmt, v)
        assert read(b"\xaa" + raw + b"\xbb", 1) == (v, 1 + size)
        for cut in range(size):
            with pytest.raises(DecodeError):
                read(raw[:cut], 0)
    with pytest.raises(DecodeError):
        read(b"\x00" * size, 1)


def test_bool_and_uuid() -> None:
    assert p.read_bool(b"\x00\x01\x07", 0) == (False, 1)
    assert p.read_bool(b"\x00\x01\x07", 2) == (True, 3)
    assert p.write_bool(True) == b"\x01"
    with pytest.raises(DecodeError):
        p.read_bool(b"", 0)
    u = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")
    assert p.write_uuid(u) == bytes(range(1, 17))
    assert p.read_uuid(bytes(range(1, 17)), 0) == (u, 16)


def test_uuid_of_builds_the_constructors_uuid_and_remembers_a_bounded_number(monkeypatch) -> None:
    monkeypatch.setattr(ints, "_UUIDS", {})
    monkeypatch.setattr(ints, "_UUIDS_KEPT", 3)
    raw = bytes(range(1, 17))
    first = ints.uuid_of(raw)
    assert first == uuid.UUID(bytes=raw) and ints.uuid_of(raw) is first
    for n in range(10):
        assert ints.uuid_of(n.to_bytes(16, "big")) == uuid.UUID(int=n)
        assert len(ints._UUIDS) <= 3
    assert p.read_uuid(bytes(16), 0) == (p.ZERO_UUID, 16)
    with pytest.raises(DecodeError):
        p.read_uuid(bytes(15), 0)


# --- varints ---------------------------------------------------------------------------------

UVARINT_CASES = [
    (0, b"\x00"),
    (1, b"\x01"),
    (127, b"\x7f"),
    (128, b"\x80\x01"),
    (300, b"\xac\x02"),
    (16383, b"\xff\x7f"),
    (16384, b"\x80\x80\x01"),
    (2**32 - 1, b"\xff\xff\xff\xff\x0f"),
]


@pytest.mark.parametrize("value,raw", UVARINT_CASES)
def test_uvarint(value: int, raw: bytes) -> None:
    assert p.write_uvarint(value) == raw
    assert p.read_uvarint(raw + b"\x55", 0) == (value, len(raw))
    for cut in range(len(raw)):
        with pytest.raises(DecodeError):
            p.read_uvarint(raw[:cut], 0)


def test_uvarint_malformed() -> None:
    with pytest.raises(DecodeError, match="longer than 5"):
        p.read_uvarint(b"\x80\x80\x80\x80\x80\x00", 0)
    with pytest.raises(DecodeError, match="overflows"):
        p.read_uvarint(b"\xff\xff\xff\xff\x1f", 0)
    with pytest.raises(ValueError):
        p.write_uvarint(-1)
    with pytest.raises(ValueError):
        p.write_uvarint(2**32)


ZIGZAG_CASES = [
    (0, b"\x00"),
    (-1, b"\x01"),
    (1, b"\x02"),
    (-2, b"\x03"),
    (63, b"\x7e"),
    (-64, b"\x7f"),
    (64, b"\x80\x01"),
    (2**31 - 1, b"\xfe\xff\xff\xff\x0f"),
    (-(2**31), b"\xff\xff\xff\xff\x0f"),
]


@pytest.mark.parametrize("value,raw", ZIGZAG_CASES)
def test_varint_zigzag(value: int, raw: bytes) -> None:
    assert p.write_varint(value) == raw
    assert p.read_varint(raw, 0) == (value, len(raw))
    assert p.read_varlong(p.write_varlong(value), 0)[0] == value


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(v: int) -> None:
    raw = p.write_varint(v)
    assert p.read_varint(raw, 0) == (v, len(raw))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(v: int) -> None:
    raw = p.write_varlong(v)
    assert len(raw) <= 10
    assert p.read_varlong(raw, 0) == (v, len(raw))


def test_varlong_malformed() -> None:
    assert p.write_varlong(-(2**63)) == b"\xff" * 9 + b"\x01"
    with pytest.raises(DecodeError, match="longer than 10"):
        p.read_varlong(b"\x80" * 10 + b"\x00", 0)
    with pytest.raises(DecodeError):
        p.read_varlong(b"\x80\x80", 0)
    with pytest.raises(ValueError):
        p.write_varint(2**31)
    with pytest.raises(ValueError):
        p.write_varlong(2**63)


# --- strings and bytes -----------------------------------------------------------------------


def test_strings() -> None:
    assert p.write_string("héllo") == b"\x00\x06h\xc3\xa9llo"
    assert p.read_string(b"\x00\x06h\xc3\xa9llo", 0) == ("héllo", 8)
    assert p.write_nullable_string(None) == b"\xff\xff"
    assert p.read_nullable_string(b"\xff\xff", 0) == (None, 2)
    assert p.read_string(b"\x00\x00", 0) == ("", 2)
    assert p.write_compact_string("ab") == b"\x03ab"
    assert p.read_compact_string(b"\x03ab", 0) == ("ab", 3)
    assert p.write_compact_nullable_string(None) == b"\x00"
    assert p.read_compact_nullable_string(b"\x00", 0) == (None, 1)
    long = "x" * 200
    assert p.read_compact_string(p.write_compact_string(long), 0) == (long, 202)


@pytest.mark.parametrize(
    "read,raw",
    [
        (p.read_string, b"\xff\xff"),  # null where not nullable
        (p.read_string, b"\xff\xfe"),  # -2
        (p.read_nullable_string, b"\x80\x00"),  # -32768
        (p.read_string, b"\x00\x05abc"),  # past the end
        (p.read_string, b"\x00"),  # truncated length
        (p.read_compact_string, b"\x00"),  # compact null where not nullable
        (p.read_compact_string, b"\x05ab"),  # past the end
        (p.read_compact_string, b""),  # no length
        (p.read_compact_string, b"\xff\xff\xff\xff\x0fab"),  # 4 GiB length
        (p.read_bytes, b"\xff\xff\xff\xff"),  # null where not nullable
        (p.read_bytes, b"\xff\xff\xff\xfe"),  # -2
        (p.read_nullable_bytes, b"\x80\x00\x00\x00"),  # -2**31
        (p.read_bytes, b"\x7f\xff\xff\xff"),  # 2 GiB past the end
        (p.read_bytes, b"\x00\x00\x00"),  # truncated length
        (p.read_compact_bytes, b"\x00"),  # null where not nullable
        (p.read_compact_nullable_bytes, b"\x09abc"),  # past the end
    ],
)
def test_string_and_bytes_malformed(read, raw: bytes) -> None:
    with pytest.raises(DecodeError):
        read(raw, 0)


def test_bytes() -> None:
    assert p.write_bytes(b"ab") == b"\x00\x00\x00\x02ab"
    assert p.read_bytes(b"\x00\x00\x00\x02ab", 0) == (b"ab", 6)
    assert p.read_nullable_bytes(b"\xff\xff\xff\xff", 0) == (None, 4)
    assert p.write_nullable_bytes(None) == b"\xff\xff\xff\xff"
    assert p.read_compact_bytes(b"\x01", 0) == (b"", 1)
    assert p.read_compact_nullable_bytes(b"\x00", 0) == (None, 1)
    assert p.write_compact_nullable_bytes(None) == b"\x00"
    assert p.read_bytes(memoryview(b"\x00\x00\x00\x01z"), 0) == (b"z", 5)


def test_string_too_long_for_int16() -> None:
    with pytest.raises(ValueError):
        p.write_string("x" * 32768)


# --- arrays ----------------------------------------------------------------------------------


def test_arrays() -> None:
    raw = p.write_array([1, 2], p.write_int32)
    assert raw == struct.pack(">iii", 2, 1, 2)
    assert p.read_array(raw, 0, p.read_int32) == ([1, 2], 12)
    assert p.read_nullable_array(b"\xff\xff\xff\xff", 0, p.read_int32) == (None, 4)
    assert p.write_nullable_array(None, p.write_int32) == b"\xff\xff\xff\xff"
    craw = p.write_compact_array(["a"], p.write_compact_string)
    assert craw == b"\x02\x02a"
    assert p.read_compact_array(craw, 0, p.read_compact_string) == (["a"], 3)
    assert p.read_compact_nullable_array(b"\x00", 0, p.read_int8) == (None, 1)
    assert p.write_compact_nullable_array(None, p.write_int8) == b"\x00"
    assert p.read_compact_array(b"\x01", 0, p.read_int8) == ([], 1)


@pytest.mark.parametrize(
    "read,raw",
    [
        (p.read_array, b"\xff\xff\xff\xff"),  # null where not nullable
        (p.read_nullable_array, b"\xff\xff\xff\xfe"),  # -2
        (p.read_array, b"\x7f\xff\xff\xff"),  # huge count, nothing behind it
        (p.read_array, b"\x00\x00\x00\x02\x00\x00\x00\x01"),  # second element missing
        (p.read_compact_array, b"\x00"),  # compact null where not nullable
        (p.read_compact_array, b"\xff\xff\xff\xff\x0f"),  # huge compact count
        (p.read_compact_nullable_array, b"\x03\x00\x00\x00\x01"),  # truncated element
    ],
)
def test_array_malformed(read, raw: bytes) -> None:
    with pytest.raises(DecodeError):
        read(raw, 0, p.read_int32)


# --- tagged fields ---------------------------------------------------------------------------


def test_tagged_fields() -> None:
    assert p.write_tagged_fields() == b"\x00"
    raw = p.write_tagged_fields({5: b"xy", 0: b""})
    assert raw == b"\x02\x00\x00\x05\x02xy"  # ascending tags
    assert p.read_tagged_fields(raw, 0) == ({0: b"", 5: b"xy"}, len(raw))
    assert p.skip_tagged_fields(raw + b"!", 0) == len(raw)
    big = p.write_tagged_fields({200: b"z" * 300})
    assert p.read_tagged_fields(big, 0) == ({200: b"z" * 300}, len(big))


@pytest.mark.parametrize(
    "raw",
    [
        b"",  # no count
        b"\x01",  # count without fields
        b"\x01\x00",  # tag without size
        b"\x01\x00\x05ab",  # size past the end
        b"\x01\x80\x80\x80\x80\x80\x01\x00",  # over-long tag varint
        b"\xff\xff\xff\xff\x0f",  # huge count
    ],
)
def test_tagged_fields_malformed(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        p.read_tagged_fields(raw, 0)


def test_decode_error_is_a_value_error() -> None:
    assert issubclass(DecodeError, ValueError)
