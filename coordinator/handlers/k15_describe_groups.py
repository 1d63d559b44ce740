"""DescribeGroups (key 15), v0-v6.

v1+: throttle time. v3+: authorized operations (when asked: the principal's operations on the
group). v4+: group.instance.id per member. v5+: flexible. v6 (KIP-1043): an unknown group, or a
consumer or share group (not classic), is GROUP_ID_NOT_FOUND with an ErrorMessage ("Group g not
found." / "Group g is not a classic group."), state Dead; earlier versions report them as Dead
without an error.
Authorization: DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED); v3+ answers the group's
authorized operations when asked.
"""

from __future__ import annotations

from coordinator.groups.requests import DescribeGroupsParams
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_groups import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)


async def handle(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    names = list(request.groups)
    _, denied = split_authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, names)  # KafkaApis
    allowed = [g for g in names if g not in denied]
    described = (
        await ctx.broker.groups.describe_groups(DescribeGroupsParams(allowed, request_version=ctx.api_version))
        if allowed
        else []
    )
    response = DescribeGroupsResponse(
        groups=[
            DescribedGroup(
                error_code=group.error,
                error_message=group.error_message,
                group_id=group.group_id,
                group_state=group.state,
                protocol_type=group.protocol_type,
                protocol_data=group.protocol_data,
                members=[
                    DescribedGroupMember(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata,
                        member_assignment=m.assignment,
                    )
                    for m in group.members
                ],
            )
            for group in described
        ]
    )
    if ctx.api_version >= 3 and request.include_authorized_operations:
        for g in response.groups:
            if g.error_code == ErrorCode.NONE:
                g.authorized_operations = ctx.authorized_operations(ResourceType.GROUP, g.group_id)
    response.groups += [
        DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=g, group_state="", protocol_type="")
        for g in sorted(denied)
    ]
    return response
