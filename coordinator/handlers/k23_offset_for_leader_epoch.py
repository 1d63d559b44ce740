"""OffsetForLeaderEpoch (key 23), v2-v4.

v2: current_leader_epoch per partition, leader_epoch in the answer. v3+: replica_id (consumers
send -1 or -2). v4: flexible.
Only the leader answers (NOT_LEADER_OR_FOLLOWER elsewhere; current_leader_epoch checked:
FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH). Replicas are logical, one copy that never truncates
on a leader change, and stored batches keep the -1 epoch producers send, so every epoch ends at
the high watermark: the answer is the current leader epoch with end_offset = high watermark (a
client validating its position never needs to truncate). Unknown partitions get
UNKNOWN_TOPIC_OR_PARTITION.
Authorization: CLUSTER_ACTION on the cluster, or DESCRIBE on each topic (else TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.handlers.authz import split_authorized
from coordinator.handlers.leadership import current_leader, leader_error
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
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
    denied: set[str] = set()
    if ctx.broker.authorizer is not None and not ctx.authorize(
        AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME
    ):  # KafkaApis: a follower has CLUSTER_ACTION; a client needs DESCRIBE on each topic
        _, denied = split_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, (t.topic for t in request.topics))
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            if topic.topic in denied:
                partitions.append(
                    EpochEndOffset(
                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                        partition=p.partition,
                        leader_epoch=-1,
                        end_offset=-1,
                    )
                )
            elif error := leader_error(ctx, topic.topic, p.partition, p.current_leader_epoch):
                partitions.append(  # before the log: another process may hold it
                    EpochEndOffset(error_code=error, partition=p.partition, leader_epoch=-1, end_offset=-1)
                )
            elif (part := data.partition(topic.topic, p.partition)) is None:
                partitions.append(
                    EpochEndOffset(
                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        partition=p.partition,
                        leader_epoch=-1,
                        end_offset=-1,
                    )
                )
            else:
                lead = current_leader(ctx, topic.topic, p.partition)
                partitions.append(
                    EpochEndOffset(
                        error_code=ErrorCode.NONE,
                        partition=p.partition,
                        leader_epoch=lead.epoch if lead else -1,
                        end_offset=part.high_watermark,
                    )
                )
        topics.append(OffsetForLeaderTopicResult(topic=topic.topic, partitions=partitions))
    return OffsetForLeaderEpochResponse(topics=topics)
