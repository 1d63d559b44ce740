"""Strings decode as Kafka (java.lang.String) decodes them: malformed UTF-8 becomes U+FFFD.

`java_string` is a model of JDK 17/21's `new String(bytes, UTF_8)` (String.decodeUTF8_UTF16 and
its malformed3/malformed4 helpers), written from the rules: how many bytes each malformed lead
byte swallows and where decoding resumes. protocol/utf8.py must agree with it byte for byte.
"""

from __future__ import annotations

import dataclasses
import itertools
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import utf8
from protocol.codec import decode_request, decode_response, encode_request, encode_response, message_schema
from protocol.consumer_protocol import decode_subscription
from protocol.headers import decode_request_header
from protocol.primitives import read_compact_string, read_nullable_string, read_string
from protocol.schema import Field

from .protocol_samples import all_codecs, codec_id, sample

R = "\ufffd"


def _cont(b: int) -> bool:
    return 0x80 <= b <= 0xBF


def _bad_second_of_4(b1: int, b2: int) -> bool:
    return (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF) or (b1 == 0xF4 and not 0x80 <= b2 <= 0x8F) or not _cont(b2)


def java_string(raw: bytes) -> str:
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        b1 = raw[i]
        if b1 < 0x80:
            out.append(chr(b1))
            i += 1
        elif 0xC2 <= b1 <= 0xDF:  # 2-byte lead
            if i + 1 >= n:
                out.append(R)
                break
            if _cont(raw[i + 1]):
                out.append(chr((b1 & 0x1F) << 6 | raw[i + 1] & 0x3F))
                i += 2
            else:
                out.append(R)
                i += 1
        elif 0xE0 <= b1 <= 0xEF:  # 3-byte lead
            overlong = b1 == 0xE0 and i + 1 < n and 0x80 <= raw[i + 1] <= 0x9F
            if i + 2 < n:
                b2, b3 = raw[i + 1], raw[i + 2]
                if overlong or not _cont(b2) or not _cont(b3):
                    out.append(R)
                    i += 1 if overlong or not _cont(b2) else 2
                else:
                    c = (b1 & 0x0F) << 12 | (b2 & 0x3F) << 6 | b3 & 0x3F
                    out.append(R if 0xD800 <= c <= 0xDFFF else chr(c))  # a surrogate: one U+FFFD
                    i += 3
            elif i + 1 < n and (overlong or not _cont(raw[i + 1])):
                out.append(R)
                i += 1
            else:  # a truncated sequence at the end: one U+FFFD for the rest
                out.append(R)
                break
        elif 0xF0 <= b1 <= 0xF7:  # 4-byte lead
            if i + 3 < n:
                b2, b3, b4 = raw[i + 1], raw[i + 2], raw[i + 3]
                cp = (b1 & 0x07) << 18 | (b2 & 0x3F) << 12 | (b3 & 0x3F) << 6 | b4 & 0x3F
                if _cont(b2) and _cont(b3) and _cont(b4) and 0x10000 <= cp <= 0x10FFFF:
                    out.append(chr(cp))
                    i += 4
                else:
                    out.append(R)
                    i += 1 if b1 > 0xF4 or _bad_second_of_4(b1, b2) else 2 if not _cont(b3) else 3
            elif b1 > 0xF4 or (i + 1 < n and _bad_second_of_4(b1, raw[i + 1])):
                out.append(R)
                i += 1
            else:  # lead and a good second byte at the end: one U+FFFD, resume at a non-continuation
                out.append(R)
                i += 2
                if i < n and not _cont(raw[i]):
                    continue
                break
        else:  # a continuation byte, C0, C1, F8-FF
            out.append(R)
            i += 1
    return "".join(out)


def test_the_model_knows_the_cases_that_differ_from_python() -> None:
    # Python's "replace" writes one U+FFFD per byte of an encoded surrogate; Java writes one.
    assert b"\xed\xa0\x80".decode("utf-8", "replace") == R * 3
    assert java_string(b"\xed\xa0\x80") == utf8.decode(b"\xed\xa0\x80") == R
    assert java_string(b"\xed\xbf\x41") == utf8.decode(b"\xed\xbf\x41") == R + "A"
    assert java_string(b"a\xed\xa0") == utf8.decode(b"a\xed\xa0") == "a" + R


@pytest.mark.parametrize(
    "raw,expected",
    [
        (b"plain", "plain"),
        ("é€😀".encode(), "é€😀"),
        (b"\xff", R),
        (b"a\x80b", f"a{R}b"),  # lone continuation byte
        (b"\xc0\xaf", R * 2),  # overlong '/': C0 is never a lead
        (b"\xe0\x80\xaf", R * 3),  # overlong 3-byte: E0 needs A0..BF
        (b"\xe2\x82", R),  # truncated 3-byte at the end: one
        (b"\xe2\x82x", f"{R}x"),  # truncated 3-byte before ASCII: one
        (b"\xf0\x9f\x98", R),  # truncated 4-byte at the end: one
        (b"\xf0\x9f\x98x", f"{R}x"),
        (b"\xf4\x90\x80\x80", R * 4),  # above U+10FFFF
        (b"\xf5\x80", R * 2),
        (b"\xed\xa0\x80\xed\xb0\x80", R * 2),  # a UTF-8-encoded surrogate pair (CESU-8)
        (b"\xed\x9f\xbf", "\ud7ff"),  # the last code point before the surrogates
    ],
)
def test_golden_cases(raw: bytes, expected: str) -> None:
    assert utf8.decode(raw) == expected
    assert java_string(raw) == expected


