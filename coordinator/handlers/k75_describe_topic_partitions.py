"""DescribeTopicPartitions (key 75), v0 (KIP-966): what newer admin clients use to describe topics.

Topics sorted by name (every topic when the list is empty), each with its partitions' leader,
epoch, replicas, ISR, offline replicas and (no ELR here) empty eligible and last-known-ELR lists;
at most `response_partition_limit` partitions (capped at Kafka's
max.request.partition.size.limit, 2000) per response, continued from `cursor` with `next_cursor`
(DescribeTopicPartitionsRequestHandler + KRaftMetadataCache.describeTopicResponse). A cursor topic
missing from a non-empty topic list -> INVALID_REQUEST for every topic. Requested topics that do
not exist -> UNKNOWN_TOPIC_OR_PARTITION; DESCRIBE on each topic, else TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from coordinator.broker.topics import Topic
from coordinator.cluster.cluster import NO_LEADER
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_topic_partitions import (
    Cursor,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)
from protocol.primitives import ZERO_UUID

MAX_PARTITIONS = 2000  # Kafka's max.request.partition.size.limit default


def _error(name: str, code: int) -> DescribeTopicPartitionsResponseTopic:
    return DescribeTopicPartitionsResponseTopic(error_code=code, name=name, topic_id=ZERO_UUID, partitions=[])


async def handle(ctx: RequestContext, request: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse:
    registry, cluster = ctx.broker.topics, ctx.broker.cluster
    cursor = request.cursor
    requested = sorted({t.name for t in request.topics})
    if cursor is not None and requested and cursor.topic_name not in requested:
        return DescribeTopicPartitionsResponse(topics=[_error(n, ErrorCode.INVALID_REQUEST) for n in requested])
    names = requested or [t.name for t in registry.all()]
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    out: list[DescribeTopicPartitionsResponseTopic] = []
    found: list[Topic] = []
    for name in names:
        topic = registry.get(name)
        if topic is None:
            out.append(_error(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        elif not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
            out.append(_error(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        else:
            found.append(topic)
    budget = max(1, min(request.response_partition_limit, MAX_PARTITIONS))
    next_cursor = None
    for topic in found:
        start = cursor.partition_index if cursor is not None and topic.name == cursor.topic_name else 0
        if budget == 0:
            next_cursor = Cursor(topic_name=topic.name, partition_index=start)
            break
        end = min(topic.partitions, start + budget)
        partitions = []
        for index in range(start, end):
            lead = cluster.leadership(topic.name, index)
            assert lead is not None
            isr = cluster.in_sync(lead)
            partitions.append(
                DescribeTopicPartitionsResponsePartition(
                    error_code=ErrorCode.LEADER_NOT_AVAILABLE if lead.leader == NO_LEADER else ErrorCode.NONE,
                    partition_index=index,
                    leader_id=lead.leader,
                    leader_epoch=lead.epoch,
                    replica_nodes=list(lead.replicas),
                    isr_nodes=isr,
                    eligible_leader_replicas=[],
                    last_known_elr=[],
                    offline_replicas=[r for r in lead.replicas if r not in isr],
                )
            )
        budget -= end - start
        out.append(
            DescribeTopicPartitionsResponseTopic(
                name=topic.name,
                topic_id=topic.topic_id,
                is_internal=topic.internal,
                partitions=partitions,
                topic_authorized_operations=ctx.authorized_operations(ResourceType.TOPIC, topic.name),
            )
        )
        if end < topic.partitions:
            next_cursor = Cursor(topic_name=topic.name, partition_index=end)
            break
    out.sort(key=lambda t: t.name or "")
    return DescribeTopicPartitionsResponse(topics=out, next_cursor=next_cursor)
