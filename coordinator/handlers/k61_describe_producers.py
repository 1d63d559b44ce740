"""DescribeProducers (key 61), v0: the active producers of each partition (KIP-664).

Per partition (KafkaApis.handleDescribeProducersRequest, ReplicaManager.activeProducerState):
READ on the topic, else TOPIC_AUTHORIZATION_FAILED; unknown -> UNKNOWN_TOPIC_OR_PARTITION; not
the leader -> NOT_LEADER_OR_FOLLOWER; else each producer the log's state knows: id, epoch, last
sequence, last timestamp, coordinator epoch and the first offset of its open transaction (-1).
"""

from __future__ import annotations

from coordinator.handlers.leadership import leader_error
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicResponse,
)


async def handle(ctx: RequestContext, request: DescribeProducersRequest) -> DescribeProducersResponse:
    data = ctx.broker.data
    topics = []
    for topic in request.topics:
        allowed = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.name)
        partitions = []
        for index in topic.partition_indexes:
            result = PartitionResponse(partition_index=index)
            if not allowed:
                result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif error := leader_error(ctx, topic.name, index):  # before the log: another process may hold it
                result.error_code = error
            elif (part := data.partition(topic.name, index)) is None:
                result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                result.active_producers = [
                    ProducerState(
                        producer_id=e.producer_id,
                        producer_epoch=e.producer_epoch,
                        last_sequence=e.last_seq,
                        last_timestamp=e.last_timestamp,
                        coordinator_epoch=e.coordinator_epoch,
                        current_txn_start_offset=e.current_txn_first_offset,
                    )
                    for e in sorted(part.producers.producers.values(), key=lambda e: e.producer_id)
                ]
            partitions.append(result)
        topics.append(TopicResponse(name=topic.name, partitions=partitions))
    return DescribeProducersResponse(topics=topics)
