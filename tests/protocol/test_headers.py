"""Request/response headers: versions, the classic client id, unknown keys, malformed input."""

from __future__ import annotations

import struct

import pytest

from protocol.api import ApiKey
from protocol.errors import DecodeError
from protocol.headers import (
    RequestHeader,
    ResponseHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    request_header_version,
    response_header_version,
)


def test_v1_header_bytes() -> None:
    h = RequestHeader(api_key=11, api_version=5, correlation_id=7, client_id="rdkafka")
    raw = encode_request_header(h)
    assert raw == struct.pack(">hhih", 11, 5, 7, 7) + b"rdkafka"
    assert decode_request_header(raw + b"BODY") == (h, len(raw))


def test_v2_header_has_classic_client_id_and_tagged_section() -> None:
    h = RequestHeader(api_key=18, api_version=3, correlation_id=1, client_id="x")
    raw = encode_request_header(h)
    assert raw == struct.pack(">hhih", 18, 3, 1, 1) + b"x" + b"\x00"  # int16 length, then tags
    assert decode_request_header(raw) == (h, len(raw))


def test_null_client_id() -> None:
    h = RequestHeader(3, 12, 99, None)
    raw = encode_request_header(h)
    assert raw[8:10] == b"\xff\xff"
    assert decode_request_header(raw)[0].client_id is None


def test_header_tagged_fields_are_skipped() -> None:
    raw = struct.pack(">hhih", 12, 4, 5, 1) + b"c" + b"\x01\x03\x02hi"
    header, pos = decode_request_header(raw + b"body")
    assert header == RequestHeader(12, 4, 5, "c")
    assert pos == len(raw)


def test_api_versions_above_max_still_decodes() -> None:
    # ApiVersions v9 (unknown) is flexible by the >=3 rule: header v2
    raw = struct.pack(">hhih", 18, 9, 42, 3) + b"cli" + b"\x00"
    header, pos = decode_request_header(raw + b"\x00\x00")
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (18, 9, 42, "cli")
    assert pos == len(raw)


def test_unknown_api_key_decodes_as_v1() -> None:
    raw = struct.pack(">hhih", 999, 3, 8, 0)
    header, pos = decode_request_header(raw + b"\x00")
    assert header == RequestHeader(999, 3, 8, "")
    assert pos == 10


def test_decode_at_offset() -> None:
    raw = encode_request_header(RequestHeader(0, 9, 1, "p"))
    assert decode_request_header(b"xx" + raw, 2) == (RequestHeader(0, 9, 1, "p"), 2 + len(raw))


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        struct.pack(">hhi", 11, 5, 1),  # no client id length
        struct.pack(">hhih", 11, 5, 1, 5) + b"ab",  # client id past the end
        struct.pack(">hhih", 11, 5, 1, -2),  # negative length
        struct.pack(">hhih", 11, 6, 1, 0),  # v2 without tagged section
        struct.pack(">hhih", 11, 6, 1, 0) + b"\x01\x00\x09",  # tagged field past the end
        struct.pack(">hhih", 11, 6, 1, 0) + b"\x80\x80\x80\x80\x80\x01",  # over-long uvarint
    ],
)
def test_malformed_request_header(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_request_header(raw)


def test_header_versions() -> None:
    assert request_header_version(ApiKey.JOIN_GROUP, 5) == 1
    assert request_header_version(ApiKey.JOIN_GROUP, 6) == 2
    assert request_header_version(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0) == 2
    assert request_header_version(ApiKey.OFFSET_DELETE, 0) == 1
    assert response_header_version(ApiKey.METADATA, 9) == 1
    assert response_header_version(ApiKey.METADATA, 8) == 0
    for v in range(5):
        assert response_header_version(ApiKey.API_VERSIONS, v) == 0


def test_response_header() -> None:
    assert encode_response_header(7, ApiKey.JOIN_GROUP, 5) == struct.pack(">i", 7)
    assert encode_response_header(7, ApiKey.JOIN_GROUP, 6) == struct.pack(">i", 7) + b"\x00"
    assert encode_response_header(7, ApiKey.API_VERSIONS, 4) == struct.pack(">i", 7)  # always v0
    raw = encode_response_header(-5, ApiKey.HEARTBEAT, 4)
    assert decode_response_header(raw + b"body", ApiKey.HEARTBEAT, 4) == (ResponseHeader(-5), 5)
    assert decode_response_header(raw, ApiKey.API_VERSIONS, 3) == (ResponseHeader(-5), 4)
    with pytest.raises(DecodeError):
        decode_response_header(b"\x00\x00\x00", ApiKey.HEARTBEAT, 3)
    with pytest.raises(DecodeError):
        decode_response_header(b"\x00\x00\x00\x01", ApiKey.HEARTBEAT, 4)


def test_against_kafka_python_headers() -> None:
    kp = pytest.importorskip("kafka.protocol.api_header")
    for flexible, (key, version) in ((False, (11, 5)), (True, (11, 6))):
        ours = encode_request_header(RequestHeader(key, version, 77, "client-1"))
        theirs = kp.RequestHeader(
            request_api_key=key, request_api_version=version, correlation_id=77, client_id="client-1"
        ).encode(flexible=flexible)
        assert ours == bytes(theirs)
