"""SyncGroup (key 14), v0-v5.

v0: group, generation, member, assignments. v3+: group.instance.id (KIP-345). v4+: flexible.
v5+: protocol type and name in request and response, checked against the group's
(INCONSISTENT_GROUP_PROTOCOL on mismatch). Followers park until the leader's assignment is in.
"""
from __future__ import annotations

from coordinator.net.request_context import RequestContext
from coordinator.groups.requests import SyncGroupParams
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse


async def handle(ctx: RequestContext, request: SyncGroupRequest) -> SyncGroupResponse:
    version = ctx.api_version
    result = await ctx.broker.groups.sync_group(SyncGroupParams(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id,
        protocol_type=request.protocol_type if version >= 5 else None,
        protocol_name=request.protocol_name if version >= 5 else None,
        assignments=[(a.member_id, a.assignment) for a in request.assignments],
        request_version=version,
    ))
    return SyncGroupResponse(
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
