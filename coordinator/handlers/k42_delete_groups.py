"""DeleteGroups (key 42), v0-v2.

v1+: throttle time. v2+: flexible. Groups with members get NON_EMPTY_GROUP, unknown groups
GROUP_ID_NOT_FOUND; deleted groups become Dead and their records are tombstoned.
"""

from __future__ import annotations

from coordinator.groups.requests import DeleteGroupsParams
from coordinator.handlers.request_context import RequestContext
from protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest, DeleteGroupsResponse


async def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    deleted = await ctx.broker.groups.delete_groups(DeleteGroupsParams(list(request.groups_names)))
    return DeleteGroupsResponse(
        results=[DeletableGroupResult(group_id=g.group_id, error_code=g.error) for g in deleted]
    )
