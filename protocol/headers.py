"""Request and response headers (protocol.md §1.2-1.3).

Request header: v2 iff the (api_key, api_version) is flexible, else v1. `ClientId` is ALWAYS the
classic int16-length nullable string, even in v2 (its `flexibleVersions` is "none"), so the
header of any request, including an ApiVersions request at a version the server does not know,
can be read. Unknown API keys decode as v1 unless `api.FIRST_FLEXIBLE_VERSION` knows better.

Response header: v1 (correlation id + tagged fields) iff flexible, else v0; ApiVersions responses
always use v0 (KIP-511).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from . import utf8
from .api import FIRST_FLEXIBLE_VERSION, ApiKey, is_flexible
from .errors import DecodeError
from .ints import read_uvarint

_FIXED = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_CORR = struct.Struct(">i")
_CORR_TAGGED = struct.Struct(">iB")  # response header v1: correlation id, empty tagged fields
_API_VERSIONS = int(ApiKey.API_VERSIONS)
_FIRST_FLEXIBLE = FIRST_FLEXIBLE_VERSION  # looked up per request: is_flexible inlined


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None


@dataclass(slots=True)
class ResponseHeader:
    correlation_id: int


def request_header_version(api_key: int, api_version: int) -> int:
    return 2 if is_flexible(api_key, api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if is_flexible(api_key, api_version) else 0


def _skip_tagged(data: bytes, pos: int) -> int:
    if pos < len(data) and data[pos] == 0:  # the usual empty section
        return pos + 1
    count, pos = read_uvarint(data, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        pos += size
        if pos > len(data):
            raise DecodeError("request header tagged field runs past the end")
    return pos


def decode_request_header(data: bytes, offset: int = 0) -> tuple[RequestHeader, int]:
    """Decode a request header at `offset`; return it and the offset where the body starts."""
    if len(data) - offset < 10:
        raise DecodeError(f"request header truncated: {len(data) - offset} bytes")
    api_key, api_version, correlation_id, n = _FIXED.unpack_from(data, offset)
    pos = offset + 10
    if n == -1:
        client_id = None
    elif n < 0:
        raise DecodeError(f"invalid client id length {n}")
    else:
        end = pos + n
        if end > len(data):
            raise DecodeError(f"client id length {n} runs past the end of the request")
        raw = data[pos:end] if type(data) is bytes else bytes(data[pos:end])
        try:
            client_id = raw.decode()
        except UnicodeDecodeError:  # Kafka's RequestHeaderData reads it as any string: replaced
            client_id = utf8.decode(raw)
        pos = end
    first = _FIRST_FLEXIBLE.get(api_key)
    if first is not None and api_version >= first:
        pos = _skip_tagged(data, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id), pos


def encode_request_header(header: RequestHeader) -> bytes:
    cid = header.client_id
    if cid is None:
        out = _FIXED.pack(header.api_key, header.api_version, header.correlation_id, -1)
    else:
        raw = cid.encode("utf-8")
        if len(raw) > 0x7FFF:
            raise ValueError("client id too long")
        out = _FIXED.pack(header.api_key, header.api_version, header.correlation_id, len(raw)) + raw
    if is_flexible(header.api_key, header.api_version):
        out += b"\x00"
    return out


def encode_response_header(correlation_id: int, api_key: int, api_version: int) -> bytes:
    first = _FIRST_FLEXIBLE.get(api_key)  # response_header_version, inlined (once per response)
    if first is not None and api_version >= first and api_key != _API_VERSIONS:
        return _CORR_TAGGED.pack(correlation_id, 0)
    return _CORR.pack(correlation_id)


def decode_response_header(data: bytes, api_key: int, api_version: int, offset: int = 0) -> tuple[ResponseHeader, int]:
    """Decode the response header for a request of (api_key, api_version)."""
    if len(data) - offset < 4:
        raise DecodeError("response header truncated")
    (correlation_id,) = _CORR.unpack_from(data, offset)
    pos = offset + 4
    if response_header_version(api_key, api_version) == 1:
        pos = _skip_tagged(data, pos)
    return ResponseHeader(correlation_id), pos
