"""Malformed bodies: every failure is a DecodeError, never another exception, never a hang."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode_request, decode_response, encode_request, message_schema
from protocol.errors import DecodeError, UnsupportedVersionError

from .protocol_samples import all_codecs, codec_id, sample

CASES = all_codecs()
REQUESTS = [c for c in CASES if not c[2]]


def _decode(resp: bool):
    return decode_response if resp else decode_request


def _encoded(case: tuple[int, int, bool], **kw: bool) -> bytes:
    from protocol.codec import encode_response

    key, version, resp = case
    obj = sample(message_schema(key, resp), version, 0, **kw)
    return (encode_response if resp else encode_request)(key, version, obj)


@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_truncated_at_every_byte_position(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    decode = _decode(resp)
    for variant in ({}, {"nulls": True}):
        data = _encoded(case, **variant)
        decode(key, version, data)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                decode(key, version, data[:cut])


@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_trailing_bytes(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    data = _encoded(case)
    with pytest.raises(DecodeError, match="trailing"):
        _decode(resp)(key, version, data + b"\x00")


def _join_group_v5(
    protocols_count: bytes = struct.pack(">i", 1),
    group_len: bytes = struct.pack(">h", 1),
    metadata_len: bytes = struct.pack(">i", 2),
    group: bytes = b"g",
) -> bytes:
    return b"".join(
        [
            group_len,
            group,  # GroupId
            struct.pack(">ii", 45000, 300000),  # SessionTimeoutMs, RebalanceTimeoutMs
            struct.pack(">h", 0),  # MemberId
            struct.pack(">h", -1),  # GroupInstanceId
            struct.pack(">h", 8),
            b"consumer",  # ProtocolType
            protocols_count,  # Protocols
            struct.pack(">h", 5),
            b"range",
            metadata_len,
            b"\x00\x00",
        ]
    )


def test_sample_join_group_is_valid() -> None:
    assert decode_request(11, 5, _join_group_v5()).group_id == "g"


@pytest.mark.parametrize("count", [-1, -2, -(2**31)])
def test_negative_array_count_in_non_nullable_array(count: int) -> None:
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(protocols_count=struct.pack(">i", count)))


@pytest.mark.parametrize("length", [-2, -(2**15)])
def test_negative_string_length(length: int) -> None:
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(group_len=struct.pack(">h", length)))


def test_null_in_non_nullable_string() -> None:
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(group_len=struct.pack(">h", -1), group=b""))


@pytest.mark.parametrize("length", [-2, -(2**31)])
def test_negative_bytes_length(length: int) -> None:
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(metadata_len=struct.pack(">i", length)))


def test_null_array_where_nullable_decodes_to_none() -> None:
    # MetadataRequest v1+: Topics is nullable (null = all topics)
    obj = decode_request(3, 4, struct.pack(">i", -1) + b"\x01")
    assert obj.topics is None and obj.allow_auto_topic_creation is True
    with pytest.raises(DecodeError):
        decode_request(3, 4, struct.pack(">i", -2) + b"\x01")
    with pytest.raises(DecodeError):  # v0: not nullable
        decode_request(3, 0, struct.pack(">i", -1))


@pytest.mark.parametrize("count", [2**31 - 1, 10**6])
def test_huge_array_count_fails_fast(count: int) -> None:
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(protocols_count=struct.pack(">i", count)))
    # []int32 of a huge count (OffsetFetch v1 PartitionIndexes)
    body = struct.pack(">h", 1) + b"g" + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t" + struct.pack(">i", count)
    with pytest.raises(DecodeError):
        decode_request(9, 1, body)


def test_huge_lengths() -> None:
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(group_len=struct.pack(">h", 32767)))
    with pytest.raises(DecodeError):
        decode_request(11, 5, _join_group_v5(metadata_len=struct.pack(">i", 2**31 - 1)))
    # flexible: compact string length as a 5-byte uvarint near 2**32
    with pytest.raises(DecodeError):
        decode_request(12, 4, b"\xff\xff\xff\xff\x0f" + b"g")


def test_uvarint_longer_than_five_bytes() -> None:
    with pytest.raises(DecodeError):
        decode_request(12, 4, b"\x82\x80\x80\x80\x80\x00" + b"g" + bytes(20))


def test_null_in_non_nullable_compact_string() -> None:
    with pytest.raises(DecodeError):
        decode_request(12, 4, b"\x00" + struct.pack(">i", 1) + b"\x02m\x00\x00")


def test_empty_strings_and_their_neighbours() -> None:
    # Heartbeat v4 (compact): group "" (length 0), generation 7, member "", instance null, no tags.
    hb = decode_request(12, 4, b"\x01" + struct.pack(">i", 7) + b"\x01\x00\x00")
    assert (hb.group_id, hb.generation_id, hb.member_id, hb.group_instance_id) == ("", 7, "", None)
    # Heartbeat v3 (classic lengths): group "", generation 7, member "m", instance "" (not null).
    hb = decode_request(12, 3, b"\x00\x00" + struct.pack(">i", 7) + b"\x00\x01m\x00\x00")
    assert (hb.group_id, hb.generation_id, hb.member_id, hb.group_instance_id) == ("", 7, "m", "")
    with pytest.raises(DecodeError):  # a nullable string of length -2
        decode_request(12, 3, b"\x00\x00" + struct.pack(">i", 7) + b"\x00\x01m\xff\xfe")


def test_invalid_utf8_is_not_malformed() -> None:
    # Kafka decodes strings with replacement (tests/protocol/test_utf8.py): no DecodeError
    req = decode_request(11, 5, _join_group_v5(group_len=struct.pack(">h", 2), group=b"\xc3\x28"))
    assert req.group_id == "\ufffd("


def test_tagged_field_past_the_end() -> None:
    from protocol.messages.heartbeat import HeartbeatRequest

    body = encode_request(12, 4, HeartbeatRequest(group_id="g", member_id="m"))
    with pytest.raises(DecodeError):
        decode_request(12, 4, body[:-1] + b"\x01\x05\x7f" + b"ab")


def test_known_tagged_field_with_wrong_size() -> None:
    # FetchRequest v12: tag 0 = ClusterId (compact nullable string); size says 3 but value is 2
    from protocol.messages.fetch import FetchRequest

    body = encode_request(1, 12, FetchRequest())
    with pytest.raises(DecodeError):
        decode_request(1, 12, body[:-1] + b"\x01\x00\x03\x02cX")


@pytest.mark.parametrize("key,version", [(11, 10), (11, -1), (0, 2), (99, 0), (-1, 0), (11, 70000), (2**40, 0)])
def test_unknown_api_or_version(key: int, version: int) -> None:
    with pytest.raises(UnsupportedVersionError):
        decode_request(key, version, b"")
    with pytest.raises(DecodeError):
        decode_request(key, version, b"")


@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_fuzz_random_bytes(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    decode = _decode(resp)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.binary(max_size=200))
    def check(data: bytes) -> None:
        with contextlib.suppress(DecodeError):
            decode(key, version, data)

    check()


@pytest.mark.parametrize("case", REQUESTS, ids=codec_id)
def test_fuzz_mutated_valid_requests(case: tuple[int, int, bool]) -> None:
    key, version, _ = case
    data = _encoded(case) or b"\x00"

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(data) - 1), st.integers(0, 255), st.sampled_from(["set", "insert", "delete"]))
    def check(pos: int, byte: int, how: str) -> None:
        if how == "set":
            mutated = data[:pos] + bytes([byte]) + data[pos + 1 :]
        elif how == "insert":
            mutated = data[:pos] + bytes([byte]) + data[pos:]
        else:
            mutated = data[:pos] + data[pos + 1 :]
        with contextlib.suppress(DecodeError):
            decode_request(key, version, mutated)

    check()


def test_memoryview_and_bytearray_input() -> None:
    data = _join_group_v5()
    expected = decode_request(11, 5, data)
    assert decode_request(11, 5, memoryview(data)) == decode_request(11, 5, bytearray(data)) == expected
    assert type(decode_request(11, 5, bytearray(data)).protocols[0].metadata) is bytes
