"""Heartbeat (key 12), v0-v4.

v0: group, generation, member. v1+: throttle time. v3+: group.instance.id (KIP-345).
v4+: flexible. What each group state answers is in coordinator/groups/heartbeat.py.
Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.groups.requests import HeartbeatParams
from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse


async def handle(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    # KafkaApis: READ on the group (the first test keeps the no-authorizer path to one attribute load)
    if ctx.broker.authorizer is not None and not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {request.group_id}")
    result = await ctx.broker.groups.heartbeat(
        HeartbeatParams(
            group_id=request.group_id,
            generation_id=request.generation_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
        )
    )
    return HeartbeatResponse(error_code=result.error)
