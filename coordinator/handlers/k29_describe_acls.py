"""DescribeAcls (key 29), v1-v3.

v1+: pattern type filter (LITERAL, PREFIXED, ANY, MATCH). v2+: flexible. v3: same body (the
USER resource type). Kafka's AclApis.handleDescribeAcls: the principal needs DESCRIBE on the
CLUSTER (else CLUSTER_AUTHORIZATION_FAILED); without an authorizer the answer is
SECURITY_DISABLED; the ACLs the filter matches come back grouped by resource pattern.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.security.acls import AclFilter
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)


async def handle(ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return DescribeAclsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return DescribeAclsResponse(
            error_code=ErrorCode.SECURITY_DISABLED, error_message="No Authorizer is configured."
        )
    wanted = AclFilter(
        request.resource_type_filter,
        request.resource_name_filter,
        request.pattern_type_filter,
        request.principal_filter,
        request.host_filter,
        request.operation,
        request.permission_type,
    )
    problem = wanted.unknown_reason()
    if problem is not None:
        return DescribeAclsResponse(error_code=ErrorCode.INVALID_REQUEST, error_message=problem)
    resources: dict[tuple[int, str, int], list[AclDescription]] = {}
    for acl in authorizer.acls(wanted):
        resources.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(
            AclDescription(
                principal=acl.principal, host=acl.host, operation=acl.operation, permission_type=acl.permission
            )
        )
    return DescribeAclsResponse(
        error_code=ErrorCode.NONE,
        error_message=None,
        resources=[
            DescribeAclsResource(resource_type=rtype, resource_name=name, pattern_type=ptype, acls=acls)
            for (rtype, name, ptype), acls in resources.items()
        ],
    )
