"""DeleteRecords (key 21), v0-v2.

v1: as v0 (throttle before answering on quota violation). v2+: flexible. Per partition
(KafkaApis.handleDeleteRecordsRequest, ReplicaManager.deleteRecordsOnLocalLog,
Partition.deleteRecordsOnLeader): DELETE on the topic (TOPIC_AUTHORIZATION_FAILED); unknown ->
UNKNOWN_TOPIC_OR_PARTITION; an internal topic -> INVALID_TOPIC_EXCEPTION; not the leader ->
NOT_LEADER_OR_FOLLOWER; cleanup.policy without delete -> POLICY_VIOLATION; offset -1 = the high
watermark; past the high watermark -> OFFSET_OUT_OF_RANGE. The answer's low watermark is the new
log start offset, durable before it is sent (the replicas are logical: nothing to wait for).
"""

from __future__ import annotations

from coordinator.handlers.leadership import leader_error
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.delete_records import (
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)


async def handle(ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    data = ctx.broker.data
    topics = []
    for topic in request.topics:
        allowed = ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, topic.name)
        known = ctx.broker.topics.get(topic.name)
        results = []
        for p in topic.partitions:
            error: int
            low = -1
            if not allowed:
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif known is None or not 0 <= p.partition_index < known.partitions:
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif known.internal:
                error = ErrorCode.INVALID_TOPIC_EXCEPTION
                explain(error, f"Cannot delete records of internal topic {topic.name}")
            elif error := leader_error(ctx, topic.name, p.partition_index):
                pass
            elif (part := data.partition(topic.name, p.partition_index)) is None:
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                error, low, message = part.delete_records(p.offset)
                if message is not None:
                    explain(error, message)
            results.append(
                DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=low, error_code=error)
            )
        topics.append(DeleteRecordsTopicResult(name=topic.name, partitions=results))
    return DeleteRecordsResponse(topics=topics)
