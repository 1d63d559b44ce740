"""Metadata (key 3), v0-v12.

v0: an empty topic list means every topic. v1+: null means every topic, empty means none; adds
controller id, rack and is_internal. v2+: cluster id. v4+: `AllowAutoTopicCreation` (before v4
auto-creation is always requested). v7+: leader epoch. v9+: flexible. v10+: topic ids (never
zero: librdkafka caps Fetch at 12 otherwise). v12: topic names nullable in requests by id.
Brokers are the live ones; each partition has its replicas, the live ones as ISR, the down ones
as offline, and its leader and leader epoch from the cluster (coordinator/cluster); a partition
with no live replica has leader -1 and LEADER_NOT_AVAILABLE. The controller is the lowest live
broker. Auto-created topics get default.replication.factor (INVALID_REPLICATION_FACTOR if more
brokers than live are needed); one that would pass `max.partitions` is not created
(UNKNOWN_TOPIC_OR_PARTITION, as with auto-creation off: kgc's cap, see admin.py).
Authorization (KafkaApis): DESCRIBE on each topic (an all-topics request leaves the others out; a
named one gets TOPIC_AUTHORIZATION_FAILED), CREATE on the cluster or topic to auto-create; v8+: the
authorized-operations bitfields when asked for (cluster: v8-v10).
"""

from __future__ import annotations

import uuid

from coordinator.broker.topics import InvalidTopicError, Topic
from coordinator.cluster.cluster import NO_LEADER, Cluster
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

ZERO_UUID = uuid.UUID(int=0)


def _partitions(cluster: Cluster, topic: Topic) -> list[MetadataResponsePartition]:
    out = []
    for index in range(topic.partitions):
        lead = cluster.leadership(topic.name, index)
        assert lead is not None  # the topic exists with this partition
        isr = cluster.in_sync(lead)
        out.append(
            MetadataResponsePartition(
                error_code=ErrorCode.NONE if lead.leader != NO_LEADER else ErrorCode.LEADER_NOT_AVAILABLE,
                partition_index=index,
                leader_id=lead.leader,
                leader_epoch=lead.epoch,
                replica_nodes=list(lead.replicas),
                isr_nodes=isr,
                offline_replicas=[r for r in lead.replicas if r not in isr],
            )
        )
    return out


def _describe(ctx: RequestContext, topic: Topic) -> MetadataResponseTopic:
    return MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.internal,
        partitions=_partitions(ctx.broker.cluster, topic),
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
        explain(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"topic {name!r} does not exist and is not auto-created "
            "(allow_auto_topic_creation false, or auto.create.topics.enable=false)",
        )
        return _missing(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    config = ctx.broker.config
    held = registry.user_partitions()
    if held + config.num_partitions > config.max_partitions:
        # The cap CreateTopics enforces (admin.py) holds here too: a client naming ever more topics
        # must not fill the disk. Refused as when auto-creation is off.
        explain(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"auto-creating {name!r} would make {held + config.num_partitions} user-topic partitions, "
            f"more than max.partitions={config.max_partitions}",
        )
        return _missing(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    factor = config.default_replication_factor
    live = len(ctx.broker.cluster.live_nodes())
    if factor > live:
        explain(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"auto-creating {name!r} needs default.replication.factor={factor} brokers, {live} are live",
        )
        return _missing(name, ZERO_UUID, ErrorCode.INVALID_REPLICATION_FACTOR)
    try:
        topic = registry.create(name, config.num_partitions, None, factor)
    except InvalidTopicError as exc:
        explain(ErrorCode.INVALID_TOPIC_EXCEPTION, f"{name!r} is not a legal topic name: {exc}")
        return _missing(name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION)
    except FileExistsError:  # cluster.processes: another process created it, or is deleting it
        existing = registry.get(name)
        if existing is not None:
            return _describe(ctx, existing)
        explain(ErrorCode.LEADER_NOT_AVAILABLE, f"topic {name!r} is still being deleted: retry")
        return _missing(name, ZERO_UUID, ErrorCode.LEADER_NOT_AVAILABLE)
    return _describe(ctx, topic)


def _authorized_resolve(
    ctx: RequestContext, name: str | None, topic_id: uuid.UUID, auto_create: bool
) -> MetadataResponseTopic:
    """KafkaApis.handleTopicMetadataRequest with an authorizer: a topic the principal may not
    DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether it exists or not (by id: the id is kept, ids
    are not secret); creating a missing one needs CREATE on the cluster or on the topic."""
    if name is None:
        known = ctx.broker.topics.by_id(topic_id) if topic_id != ZERO_UUID else None
        if known is not None and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, known.name):
            explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no DESCRIBE on the topic with id {topic_id}")
            return _missing(None, topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        return _resolve(ctx, name, topic_id, auto_create)
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
        explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no DESCRIBE on topic {name}")
        return _missing(name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    if (
        auto_create
        and ctx.broker.topics.get(name) is None
        and not ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
        and not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, name)
    ):
        explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no CREATE to auto-create topic {name}")
        return _missing(name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return _resolve(ctx, name, topic_id, auto_create)


async def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    broker.topics.catch_up()  # cluster.processes: the other processes' topic changes first
    broker.cluster.catch_up()  # ... and their leader changes
    version = ctx.api_version
    checked = broker.authorizer is not None
    if request.topics is None or (version == 0 and not request.topics):
        every = broker.topics.all()
        if checked:  # all topics: the ones the principal may not DESCRIBE are left out
            every = [t for t in every if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)]
        topics = [_describe(ctx, t) for t in every]
    else:
        allow = broker.config.auto_create_topics_enable and (version < 4 or request.allow_auto_topic_creation)
        resolve = _authorized_resolve if checked else _resolve
        topics = [resolve(ctx, t.name, t.topic_id, allow) for t in request.topics]
    cluster_operations = -2147483648  # the schema's default: not asked for
    if version >= 8:
        if version <= 10 and request.include_cluster_authorized_operations:
            may_describe = ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
            cluster_operations = ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME) if may_describe else 0
        if request.include_topic_authorized_operations:
            for t in topics:
                if t.error_code == ErrorCode.NONE and t.name is not None:
                    t.topic_authorized_operations = ctx.authorized_operations(ResourceType.TOPIC, t.name)
    cluster = broker.cluster
    return MetadataResponse(
        cluster_authorized_operations=cluster_operations,
        brokers=[
            MetadataResponseBroker(n.node_id, *ctx.endpoint(n), None)  # the endpoints of this request's listener
            for n in cluster.live_nodes()
        ],
        cluster_id=broker.config.cluster_id,
        controller_id=cluster.controller_id(),
        topics=topics,
    )