# Lead bytes at every class boundary plus ASCII and continuation bytes.
EDGES = bytes(
    [
        0x00,
        0x41,
        0x7F,
        0x80,
        0x8F,
        0x90,
        0x9F,
        0xA0,
        0xBF,
        0xC0,
        0xC1,
        0xC2,
        0xDF,
        0xE0,
        0xE1,
        0xEC,
        0xED,
        0xEE,
        0xEF,
        0xF0,
        0xF1,
        0xF3,
        0xF4,
        0xF5,
        0xF7,
        0xF8,
        0xFF,
    ]
)


def test_every_two_byte_input() -> None:
    for a in range(256):
        for b in range(256):
            raw = bytes((a, b))
            assert utf8.decode(raw) == java_string(raw), raw.hex()


def test_every_short_input_over_the_boundary_bytes() -> None:
    for n in (3, 4):
        for combo in itertools.product(EDGES, repeat=n):
            raw = bytes(combo)
            assert utf8.decode(raw) == java_string(raw), raw.hex()


@given(st.lists(st.binary(max_size=6) | st.text(max_size=4).map(str.encode), max_size=12).map(b"".join))
def test_random_mixtures_of_text_and_junk(raw: bytes) -> None:
    assert utf8.decode(raw) == java_string(raw)


# --- the codec and the headers ---------------------------------------------------------------


def test_group_id_classic() -> None:
    body = b"".join(
        [
            struct.pack(">h", 8),
            b"orders-\xff",  # GroupId
            struct.pack(">i", 45000),  # SessionTimeoutMs
            struct.pack(">i", 300000),  # RebalanceTimeoutMs
            struct.pack(">h", 0),  # MemberId
            struct.pack(">h", -1),  # GroupInstanceId
            struct.pack(">h", 8),
            b"consumer",  # ProtocolType
            struct.pack(">i", 0),  # Protocols
        ]
    )
    assert decode_request(11, 5, body).group_id == f"orders-{R}"


def test_member_id_compact() -> None:
    body = b"".join(
        [
            b"\x02g",  # GroupId
            struct.pack(">i", 7),  # GenerationId
            b"\x06m\xed\xa0\x80x",  # MemberId: an encoded surrogate, one U+FFFD as in Java
            b"\x00",  # GroupInstanceId: null
            b"\x00",  # tagged fields
        ]
    )
    req = decode_request(12, 4, body)
    assert (req.group_id, req.generation_id, req.member_id, req.group_instance_id) == ("g", 7, f"m{R}x", None)


def test_topic_name_in_an_array() -> None:
    body = b"".join(
        [
            struct.pack(">h", 1),
            b"g",  # GroupId
            struct.pack(">i", 1),  # GenerationIdOrMemberEpoch
            struct.pack(">h", 1),
            b"m",  # MemberId
            struct.pack(">q", -1),  # RetentionTimeMs (v2-4)
            struct.pack(">i", 1),  # Topics: 1
            struct.pack(">h", 6),
            b"t\xc0\xafpic",  #   Name: overlong '/'
            struct.pack(">i", 1),  #   Partitions: 1
            struct.pack(">iq", 0, 42),  #     PartitionIndex, CommittedOffset
            struct.pack(">h", -1),  #     CommittedMetadata: null
        ]
    )
    req = decode_request(8, 2, body)
    assert req.topics[0].name == f"t{R}{R}pic"
    assert req.topics[0].partitions[0].committed_offset == 42


def test_client_id_in_the_request_header() -> None:
    raw = struct.pack(">hhih", 11, 5, 9, 9) + b"rdkafka\xe2\x82" + b"body"
    header, body_at = decode_request_header(raw)
    assert header.client_id == f"rdkafka{R}"
    assert raw[body_at:] == b"body"


def test_primitives_and_consumer_protocol() -> None:
    assert read_string(b"\x00\x02\xc3\x28", 0) == (f"{R}(", 4)
    assert read_nullable_string(b"\x00\x01\xff", 0) == (R, 3)
    assert read_compact_string(b"\x03\xff\xfe", 0) == (R * 2, 3)
    sub = decode_subscription(b"\x00\x00" + struct.pack(">i", 1) + b"\x00\x02\xc3\x28" + bytes(4))
    assert sub.topics == [f"{R}("]


class _BadStr(str):
    """A string whose encoding ends with a byte that is never valid UTF-8 (0xFF)."""

    __slots__ = ()

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return str(self).encode(encoding, errors) + b"\xff"


def _map_strings(obj: Any, fields: tuple[Field, ...], version: int, fn: Any) -> Any:
    """`obj` with `fn` applied to every string of the fields present in `version`."""

    def one(value: Any, f: Field) -> Any:
        if isinstance(value, str):
            return fn(value)
        if f.struct is not None and value is not None:
            return _map_strings(value, f.struct.fields, version, fn)
        return value

    changes = {}
    for f in fields:
        value = getattr(obj, f.name)
        if f.present_in(version):
            changes[f.name] = [one(v, f) for v in value] if isinstance(value, list) else one(value, f)
    return dataclasses.replace(obj, **changes)


@pytest.mark.parametrize("case", all_codecs(), ids=codec_id)
def test_every_message_decodes_malformed_strings_with_replacement(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    msg = message_schema(key, resp)
    obj = sample(msg, version, 1)
    encode = encode_response if resp else encode_request
    decode = decode_response if resp else decode_request
    data = encode(key, version, _map_strings(obj, msg.fields, version, _BadStr))
    assert decode(key, version, data) == _map_strings(obj, msg.fields, version, lambda s: s + R)
