"""LeaveGroup (key 13), v0-v5.

v0-v2: one member id, one error. v3+: a batch of members, each with group.instance.id and its
own error (KIP-345, used by admin `removeMembersFromConsumerGroup`). v4+: flexible.
v5+: a reason per member (KIP-800).
Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.groups.requests import LeaveGroupParams, LeavingMember
from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberResponse


async def handle(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    # KafkaApis: READ on the group (the first test keeps the no-authorizer path to one attribute load)
    if ctx.broker.authorizer is not None and not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {request.group_id}")
    version = ctx.api_version
    if version < 3:
        params = LeaveGroupParams.single(request.group_id, request.member_id, version)
    else:
        params = LeaveGroupParams(
            request.group_id,
            [LeavingMember(m.member_id, m.group_instance_id, m.reason) for m in request.members],
            version,
        )
    result = await ctx.broker.groups.leave_group(params)
    if version < 3:
        return LeaveGroupResponse(error_code=result.legacy_error())
    return LeaveGroupResponse(
        error_code=result.error,
        members=[
            MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error)
            for m in result.members
        ],
    )
