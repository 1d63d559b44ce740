"""ShareGroupHeartbeat (key 76), v1 (KIP-932; v0 was Kafka 4.0's early access, removed in 4.1).

v1: the member makes its own id (an empty MemberId is INVALID_REQUEST); epoch 0 joins with its
subscribed topics, -1 leaves. The rules are in coordinator/groups/share/heartbeat.py; the answer
waits until the share-partitions the heartbeat made initializing are initialized (kgc's
deliberate difference, share/service.py). KafkaApis' checks first: UNSUPPORTED_VERSION when
group.share.enable is off, GROUP_AUTHORIZATION_FAILED without READ on the group,
TOPIC_AUTHORIZATION_FAILED without DESCRIBE on every subscribed topic.
"""

from __future__ import annotations

from functools import lru_cache

from coordinator.groups.share.heartbeat import ShareHeartbeatParams
from coordinator.handlers.request_context import RequestContext, java_inet_text
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.share_group_heartbeat import (
    Assignment,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
    TopicPartitions,
)

_client_address = lru_cache(maxsize=4096)(java_inet_text)


def _error(code: ErrorCode, why: str) -> ShareGroupHeartbeatResponse:
    explain(code, why)
    return ShareGroupHeartbeatResponse(error_code=code)


async def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse:
    groups = ctx.broker.groups
    if not groups.share.settings.enabled:
        return _error(ErrorCode.UNSUPPORTED_VERSION, "share groups are not enabled (group.share.enable)")
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {request.group_id!r}")
    names = request.subscribed_topic_names
    if names and not all(ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name) for name in set(names)):
        return _error(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "no DESCRIBE on a subscribed topic")
    result = await groups.share_group_heartbeat(
        ShareHeartbeatParams(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            rack_id=request.rack_id,
            subscribed_topic_names=names,
            client_id=ctx.client_id,
            client_host=_client_address(ctx.client_host),
        )
    )
    assignment = result.assignment
    return ShareGroupHeartbeatResponse(
        error_code=result.error_code,
        error_message=result.error_message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=None
        if assignment is None
        else Assignment(topic_partitions=[TopicPartitions(tp.topic_id, list(tp.partitions)) for tp in assignment]),
    )
