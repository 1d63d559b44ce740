"""GetTelemetrySubscriptions (key 71), v0 (KIP-714): what this client should push, and how.

v0: the only version. KafkaApis.handleGetTelemetrySubscriptionsRequest asks no authorization
question; ClientMetricsManager (coordinator/telemetry/manager.py) answers: the zero instance id
gets a new one; the subscription id, the metric prefixes ("*": all), the push interval, the
accepted codecs (zstd, lz4, gzip, snappy), telemetry.max.bytes and delta temporality; a second
Get within the push interval -> THROTTLING_QUOTA_EXCEEDED (unless the subscriptions changed).
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.telemetry.manager import ACCEPTED_COMPRESSION, Caller
from protocol.errors import ErrorCode
from protocol.messages.get_telemetry_subscriptions import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
)


async def handle(ctx: RequestContext, request: GetTelemetrySubscriptionsRequest) -> GetTelemetrySubscriptionsResponse:
    manager = ctx.broker.telemetry
    if manager is None:  # KafkaApis without a metrics manager
        return GetTelemetrySubscriptionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    answer = manager.get_subscriptions(
        request.client_instance_id, Caller(ctx.client_id, ctx.client_host, ctx.connection_id)
    )
    instance = answer.instance
    if instance is None:
        explain(answer.error, "GetTelemetrySubscriptions arrived before the next push interval time")
        return GetTelemetrySubscriptionsResponse(error_code=answer.error)
    return GetTelemetrySubscriptionsResponse(
        client_instance_id=instance.instance_id,
        subscription_id=instance.subscription_id,
        accepted_compression_types=list(ACCEPTED_COMPRESSION),
        push_interval_ms=instance.interval_ms,
        telemetry_max_bytes=manager.max_bytes,
        delta_temporality=True,
        requested_metrics=list(instance.metrics),
    )
