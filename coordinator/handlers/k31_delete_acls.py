"""DeleteAcls (key 31), v1-v3.

v1+: pattern type filter. v2+: flexible. v3: same body. Kafka's AclApis.handleDeleteAcls and
AclControlManager.deleteAcls: the principal needs ALTER on the CLUSTER (else every filter gets
CLUSTER_AUTHORIZATION_FAILED); without an authorizer SECURITY_DISABLED; a filter with an UNKNOWN
element gets INVALID_REQUEST; every other filter answers the ACLs it removed (persisted first).
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.security.acls import AclFilter
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.delete_acls import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)


async def handle(ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
    def everyone(code: int, message: str | None) -> DeleteAclsResponse:
        return DeleteAclsResponse(filter_results=[DeleteAclsFilterResult(code, message) for _ in request.filters])

    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return everyone(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return everyone(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    filters: list[AclFilter] = []
    problems: list[str | None] = []
    for f in request.filters:
        wanted = AclFilter(
            f.resource_type_filter,
            f.resource_name_filter,
            f.pattern_type_filter,
            f.principal_filter,
            f.host_filter,
            f.operation,
            f.permission_type,
        )
        problems.append(wanted.unknown_reason())
        filters.append(wanted)
    removed = authorizer.delete([f for f, p in zip(filters, problems, strict=True) if p is None])
    results: list[DeleteAclsFilterResult] = []
    matched = iter(removed)
    for problem in problems:
        if problem is not None:
            results.append(DeleteAclsFilterResult(ErrorCode.INVALID_REQUEST, problem))
            continue
        results.append(
            DeleteAclsFilterResult(
                ErrorCode.NONE,
                None,
                [
                    DeleteAclsMatchingAcl(
                        error_code=ErrorCode.NONE,
                        error_message=None,
                        resource_type=a.resource_type,
                        resource_name=a.name,
                        pattern_type=a.pattern_type,
                        principal=a.principal,
                        host=a.host,
                        operation=a.operation,
                        permission_type=a.permission,
                    )
                    for a in next(matched)
                ],
            )
        )
    return DeleteAclsResponse(filter_results=results)
