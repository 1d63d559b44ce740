"""ListOffsets (key 2), v1-v7.

v1: one offset and timestamp per partition (v0's old_style_offsets are not served). v2+:
isolation level and throttle time (READ_COMMITTED: latest is the last stable offset, and no
lookup passes it). v4+: current_leader_epoch in (checked by the leader), the leader
epoch out. v5+: OFFSET_NOT_AVAILABLE exists (never needed here). A broker that does not lead a
partition answers NOT_LEADER_OR_FOLLOWER for it.
v6+: flexible. v7: timestamp -3 = the record with the largest timestamp (KIP-734).
Authorization: DESCRIBE on each topic (else TOPIC_AUTHORIZATION_FAILED for its partitions).
"""

from __future__ import annotations

from coordinator.broker.offsets import list_offset
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.leadership import current_leader, leader_error
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)

MAX_TIMESTAMP = -3
READ_COMMITTED = 1


async def handle(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    data = ctx.broker.data
    committed = ctx.api_version >= 2 and request.isolation_level == READ_COMMITTED
    topics = []
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleListOffsetRequest: DESCRIBE on each topic
        _, denied = split_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics))
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            error: int
            if topic.name in denied:
                explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no DESCRIBE on topic {topic.name}")
                error, timestamp, offset = ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, -1
            elif error := leader_error(ctx, topic.name, p.partition_index, p.current_leader_epoch):
                timestamp, offset = -1, -1  # before the log: another process may hold it
            elif (part := data.partition(topic.name, p.partition_index)) is None:
                explain(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{topic.name}-{p.partition_index} does not exist")
                error, timestamp, offset = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1
            elif p.timestamp == MAX_TIMESTAMP and ctx.api_version < 7:
                explain(ErrorCode.UNSUPPORTED_VERSION, "the max-timestamp lookup (-3) needs ListOffsets v7+")
                error, timestamp, offset = ErrorCode.UNSUPPORTED_VERSION, -1, -1
            else:
                error, timestamp, offset = list_offset(part, p.timestamp, committed)
            partitions.append(
                ListOffsetsPartitionResponse(
                    partition_index=p.partition_index,
                    error_code=error,
                    timestamp=timestamp,
                    offset=offset,
                    leader_epoch=_epoch(ctx, topic.name, p.partition_index) if error == ErrorCode.NONE else -1,
                )
            )
        topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    return ListOffsetsResponse(topics=topics)


def _epoch(ctx: RequestContext, topic: str, partition: int) -> int:
    lead = current_leader(ctx, topic, partition)
    return -1 if lead is None else lead.epoch
