"""Round trips for every (API, version) in CODEC_VERSIONS, requests and responses."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode_request, decode_response, encode_request, encode_response, message_schema
from protocol.errors import DecodeError

from .protocol_samples import all_codecs, codec_id, message_strategy, sample

CASES = all_codecs()


def _codec(resp: bool):
    return (decode_response, encode_response) if resp else (decode_request, encode_request)


@pytest.mark.parametrize("case", CASES, ids=codec_id)
@pytest.mark.parametrize("variant", ["values", "nulls", "big"])
def test_populated_round_trip(case: tuple[int, int, bool], variant: str) -> None:
    key, version, resp = case
    msg = message_schema(key, resp)
    decode, encode = _codec(resp)
    for seed in range(3):
        obj = sample(msg, version, seed, nulls=variant == "nulls", big=variant == "big")
        data = encode(key, version, obj)
        back = decode(key, version, data)
        assert back == obj
        assert encode(key, version, back) == data
        # decoding at an offset inside a larger buffer
        assert decode(key, version, b"\x99" * 7 + data, 7) == obj


@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_default_object_round_trips(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    msg = message_schema(key, resp)
    decode, encode = _codec(resp)
    obj = msg.cls()
    back = decode(key, version, encode(key, version, obj))
    # fields absent from the version come back as their defaults, which a default object has
    assert back == obj


@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_hypothesis_round_trip(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    msg = message_schema(key, resp)
    decode, encode = _codec(resp)

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(message_strategy(msg, version))
    def check(obj: object) -> None:
        data = encode(key, version, obj)
        assert decode(key, version, data) == obj

    check()


def test_fields_absent_in_a_version_are_not_written_and_decode_to_defaults() -> None:
    from protocol.messages.join_group import JoinGroupRequest

    obj = JoinGroupRequest(group_id="g", rebalance_timeout_ms=5, group_instance_id="i", reason="r")
    v0 = encode_request(11, 0, obj)
    absent = {"rebalance_timeout_ms": -1, "group_instance_id": None, "reason": None}
    assert decode_request(11, 0, v0) == dataclasses.replace(obj, **absent)
    assert len(v0) == len(encode_request(11, 0, JoinGroupRequest(group_id="g")))


def test_tagged_fields_are_omitted_at_default_and_written_when_set() -> None:
    from protocol.messages.fetch import FetchRequest

    plain = encode_request(1, 12, FetchRequest())
    tagged = encode_request(1, 12, FetchRequest(cluster_id="c"))
    assert plain[-1] == 0  # empty top-level tagged section
    assert tagged.endswith(b"\x01\x00\x02\x02c")  # 1 field: tag 0, size 2, compact "c"
    assert decode_request(1, 12, tagged).cluster_id == "c"


def test_unknown_tags_are_skipped() -> None:
    from protocol.messages.heartbeat import HeartbeatRequest

    body = encode_request(12, 4, HeartbeatRequest(group_id="g", generation_id=3, member_id="m"))
    assert body[-1] == 0
    with_unknown = body[:-1] + b"\x02" + b"\x05\x03abc" + b"\x86\x01\x01z"  # tags 5 and 134
    assert decode_request(12, 4, with_unknown) == decode_request(12, 4, body)


def test_unknown_tags_after_a_fixed_run() -> None:
    # HeartbeatResponse v4 is throttle, error code, tagged fields: one unpack reads all three,
    # so a non-empty section is re-read from its first byte
    from protocol.messages.heartbeat import HeartbeatResponse

    body = encode_response(12, 4, HeartbeatResponse(throttle_time_ms=5, error_code=27))
    assert body == b"\x00\x00\x00\x05\x00\x1b\x00"
    tags = b"\x02" + b"\x05\x03abc" + b"\x86\x01\x81\x01" + b"z" * 129  # tag 134: a 2-byte size
    assert decode_response(12, 4, body[:-1] + tags) == HeartbeatResponse(5, 27)
    with pytest.raises(DecodeError):
        decode_response(12, 4, body[:-1] + tags[:-1])


def test_multi_byte_compact_lengths_after_a_fixed_run() -> None:
    # OffsetCommitRequest v8: the metadata's compact length follows three fixed fields
    from protocol.messages.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )

    for size in (126, 127, 128, 16383, 16384):
        part = OffsetCommitRequestPartition(1, 2, 3, committed_metadata="m" * size)
        obj = OffsetCommitRequest(group_id="g", topics=[OffsetCommitRequestTopic("t", partitions=[part])])
        assert decode_request(8, 8, encode_request(8, 8, obj)) == obj


@given(st.integers(0, 2**31 - 1))
def test_uvarint_lengths_of_every_size(n: int) -> None:
    from protocol.messages.heartbeat import HeartbeatResponse

    obj = HeartbeatResponse(throttle_time_ms=n, error_code=n % 30000)
    assert decode_response(12, 4, encode_response(12, 4, obj)) == obj
