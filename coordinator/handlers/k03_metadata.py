"""Metadata (key 3), v0-v12.

v0: an empty topic list means every topic. v1+: null means every topic, empty means none; adds
controller id, rack and is_internal. v2+: cluster id. v4+: `AllowAutoTopicCreation` (before v4
auto-creation is always requested). v7+: leader epoch (we report -1, so clients never send
OffsetForLeaderEpoch). v9+: flexible. v10+: topic ids (never zero: librdkafka caps Fetch at 12
otherwise). v12: topic names nullable in requests by id.
This one node is broker 0, controller, and leader of every partition with itself as the only
replica and ISR.
"""
from __future__ import annotations

import uuid

from coordinator.broker.topics import InvalidTopicError, Topic
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode
from protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

NO_LEADER_EPOCH = -1
ZERO_UUID = uuid.UUID(int=0)


def _partitions(node_id: int, topic: Topic) -> list[MetadataResponsePartition]:
    return [
        MetadataResponsePartition(
            error_code=ErrorCode.NONE,
            partition_index=index,
            leader_id=node_id,
            leader_epoch=NO_LEADER_EPOCH,
            replica_nodes=[node_id],
            isr_nodes=[node_id],
            offline_replicas=[],
        )
        for index in range(topic.partitions)
    ]


def _describe(ctx: RequestContext, topic: Topic) -> MetadataResponseTopic:
    return MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.internal,
        partitions=_partitions(ctx.broker.node_id, topic),
    )


def _missing(name: str | None, topic_id: uuid.UUID, error: int) -> MetadataResponseTopic:
    return MetadataResponseTopic(error_code=error, name=name, topic_id=topic_id, partitions=[])


def _resolve(ctx: RequestContext, name: str | None, topic_id: uuid.UUID, auto_create: bool) -> MetadataResponseTopic:
    registry = ctx.broker.topics
    if name is None:
        topic = registry.by_id(topic_id) if topic_id != ZERO_UUID else None
        if topic is None:
            explain(ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {topic_id}")
            return _missing(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID)
        return _describe(ctx, topic)
    topic = registry.get(name)
    if topic is not None:
        return _describe(ctx, topic)
    if not auto_create:
        explain(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist and is not auto-created "
                "(allow_auto_topic_creation false, or auto.create.topics.enable=false)")
        return _missing(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    try:
        topic = registry.create(name, ctx.broker.config.num_partitions)
    except InvalidTopicError as exc:
        explain(ErrorCode.INVALID_TOPIC_EXCEPTION, f"{name!r} is not a legal topic name: {exc}")
        return _missing(name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION)
    return _describe(ctx, topic)


async def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    version = ctx.api_version
    if request.topics is None or (version == 0 and not request.topics):
        topics = [_describe(ctx, t) for t in broker.topics.all()]
    else:
        allow = broker.config.auto_create_topics_enable and (version < 4 or request.allow_auto_topic_creation)
        topics = [_resolve(ctx, t.name, t.topic_id, allow) for t in request.topics]
    return MetadataResponse(
        brokers=[MetadataResponseBroker(
            node_id=broker.node_id, host=broker.advertised_host, port=broker.advertised_port, rack=None,
        )],
        cluster_id=broker.config.cluster_id,
        controller_id=broker.node_id,
        topics=topics,
    )
