"""OffsetDelete (key 47), v0 only (never flexible; the error code precedes the throttle time).

Top-level: GROUP_ID_NOT_FOUND, INVALID_GROUP_ID, NON_EMPTY_GROUP (a group with members that is
not a consumer group), coordinator errors; then no topics. Per partition:
GROUP_SUBSCRIBED_TO_TOPIC, and UNKNOWN_TOPIC_OR_PARTITION for topics or partitions the broker
does not have (checked here, before the group, as Kafka's KafkaApis does).
Authorization: DELETE on the group (else GROUP_AUTHORIZATION_FAILED), READ on each topic (else
TOPIC_AUTHORIZATION_FAILED for its partitions).
"""

from __future__ import annotations

from coordinator.groups.offset_requests import OffsetDeleteParams
from coordinator.handlers.authz import refused, split_authorized
from coordinator.handlers.known_partitions import split_known
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)


async def handle(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    registry = ctx.broker.topics
    answers: dict[str, list[OffsetDeleteResponsePartition]] = {}
    known: list[tuple[str, list[int]]] = []
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleOffsetDeleteRequest
        if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, request.group_id):
            why = f"no DELETE on group {request.group_id}"
            return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, why)
        _, denied = split_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        if t.name in denied:
            answers.setdefault(t.name, []).extend(
                OffsetDeleteResponsePartition(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                for p in t.partitions
            )
            continue
        valid, unknown = split_known(registry, t.name, t.partitions)
        if unknown:
            answers.setdefault(t.name, []).extend(
                OffsetDeleteResponsePartition(n, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for n in unknown
            )
        if valid:
            known.append((t.name, [p.partition_index for p in valid]))
    result = await ctx.broker.groups.delete_offsets(OffsetDeleteParams(request.group_id, known))
    if result.error:
        return OffsetDeleteResponse(error_code=result.error)
    for name, partitions in result.topics:
        answers.setdefault(name, []).extend(OffsetDeleteResponsePartition(n, e) for n, e in partitions)
    return OffsetDeleteResponse(
        topics=[OffsetDeleteResponseTopic(name=name, partitions=partitions) for name, partitions in answers.items()]
    )
