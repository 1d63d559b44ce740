"""SyncGroup (key 14), v0-v5.

v0: group, generation, member, assignments. v3+: group.instance.id (KIP-345). v4+: flexible.
v5+: protocol type and name in request and response, both mandatory (KafkaApis answers
INCONSISTENT_GROUP_PROTOCOL when either is null) and checked against the group's
(INCONSISTENT_GROUP_PROTOCOL on mismatch). Followers park until the leader's assignment is in.
Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.groups.requests import SyncGroupParams
from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse


async def handle(ctx: RequestContext, request: SyncGroupRequest) -> SyncGroupResponse:
    # KafkaApis: READ on the group (the first test keeps the no-authorizer path to one attribute load)
    if ctx.broker.authorizer is not None and not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {request.group_id}")
    version = ctx.api_version
    if version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        # SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent
        explain(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "SyncGroup v5+ must carry protocol type and name")
        return SyncGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    result = await ctx.broker.groups.sync_group(
        SyncGroupParams(
            group_id=request.group_id,
            generation_id=request.generation_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            protocol_type=request.protocol_type if version >= 5 else None,
            protocol_name=request.protocol_name if version >= 5 else None,
            assignments=[(a.member_id, a.assignment) for a in request.assignments],
            request_version=version,
        )
    )
    return SyncGroupResponse(
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
