"""IncrementalAlterConfigs (key 44), v0-v1: SET / DELETE / APPEND / SUBTRACT on a resource's overrides.

v1: flexible. Checks in Kafka's order: the request's shape (handlers/config_common.py: a resource
or config named twice, a null value for anything but DELETE -> INVALID_REQUEST), ALTER_CONFIGS on
the topic, the group or (brokers) the cluster, then the operations and the resource's new set
(coordinator/admin/configs.py: APPEND/SUBTRACT on a non-list config -> INVALID_CONFIG). Each
resource succeeds or fails whole; validate_only changes nothing.
"""

from __future__ import annotations

from coordinator.admin.config_model import ConfigError
from coordinator.handlers.config_common import authorize, preprocess
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation
from protocol.errors import ErrorCode
from protocol.messages.incremental_alter_configs import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)


async def handle(ctx: RequestContext, request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    service = ctx.broker.configs
    assert service is not None, "the composition root builds the config service"
    refused = preprocess(request.resources, incremental=True)
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
                ops = [(c.name, c.config_operation, c.value) for c in resource.configs]
                service.alter(rtype, name, ops, request.validate_only, ctx.broker.node_id)
        except ConfigError as exc:
            error, message = exc.code, exc.message
        if error:
            explain(error, f"IncrementalAlterConfigs {name!r} (type {rtype}): {message or ErrorCode(error).name}")
        responses.append(
            AlterConfigsResourceResponse(
                error_code=error, error_message=message, resource_type=rtype, resource_name=name
            )
        )
    return IncrementalAlterConfigsResponse(responses=responses)
