"""AlterConfigs (key 33), v0-v2: a resource's overrides replaced by the request's set.

v1: as v0 (throttle first). v2: flexible. Checks in Kafka's order: the request's shape
(handlers/config_common.py: a resource or config named twice, null values -> INVALID_REQUEST),
ALTER_CONFIGS on the topic, the group or (brokers) the cluster, then the resource's new set
(coordinator/admin/configs.py). Each resource succeeds or fails whole; validate_only changes nothing.
"""

from __future__ import annotations

from coordinator.admin.config_model import ConfigError
from coordinator.handlers.config_common import authorize, preprocess
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation
from protocol.errors import ErrorCode
from protocol.messages.alter_configs import AlterConfigsRequest, AlterConfigsResourceResponse, AlterConfigsResponse


async def handle(ctx: RequestContext, request: AlterConfigsRequest) -> AlterConfigsResponse:
    service = ctx.broker.configs
    assert service is not None, "the composition root builds the config service"
    refused = preprocess(request.resources, incremental=False)
    responses = []
    for i, resource in enumerate(request.resources):
        rtype, name = resource.resource_type, resource.resource_name
        error: int = ErrorCode.NONE
        message: str | None = None
        try:
            if i in refused:
                raise refused[i]
            error = authorize(ctx, AclOperation.ALTER_CONFIGS, rtype, name)
            if not error:
                configs = {c.name: c.value or "" for c in resource.configs}
                service.replace(rtype, name, configs, request.validate_only, ctx.broker.node_id)
        except ConfigError as exc:
            error, message = exc.code, exc.message
        if error:
            explain(error, f"AlterConfigs {name!r} (type {rtype}): {message or ErrorCode(error).name}")
        responses.append(
            AlterConfigsResourceResponse(
                error_code=error, error_message=message, resource_type=rtype, resource_name=name
            )
        )
    return AlterConfigsResponse(responses=responses)
