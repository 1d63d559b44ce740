"""DeleteTopics (key 20), v1-v6.

v1: throttle time. v4+: flexible. v5+: error_message. v6: topics named by name or by id
(`topics[]`, unknown id -> UNKNOWN_TOPIC_ID) instead of `topic_names`.
Deleting closes the partitions' logs and removes their dirs before the answer (one broker: no
pending deletion to report); internal topics are refused. cluster.processes: the dirs are marked
deleted before the answer and each leading process closes its logs and removes its dirs when it
catches up (coordinator/cluster/shared_topics.py).
Authorization: DESCRIBE and DELETE on each topic (else TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import uuid

from coordinator.broker.admin import delete_topic
from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import Topic
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.delete_topics import DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse
from protocol.primitives import ZERO_UUID


def _delete_known(data: DataPath, topic: Topic) -> tuple[int, str | None] | None:
    """delete_topic's (error, message); None if another process deleted it first (cluster.processes)."""
    try:
        return delete_topic(data, topic)
    except KeyError:
        return None


def _by_name(data: DataPath, name: str) -> DeletableTopicResult:
    topic = data.topics.get(name)
    outcome = None if topic is None else _delete_known(data, topic)
    if topic is None or outcome is None:
        return DeletableTopicResult(
            name=name,
            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            error_message="This server does not host this topic-partition.",
        )
    return DeletableTopicResult(name=name, topic_id=topic.topic_id, error_code=outcome[0], error_message=outcome[1])


def _by_id(data: DataPath, topic_id: uuid.UUID) -> DeletableTopicResult:
    topic = data.topics.by_id(topic_id)
    outcome = None if topic is None else _delete_known(data, topic)
    if topic is None or outcome is None:
        return DeletableTopicResult(
            name=None,
            topic_id=topic_id,
            error_code=ErrorCode.UNKNOWN_TOPIC_ID,
            error_message="This server does not host this topic ID.",
        )
    return DeletableTopicResult(name=topic.name, topic_id=topic_id, error_code=outcome[0], error_message=outcome[1])


async def handle(ctx: RequestContext, request: DeleteTopicsRequest) -> DeleteTopicsResponse:
    ctx.broker.topics.catch_up()  # cluster.processes: the other processes' topic changes first
    return _delete(ctx, request, ctx.broker.data)


def _delete(ctx: RequestContext, request: DeleteTopicsRequest, data: DataPath) -> DeleteTopicsResponse:
    def allowed(name: str) -> bool:  # KafkaApis.handleDeleteTopicsRequest: DESCRIBE and DELETE on it
        return ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name) and ctx.authorize(
            AclOperation.DELETE, ResourceType.TOPIC, name
        )

    def by_name(name: str) -> DeletableTopicResult:
        if not allowed(name):
            return DeletableTopicResult(name=name, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=None)
        return _by_name(data, name)

    def by_id(topic_id: uuid.UUID) -> DeletableTopicResult:
        topic = data.topics.by_id(topic_id)
        if topic is not None and not allowed(topic.name):
            return DeletableTopicResult(
                name=None, topic_id=topic_id, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=None
            )
        return _by_id(data, topic_id)

    if ctx.api_version >= 6:
        responses = []
        for state in request.topics:
            if state.name is not None and state.topic_id == ZERO_UUID:
                responses.append(by_name(state.name))
            elif state.name is None and state.topic_id != ZERO_UUID:
                responses.append(by_id(state.topic_id))
            else:
                responses.append(
                    DeletableTopicResult(
                        name=state.name,
                        topic_id=state.topic_id,
                        error_code=ErrorCode.INVALID_REQUEST,
                        error_message="give either a topic name or a topic id",
                    )
                )
    else:
        responses = [by_name(name) for name in request.topic_names]
    return DeleteTopicsResponse(responses=responses)
