"""PushTelemetry (key 72), v0 (KIP-714): a client's own metrics, OTLP, compressed as it chose.

v0: the only version. KafkaApis.handlePushTelemetryRequest asks no authorization question;
ClientMetricsManager (coordinator/telemetry/manager.py) checks in Kafka's order: the instance id
(INVALID_REQUEST), a push after a terminating one (INVALID_REQUEST), too soon
(THROTTLING_QUOTA_EXCEEDED), the subscription id (UNKNOWN_SUBSCRIPTION_ID), the codec
(UNSUPPORTED_COMPRESSION_TYPE), the size (TELEMETRY_TOO_LARGE), then decodes the payload
(INVALID_RECORD when it does not decode) and keeps its values for the control plane.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.telemetry.manager import Caller
from protocol.errors import ErrorCode
from protocol.messages.push_telemetry import PushTelemetryRequest, PushTelemetryResponse


async def handle(ctx: RequestContext, request: PushTelemetryRequest) -> PushTelemetryResponse:
    manager = ctx.broker.telemetry
    if manager is None:  # KafkaApis without a metrics manager
        return PushTelemetryResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    answer = manager.push(
        request.client_instance_id,
        request.subscription_id,
        request.terminating,
        request.compression_type,
        request.metrics,
        Caller(ctx.client_id, ctx.client_host, ctx.connection_id),
    )
    if answer.error:
        explain(answer.error, answer.message or ErrorCode(answer.error).name)
    return PushTelemetryResponse(error_code=answer.error)
