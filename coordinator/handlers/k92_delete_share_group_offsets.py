"""DeleteShareGroupOffsets (key 92), v0 (KIP-932).

Deletes the share coordinator's state of whole topics for an Empty share group (their
share-partitions are initialized again, from share.auto.offset.reset, when a member next
subscribes). Top-level errors: GROUP_ID_NOT_FOUND (no such share group), NON_EMPTY_GROUP
(members remain), INVALID_GROUP_ID (empty id); per topic UNKNOWN_TOPIC_OR_PARTITION for a topic
that does not exist or has no state, or the share coordinator's error. KafkaApis' checks:
UNSUPPORTED_VERSION when group.share.enable is off, GROUP_AUTHORIZATION_FAILED without DELETE on
the group, TOPIC_AUTHORIZATION_FAILED per topic without READ on it.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsResponseTopic,
)

TOPIC_AUTHORIZATION_FAILED_MESSAGE = "Topic authorization failed."


async def handle(ctx: RequestContext, request: DeleteShareGroupOffsetsRequest) -> DeleteShareGroupOffsetsResponse:
    group_id = request.group_id
    if not ctx.broker.groups.share.settings.enabled:
        explain(ErrorCode.UNSUPPORTED_VERSION, "share groups are not enabled (group.share.enable)")
        return DeleteShareGroupOffsetsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, group_id):
        explain(ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no DELETE on group {group_id!r}")
        return DeleteShareGroupOffsetsResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if not group_id:
        explain(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
        return DeleteShareGroupOffsetsResponse(error_code=ErrorCode.INVALID_GROUP_ID)
    responses: list[DeleteShareGroupOffsetsResponseTopic] = []
    names: list[str] = []
    for topic in request.topics:
        if ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.topic_name):
            names.append(topic.topic_name)
        else:
            explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no READ on topic {topic.topic_name!r}")
            responses.append(
                DeleteShareGroupOffsetsResponseTopic(
                    topic_name=topic.topic_name,
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    error_message=TOPIC_AUTHORIZATION_FAILED_MESSAGE,
                )
            )
    answer = await ctx.broker.groups.delete_share_group_offsets(group_id, names)
    if answer.error_code:
        return DeleteShareGroupOffsetsResponse(error_code=answer.error_code, error_message=answer.error_message)
    for t in answer.topics:
        answered = DeleteShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name or "", error_code=t.error_code, error_message=t.error_message
        )
        if t.topic_id is not None:
            answered.topic_id = t.topic_id
        responses.append(answered)
    return DeleteShareGroupOffsetsResponse(responses=responses)
