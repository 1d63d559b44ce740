"""JoinGroup (key 11), v0-v9.

v0: no rebalance timeout (the session timeout bounds the join). v1+: rebalance timeout. v4+:
an empty member id gets MEMBER_ID_REQUIRED and a member id to rejoin with (KIP-394). v5+:
group.instance.id (KIP-345). v6+: flexible. v7+: protocol type in the response and a nullable
protocol name. v8+: reason (KIP-800). v9: skip_assignment (only for KIP-848 upgrades; always
false here). The reply parks until the join phase completes (see coordinator/groups/join.py).
Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED), as KafkaApis checks it.
"""

from __future__ import annotations

from coordinator.groups.requests import JoinGroupParams
from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse, JoinGroupResponseMember


async def handle(ctx: RequestContext, request: JoinGroupRequest) -> JoinGroupResponse:
    # KafkaApis: READ on the group (the first test keeps the no-authorizer path to one attribute load)
    if ctx.broker.authorizer is not None and not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {request.group_id}")
    version = ctx.api_version
    result = await ctx.broker.groups.join_group(
        JoinGroupParams(
            group_id=request.group_id,
            member_id=request.member_id,
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=request.rebalance_timeout_ms if version >= 1 else -1,
            protocol_type=request.protocol_type,
            protocols=[(p.name, p.metadata) for p in request.protocols],
            group_instance_id=request.group_instance_id,
            client_id=ctx.client_id,
            client_host=ctx.client_address,
            reason=request.reason,
            request_version=version,
        )
    )
    protocol_name = result.protocol_name
    if protocol_name is None and version < 7:
        protocol_name = ""  # not nullable before v7
    return JoinGroupResponse(
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=protocol_name,
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[
            JoinGroupResponseMember(member_id=member_id, group_instance_id=instance_id, metadata=metadata)
            for member_id, instance_id, metadata in result.members
        ],
    )
