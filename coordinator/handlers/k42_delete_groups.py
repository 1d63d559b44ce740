"""DeleteGroups (key 42), v0-v2.

v1+: throttle time. v2+: flexible. Groups with members get NON_EMPTY_GROUP, unknown groups
GROUP_ID_NOT_FOUND; deleted groups become Dead and their records are tombstoned.
Authorization: DELETE on each group (else that group gets GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.groups.requests import DeleteGroupsParams
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest, DeleteGroupsResponse


async def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    names = list(request.groups_names)
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis: DELETE on each group
        _, denied = split_authorized(ctx, AclOperation.DELETE, ResourceType.GROUP, names)
        names = [n for n in names if n not in denied]
    deleted = await ctx.broker.groups.delete_groups(DeleteGroupsParams(names)) if names else []
    results = [
        DeletableGroupResult(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in sorted(denied)
    ]
    return DeleteGroupsResponse(
        results=results + [DeletableGroupResult(group_id=g.group_id, error_code=g.error) for g in deleted]
    )
