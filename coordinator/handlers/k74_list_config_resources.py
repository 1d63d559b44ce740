"""ListConfigResources (key 74), v0-v1 (KIP-1142; v0 was ListClientMetricsResources).

v0: client-metrics subscriptions only (the CLIENT_METRICS resources; kgc's settings-made default
subscription is not one). v1: resource_types filter (empty = every type), each resource with its
type: every topic, every broker, every group with dynamic configs, every subscription.
DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED; an unknown type ->
INVALID_REQUEST.
"""

from __future__ import annotations

from coordinator.admin.config_model import ConfigError, ResourceType
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import CLUSTER_NAME, AclOperation
from coordinator.security.authorization import ResourceType as AclResource
from protocol.errors import ErrorCode
from protocol.messages.list_config_resources import (
    ConfigResource,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)


async def handle(ctx: RequestContext, request: ListConfigResourcesRequest) -> ListConfigResourcesResponse:
    service = ctx.broker.configs
    assert service is not None, "the composition root builds the config service"
    if not ctx.authorize(AclOperation.DESCRIBE_CONFIGS, AclResource.CLUSTER, CLUSTER_NAME):
        return ListConfigResourcesResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    types = [int(ResourceType.CLIENT_METRICS)] if ctx.api_version == 0 else list(request.resource_types)
    brokers = sorted(ctx.broker.cluster.nodes)
    try:
        found = service.list_resources(types, brokers)
    except ConfigError as exc:
        explain(exc.code, exc.message or "")
        return ListConfigResourcesResponse(error_code=exc.code)
    return ListConfigResourcesResponse(
        config_resources=[ConfigResource(resource_name=name, resource_type=rtype) for name, rtype in found]
    )
