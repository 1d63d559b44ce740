"""The public codec API: types, lazy compilation, encode errors, generated source."""

from __future__ import annotations

import pytest

from protocol import codec
from protocol.api import ApiKey
from protocol.codec import decode_request, encode_request, encode_response, request_type, response_type
from protocol.codegen import source
from protocol.errors import DecodeError, EncodeError, UnsupportedVersionError
from protocol.messages import join_group, offset_commit, sync_group


def test_types_and_module_attributes() -> None:
    assert request_type(ApiKey.JOIN_GROUP) is join_group.JoinGroupRequest
    assert response_type(11) is join_group.JoinGroupResponse
    assert join_group.JoinGroupRequestProtocol(name="range").metadata == b""
    req = join_group.JoinGroupRequest(group_id="g", protocols=[join_group.JoinGroupRequestProtocol("range", b"x")])
    assert req.rebalance_timeout_ms == -1 and req.group_instance_id is None and req.reason is None
    assert join_group.JoinGroupRequest().protocols is not join_group.JoinGroupRequest().protocols
    with pytest.raises(UnsupportedVersionError):
        request_type(99)


def test_handler_style_response_with_few_fields() -> None:
    resp = sync_group.SyncGroupResponse(error_code=27)
    for v in range(6):
        body = encode_response(14, v, resp)
        assert body
    assert encode_response(14, 0, resp) == b"\x00\x1b" + b"\x00\x00\x00\x00"  # ErrorCode, empty Assignment


def test_enum_keys_work() -> None:
    body = encode_request(ApiKey.HEARTBEAT, 4, request_type(12)(group_id="g"))
    assert decode_request(ApiKey.HEARTBEAT, 4, body).group_id == "g"


def test_codecs_are_generated_lazily_and_cached() -> None:
    body = encode_request(8, 5, offset_commit.OffsetCommitRequest(group_id="g"))
    decode_request(8, 5, body)
    fn = codec._DEC_REQ[8][5]
    decode_request(8, 5, body)
    assert codec._DEC_REQ[8][5] is fn
    assert "def decode(data, pos)" in fn.source


@pytest.mark.parametrize(
    "obj",
    [
        join_group.JoinGroupRequest(group_id=None),  # type: ignore[arg-type]  # not nullable
        join_group.JoinGroupRequest(session_timeout_ms=2**31),  # int32 overflow
        join_group.JoinGroupRequest(session_timeout_ms="x"),  # type: ignore[arg-type]
        join_group.JoinGroupRequest(protocols=None),  # type: ignore[arg-type]
        join_group.JoinGroupRequest(protocols=[join_group.JoinGroupRequestProtocol(metadata="str")]),  # type: ignore[arg-type]
        join_group.JoinGroupRequest(group_id="x" * 40000),  # too long for an int16 length
        join_group.JoinGroupRequest(group_id="\ud800"),  # lone surrogate: not UTF-8 encodable
    ],
)
def test_encode_errors(obj: object) -> None:
    with pytest.raises(EncodeError):
        encode_request(11, 5, obj)


def test_null_only_where_the_version_allows_it() -> None:
    resp = join_group.JoinGroupResponse(protocol_name=None)
    encode_response(11, 7, resp)  # nullable from v7
    with pytest.raises(EncodeError):
        encode_response(11, 6, resp)


def test_unsupported_versions_on_encode() -> None:
    with pytest.raises(UnsupportedVersionError):
        encode_request(11, 10, join_group.JoinGroupRequest())
    with pytest.raises(EncodeError):
        encode_request(0, 2, request_type(0)())  # Produce v0-2: advertised, never encodable


def test_generated_source_is_readable() -> None:
    text = source(join_group.REQUEST, 5, "decode")
    assert text.startswith("def decode(data, pos):")
    assert "group_instance_id" in text
    assert "def encode(obj):" in source(join_group.RESPONSE, 9, "encode")


def test_non_strict_decode_ignores_bytes_after_a_complete_body() -> None:
    # Kafka's broker never checks that a request buffer was consumed; librdkafka 2.x's all-topics
    # Metadata v12 request carries 3 stray bytes after its tagged fields.
    body = bytes.fromhex("00000000010000")
    with pytest.raises(DecodeError, match="trailing"):
        decode_request(3, 12, body)
    req = decode_request(3, 12, body, strict=False)
    assert req.topics is None and req.allow_auto_topic_creation is False
    with pytest.raises(DecodeError):
        decode_request(3, 12, body[:3], strict=False)  # a truncated body is still an error
