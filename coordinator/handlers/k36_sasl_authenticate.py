"""SaslAuthenticate (key 36), v0-v2.

v1+: session_lifetime_ms (KIP-368). v2: flexible. While a SASL listener's connection
authenticates, its session answers this request (coordinator/net/sasl_session.py). One that
reaches a handler came after authentication or on a listener without SASL: Kafka's
KafkaApis.handleSaslAuthenticateRequest answers ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse


async def handle(ctx: RequestContext, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
    )
