"""CreateAcls (key 30), v1-v3.

v1+: resource pattern type (LITERAL, PREFIXED). v2+: flexible. v3: same body. Kafka's
AclApis.handleCreateAcls and AclControlManager.createAcls: the principal needs ALTER on the
CLUSTER (else every creation gets CLUSTER_AUTHORIZATION_FAILED); without an authorizer every
creation gets SECURITY_DISABLED; each binding is validated on its own (INVALID_REQUEST with
Kafka's reason), the valid ones are added and persisted before the answer (an existing ACL is
kept once).
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.security.acls import AclBinding, validate_binding
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.create_acls import AclCreationResult, CreateAclsRequest, CreateAclsResponse


async def handle(ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
    def everyone(code: int, message: str | None) -> CreateAclsResponse:
        return CreateAclsResponse(results=[AclCreationResult(code, message) for _ in request.creations])

    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return everyone(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return everyone(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    results: list[AclCreationResult] = []
    valid: list[AclBinding] = []
    for c in request.creations:
        binding = AclBinding(
            c.resource_type,
            c.resource_name,
            c.resource_pattern_type,
            c.principal,
            c.host,
            c.operation,
            c.permission_type,
        )
        problem = validate_binding(binding)
        if problem is None:
            valid.append(binding)
            results.append(AclCreationResult(ErrorCode.NONE, None))
        else:
            results.append(AclCreationResult(ErrorCode.INVALID_REQUEST, problem))
    if valid:
        authorizer.create(valid)
    return CreateAclsResponse(results=results)
