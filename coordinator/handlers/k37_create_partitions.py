"""CreatePartitions (key 37), v0-v3.

v1: as v0 (throttle before answering on quota violation). v2+: flexible. v3: may answer
THROTTLING_QUOTA_EXCEEDED (no quotas here). A name twice in one request -> INVALID_REQUEST for each
(ControllerApis.createPartitions); ALTER on the topic is checked (TOPIC_AUTHORIZATION_FAILED);
the rules and their order are in coordinator/admin/partitions.py. cluster.processes: the other
broker processes learn of the new partitions from the data dir (coordinator/cluster/shared_topics.py).
"""

from __future__ import annotations

from collections import Counter

from coordinator.admin.partitions import create_partitions
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)


async def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> CreatePartitionsResponse:
    ctx.broker.topics.catch_up()  # cluster.processes: the other processes' topic changes first
    counts = Counter(t.name for t in request.topics)
    live = [node.node_id for node in ctx.broker.cluster.live_nodes()]
    results = []
    for topic in request.topics:
        error: int
        message: str | None
        if counts[topic.name] > 1:
            error, message = ErrorCode.INVALID_REQUEST, "Duplicate topic name."
        elif not ctx.authorize(AclOperation.ALTER, ResourceType.TOPIC, topic.name):
            error, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
        else:
            assignments = None if topic.assignments is None else [list(a.broker_ids) for a in topic.assignments]
            error, message = create_partitions(
                ctx.broker.data, topic.name, topic.count, assignments, request.validate_only, live
            )
        if error:
            explain(error, f"CreatePartitions {topic.name} to {topic.count}: {message or ErrorCode(error).name}")
        results.append(CreatePartitionsTopicResult(name=topic.name, error_code=error, error_message=message))
    return CreatePartitionsResponse(results=results)
