"""CreateTopics (key 19), v2-v7.

v2: throttle time (v1's validate_only and error_message are there from the start). v4:
num_partitions/replication_factor may be -1 = broker default (KIP-464). v5+: flexible; results
carry num_partitions, replication_factor and the effective configs (KIP-525), null on error.
v6: THROTTLING_QUOTA_EXCEEDED exists (no quotas here). v7: topic id.
The rules and their order are in coordinator/broker/admin.py.
Authorization: CREATE on the cluster or on each topic (else TOPIC_AUTHORIZATION_FAILED); the configs
of a created topic only with DESCRIBE_CONFIGS on it (else topic_config_error_code says so).
cluster.processes: the other broker processes learn of the topic from the data dir
(coordinator/cluster/shared_topics.py); a name whose deletion is not finished is waited for.
"""

from __future__ import annotations

from collections import Counter

import trio

from coordinator.broker.admin import CreateOutcome, create_topic
from coordinator.broker.topic_config import render
from coordinator.cluster.shared_topics import CHECK_INTERVAL_S, TopicPendingDeletion
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from protocol.primitives import ZERO_UUID


def _result(name: str, outcome: CreateOutcome) -> CreatableTopicResult:
    ok = outcome.error == ErrorCode.NONE
    return CreatableTopicResult(
        name=name,
        topic_id=outcome.topic.topic_id if outcome.topic is not None else ZERO_UUID,
        error_code=outcome.error,
        error_message=outcome.message,
        num_partitions=outcome.num_partitions if ok else -1,
        replication_factor=outcome.replication_factor if ok else -1,
        configs=[
            CreatableTopicConfigs(
                name=key, value=render(value), read_only=False, config_source=source, is_sensitive=False
            )
            for key, (value, source) in sorted(outcome.configs.items())
        ]
        if ok
        else None,
    )


# cluster.processes: how long a name whose deletion another process has not finished is waited
# for. Each process finishes within CHECK_INTERVAL_S; this bounds a wedged one. Not the request's
# timeout_ms, which clients often leave 0 (librdkafka's operation_timeout: "do not wait").
PENDING_DELETION_WAIT_S = 5.0


async def _create(
    ctx: RequestContext, topic: CreatableTopic, request: CreateTopicsRequest, deadline: float
) -> CreateOutcome:
    """cluster.processes: another process may create the name first (TOPIC_ALREADY_EXISTS), or
    still hold a deleted incarnation's log open; that is waited for (`deadline`), as Kafka's
    controller frees a deleted topic's name at once."""
    while True:
        try:
            return create_topic(
                ctx.broker.data,
                topic.name,
                topic.num_partitions,
                topic.replication_factor,
                [(a.partition_index, list(a.broker_ids)) for a in topic.assignments],
                {c.name: c.value for c in topic.configs},
                request.validate_only,
                [node.node_id for node in ctx.broker.cluster.live_nodes()],
            )
        except TopicPendingDeletion:
            if trio.current_time() >= deadline:
                return CreateOutcome(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' is marked for deletion.")
            await trio.sleep(CHECK_INTERVAL_S)
        except FileExistsError:
            return CreateOutcome(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")


async def handle(ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse:
    ctx.broker.topics.catch_up()  # cluster.processes: the other processes' topic changes first
    counts = Counter(t.name for t in request.topics)
    names = [t.name for t in request.topics]
    creatable, describable = set(names), set(names)
    if ctx.broker.authorizer is not None:  # KafkaApis.handleCreateTopicsRequest
        if not ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
            creatable, _ = split_authorized(ctx, AclOperation.CREATE, ResourceType.TOPIC, names)
        describable, _ = split_authorized(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names)
    results = []
    deadline = trio.current_time() + PENDING_DELETION_WAIT_S
    for topic in request.topics:
        if counts[topic.name] > 1:
            outcome = CreateOutcome(
                ErrorCode.INVALID_REQUEST, "Create topics request from client contains a duplicate topic name"
            )
        elif topic.name not in creatable:
            outcome = CreateOutcome(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
        else:
            outcome = await _create(ctx, topic, request, deadline)
        result = _result(topic.name, outcome)
        if topic.name not in describable and result.error_code != ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED  # no DESCRIBE_CONFIGS
            result.configs = None
        results.append(result)
    return CreateTopicsResponse(topics=results)
