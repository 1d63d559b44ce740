"""DescribeGroups (key 15), v0-v5.

v1+: throttle time. v3+: authorized operations (not computed: reported as Kafka's "not asked",
INT32_MIN). v4+: group.instance.id per member. v5+: flexible. v6 (not served yet): error
message and GROUP_ID_NOT_FOUND for unknown groups, which earlier versions report as Dead.
"""

from __future__ import annotations

from coordinator.groups.requests import DescribeGroupsParams
from coordinator.handlers.request_context import RequestContext
from protocol.messages.describe_groups import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)


async def handle(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    described = await ctx.broker.groups.describe_groups(
        DescribeGroupsParams(list(request.groups), request_version=ctx.api_version)
    )
    return DescribeGroupsResponse(
        groups=[
            DescribedGroup(
                error_code=group.error,
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
