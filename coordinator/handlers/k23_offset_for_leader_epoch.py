"""OffsetForLeaderEpoch (key 23), v2-v4.

v2: current_leader_epoch per partition, leader_epoch in the answer. v3+: replica_id (consumers
send -1 or -2). v4: flexible.
Every epoch here is -1 (Metadata and ListOffsets report -1 and stored batches keep the -1
producers send), so clients should not ask; if one does, the only epoch there is ends at the
log end offset: answer leader_epoch -1 with end_offset = high watermark. Unknown partitions
get UNKNOWN_TOPIC_OR_PARTITION.
"""
from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)


async def handle(ctx: RequestContext, request: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    data = ctx.broker.data
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            part = data.partition(topic.topic, p.partition)
            if part is None:
                partitions.append(EpochEndOffset(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                 partition=p.partition, leader_epoch=-1, end_offset=-1))
            else:
                partitions.append(EpochEndOffset(error_code=ErrorCode.NONE, partition=p.partition,
                                                 leader_epoch=-1, end_offset=part.high_watermark))
        topics.append(OffsetForLeaderTopicResult(topic=topic.topic, partitions=partitions))
    return OffsetForLeaderEpochResponse(topics=topics)
