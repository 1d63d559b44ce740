"""OffsetDelete (key 47), v0 only (never flexible; the error code precedes the throttle time).

Top-level: GROUP_ID_NOT_FOUND, INVALID_GROUP_ID, NON_EMPTY_GROUP (a group with members that is
not a consumer group), coordinator errors; then no topics. Per partition:
GROUP_SUBSCRIBED_TO_TOPIC, and UNKNOWN_TOPIC_OR_PARTITION for topics or partitions the broker
does not have (checked here, before the group, as Kafka's KafkaApis does).
"""

from __future__ import annotations

from coordinator.groups.offset_requests import OffsetDeleteParams
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
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
    for t in request.topics:
        topic = registry.get(t.name)
        valid = []
        for p in t.partitions:
            if topic is None or not 0 <= p.partition_index < topic.partitions:
                explain(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    f"topic {t.name!r} "
                    + ("does not exist" if topic is None else f"has no partition {p.partition_index}"),
                )
                answers.setdefault(t.name, []).append(
                    OffsetDeleteResponsePartition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                )
            else:
                valid.append(p.partition_index)
        if valid:
            known.append((t.name, valid))
    result = await ctx.broker.groups.delete_offsets(OffsetDeleteParams(request.group_id, known))
    if result.error:
        return OffsetDeleteResponse(error_code=result.error)
    for name, partitions in result.topics:
        answers.setdefault(name, []).extend(OffsetDeleteResponsePartition(n, e) for n, e in partitions)
    return OffsetDeleteResponse(
        topics=[OffsetDeleteResponseTopic(name=name, partitions=partitions) for name, partitions in answers.items()]
    )
