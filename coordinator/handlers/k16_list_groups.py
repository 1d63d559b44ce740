"""ListGroups (key 16), v0-v5.

v1+: throttle time. v3+: flexible. v4+: states filter and each group's state (KIP-518).
v5+: types filter and each group's type ("classic" here).
Authorization: DESCRIBE on the cluster lists every group; otherwise only the groups the principal may
DESCRIBE are listed.
"""

from __future__ import annotations

from coordinator.groups.requests import ListGroupsParams
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.messages.list_groups import ListedGroup, ListGroupsRequest, ListGroupsResponse


async def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    version = ctx.api_version
    error, listed = await ctx.broker.groups.list_groups(
        ListGroupsParams(
            states_filter=list(request.states_filter) if version >= 4 else [],
            types_filter=list(request.types_filter) if version >= 5 else [],
        )
    )
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):  # else per group
        listed = [g for g in listed if ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id)]
    # A loading or failed partition fails the whole list (Kafka's listGroups).
    return ListGroupsResponse(
        error_code=error,
        groups=[
            ListedGroup(
                group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state, group_type=g.group_type
            )
            for g in listed
        ],
    )
