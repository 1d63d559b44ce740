"""SaslHandshake (key 17), v0-v1.

While a SASL listener's connection authenticates, its session answers this request
(coordinator/net/sasl_session.py; v0: raw tokens follow, v1: SaslAuthenticate requests). A
SaslHandshake that reaches a handler came on a listener without SASL, or after authentication
with no session to renew: Kafka's KafkaApis.handleSaslHandshakeRequest answers ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse


async def handle(ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
