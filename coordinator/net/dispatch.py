"""From one request frame to one response frame: header, version check, decode, handle, encode.

Rules copied from Kafka's `SocketServer`/`RequestContext`:
- ApiVersions above our maximum is answered (not parsed) with a v0 body carrying
  UNSUPPORTED_VERSION and our ranges (KIP-511), so clients can retry lower.
- Any other unknown API key, unsupported version or unparseable body closes the connection: the
  request cannot be understood, so no well-formed answer exists. The reason is logged.
- Bytes after a complete body are ignored, as Kafka ignores them (librdkafka sends some).
- Produce with acks=0 gets no response at all; its handler returns None.
- On a SASL listener the connection's session (sasl_session.py) sees each frame first while it
  authenticates (and, with a session lifetime, checks each request); afterwards requests carry
  the authenticated principal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from coordinator.handlers import HANDLERS, load_handler
from coordinator.handlers.k18_api_versions import encoded_api_versions
from coordinator.handlers.request_context import BrokerContext, CloseConnection, RequestContext
from coordinator.security.authorization import ANONYMOUS
from protocol.api import ApiKey
from protocol.codec import request_decoder, response_encoder
from protocol.errors import DecodeError, ErrorCode
from protocol.headers import decode_request_header, encode_response_header

if TYPE_CHECKING:
    from coordinator.net.sasl_session import SaslSession

_API_VERSIONS = int(ApiKey.API_VERSIONS)  # a plain int: compared once per request


@dataclass(slots=True)
class Connection:
    connection_id: int
    client_host: str
    principal: str = ANONYMOUS  # set by the SASL session or from the client certificate
    listener: str | None = None  # None: the broker's first listener
    session: SaslSession | None = None  # SASL listeners: authentication before anything else


async def dispatch(frame: bytes, conn: Connection, broker: BrokerContext) -> tuple[bytes, bytes] | None:
    """Returns the response's (header, body), or None when no response is due. They stay apart so
    the connection frames them with one copy (a fetch response can be a MiB)."""
    session = conn.session
    if session is not None and session.intercepts():
        answer = await session.receive(frame)
        if answer is not session.PASS:
            return answer
    try:
        header, body_offset = decode_request_header(frame)
    except DecodeError as exc:
        raise CloseConnection(f"unparseable request header: {exc}") from None
    key, version = header.api_key, header.api_version
    versions = broker.versions.table.get(key)
    handler = HANDLERS.get(key) or load_handler(key)  # a handler module loads on its first request
    if versions is None or handler is None:
        raise CloseConnection(f"unknown or unserved API key {key} (v{version})")
    low, high = versions
    if key == _API_VERSIONS and version > high:
        return _unsupported_api_versions(broker, header.correlation_id)
    if not low <= version <= high:
        name = ApiKey(key).name
        raise CloseConnection(f"{name} v{version} is not served (this broker serves v{low}-v{high})")
    try:  # bytes after the body are ignored (as decode_request(strict=False) does)
        request = request_decoder(key, version)(frame, body_offset)[0]
    except DecodeError as exc:
        raise CloseConnection(f"malformed {ApiKey(key).name} v{version} body: {exc}") from None
    context = RequestContext(broker, header, conn.client_host, conn.connection_id, conn.principal, conn.listener)
    if broker.control is not None:  # fault rules and request tracking (control/hook.py), tap inside
        response = await broker.control.handle(handler, context, request)
    elif broker.tap is not None:  # transcript/metrics (observe/tap.py)
        response = await broker.tap.handle(handler, context, request)
    else:
        response = await handler(context, request)
    if response is None:
        return None
    head = encode_response_header(header.correlation_id, key, version)
    if isinstance(response, bytes):  # a handler may hand back a body it encoded (and cached) itself
        return head, response
    return head, response_encoder(key, version)(response)


def _unsupported_api_versions(broker: BrokerContext, correlation_id: int) -> tuple[bytes, bytes]:
    # KIP-511: a v0 body (response header v0) whatever version was asked for.
    body = encoded_api_versions(broker.versions, 0, ErrorCode.UNSUPPORTED_VERSION)
    return encode_response_header(correlation_id, ApiKey.API_VERSIONS, 0), body
