"""What the config APIs' handlers share: Kafka's authorization per resource type (KafkaApis /
ConfigHelper / AuthHelper) and the request checks made before any resource is touched
(ConfigAdminManager.preprocess): a resource named twice -> INVALID_REQUEST for each, a config
named twice in one resource, or a null value where one is needed -> INVALID_REQUEST."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from coordinator.admin.config_model import ConfigError, ResourceType, invalid_request
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation
from coordinator.security.authorization import ResourceType as AclResource
from protocol.errors import ErrorCode

DELETE = 1  # AlterConfigOp.OpType.DELETE: the one operation whose value may be null


def authorize(ctx: RequestContext, operation: AclOperation, rtype: int, name: str) -> int:
    """ErrorCode.NONE, or the authorization error Kafka answers for this resource type."""
    if rtype == ResourceType.TOPIC:
        ok = ctx.authorize(operation, AclResource.TOPIC, name)
        return ErrorCode.NONE if ok else ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if rtype == ResourceType.GROUP:
        ok = ctx.authorize(operation, AclResource.GROUP, name)
        return ErrorCode.NONE if ok else ErrorCode.GROUP_AUTHORIZATION_FAILED
    ok = ctx.authorize(operation, AclResource.CLUSTER, CLUSTER_NAME)
    return ErrorCode.NONE if ok else ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def preprocess(resources: Sequence[Any], incremental: bool) -> dict[int, ConfigError]:
    """Errors by index in `resources` for the ones refused before any change is made."""
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    errors: dict[int, ConfigError] = {}
    for i, resource in enumerate(resources):
        if counts[(resource.resource_type, resource.resource_name)] > 1:
            errors[i] = invalid_request("Each resource must appear at most once.")
            continue
        names = [c.name for c in resource.configs]
        if len(names) != len(set(names)):
            errors[i] = invalid_request("Error due to duplicate config keys")
            continue
        nulls = [
            c.name for c in resource.configs if c.value is None and not (incremental and c.config_operation == DELETE)
        ]
        if nulls:
            errors[i] = invalid_request("Null value not supported for : " + ", ".join(nulls))
    return errors
