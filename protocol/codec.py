"""Public codec API: message bodies <-> plain slotted dataclasses.

    obj = decode_request(api_key, version, data, offset)   # must consume data to the end
    body = encode_response(api_key, version, obj)          # body only; add the header yourself

Decoders raise `DecodeError` (a ValueError) on any malformed input and `UnsupportedVersionError`
(a DecodeError) for an (api_key, version) without a codec; encoders raise `EncodeError`. The
specialised functions are generated on first use per (api, version, direction) and cached.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from .api import MODULE_NAMES, ApiKey
from .errors import DecodeError, UnsupportedVersionError
from .schema import Message

_Decoder = Callable[[bytes, int], tuple[Any, int]]
_Encoder = Callable[[Any], bytes]
_Fn = TypeVar("_Fn", _Decoder, _Encoder)

# api_key -> version -> function, one table per direction and operation. Two int-keyed lookups
# cost half of one lookup by an (api_key, version) tuple, which must be built and hashed.
_DEC_REQ: dict[int, dict[int, _Decoder]] = {}
_ENC_REQ: dict[int, dict[int, _Encoder]] = {}
_DEC_RESP: dict[int, dict[int, _Decoder]] = {}
_ENC_RESP: dict[int, dict[int, _Encoder]] = {}


def message_module(api_key: int) -> ModuleType:
    """The protocol.messages module for `api_key` (imported on first use)."""
    try:
        name = MODULE_NAMES[ApiKey(api_key)]
    except (ValueError, TypeError):
        raise UnsupportedVersionError(f"unknown API key {api_key}") from None
    return importlib.import_module(f"{__package__}.messages.{name}")


def message_schema(api_key: int, response: bool) -> Message:
    msg: Message = getattr(message_module(api_key), "RESPONSE" if response else "REQUEST")
    return msg


def request_type(api_key: int) -> type:
    return message_schema(api_key, False).cls


def response_type(api_key: int) -> type:
    return message_schema(api_key, True).cls


def _build(cache: dict[int, dict[int, _Fn]], api_key: int, version: int, response: bool, op: str) -> _Fn:
    """Generate, compile and cache the function for a cache miss; validate the key first."""
    from .codegen import build  # the code generator is only needed on a cache miss

    msg = message_schema(api_key, response)
    lo, hi = msg.versions
    if not isinstance(version, int) or not lo <= version <= hi:
        raise UnsupportedVersionError(f"{msg.name} has no version {version} (valid {lo}-{hi})")
    fn: _Fn = build(msg, version, op)
    cache.setdefault(api_key, {})[version] = fn
    return fn


def _finish(obj: Any, pos: int, data: bytes, version: int) -> Any:
    if pos != len(data):
        raise DecodeError(f"{len(data) - pos} trailing bytes after {type(obj).__name__} v{version}")
    return obj


def request_decoder(api_key: int, version: int) -> _Decoder:
    """The function `decode_request` runs for (api_key, version): fn(data: bytes, offset) ->
    (request, end), ignoring bytes after `end`. For the dispatcher, which decodes every request
    and ignores trailing bytes anyway: one call less per request."""
    try:
        return _DEC_REQ[api_key][version]
    except KeyError:
        return _build(_DEC_REQ, api_key, version, False, "decode")


def response_encoder(api_key: int, version: int) -> _Encoder:
    """The function `encode_response` runs for (api_key, version): fn(response) -> body."""
    try:
        return _ENC_RESP[api_key][version]
    except KeyError:
        return _build(_ENC_RESP, api_key, version, True, "encode")


def decode_request(api_key: int, version: int, data: bytes, offset: int = 0, *, strict: bool = True) -> Any:
    """Decode a request body that runs from `offset` to the end of `data`.

    `strict=False` ignores bytes after a complete body, as Kafka's broker does (it never checks
    that a request buffer was consumed, and librdkafka 2.x relies on that: its all-topics
    Metadata v10+ request carries 3 stray bytes)."""
    if type(data) is not bytes:
        data = bytes(data)
    obj, pos = request_decoder(api_key, version)(data, offset)
    return obj if pos == len(data) or not strict else _finish(obj, pos, data, version)


def decode_response(api_key: int, version: int, data: bytes, offset: int = 0) -> Any:
    """Decode a response body that runs from `offset` to the end of `data`."""
    try:
        fn = _DEC_RESP[api_key][version]
    except KeyError:
        fn = _build(_DEC_RESP, api_key, version, True, "decode")
    if type(data) is not bytes:
        data = bytes(data)
    obj, pos = fn(data, offset)
    return obj if pos == len(data) else _finish(obj, pos, data, version)


def encode_request(api_key: int, version: int, obj: Any) -> bytes:
    """Encode a request body (no header, no size prefix)."""
    try:
        fn = _ENC_REQ[api_key][version]
    except KeyError:
        fn = _build(_ENC_REQ, api_key, version, False, "encode")
    return fn(obj)


def encode_response(api_key: int, version: int, obj: Any) -> bytes:
    """Encode a response body (no header, no size prefix)."""
    return response_encoder(api_key, version)(obj)
