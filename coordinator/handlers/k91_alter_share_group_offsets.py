"""AlterShareGroupOffsets (key 91), v0 (KIP-932).

Sets the start offset of share-partitions of an Empty share group: the share coordinator
re-initializes each at its new start offset (state epoch: the group epoch, as Kafka), and the
answer waits for it. Top-level errors: GROUP_ID_NOT_FOUND (no such share group),
NON_EMPTY_GROUP (members remain), INVALID_GROUP_ID (empty id); per partition
UNKNOWN_TOPIC_OR_PARTITION for topics or partitions that do not exist, and the share
coordinator's error if it failed. KafkaApis' checks: UNSUPPORTED_VERSION when group.share.enable
is off, GROUP_AUTHORIZATION_FAILED without READ on the group, TOPIC_AUTHORIZATION_FAILED per
topic without READ on it.
"""

from __future__ import annotations

from coordinator.groups.share.ops import AlteredTopic, AlterParams
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
    AlterShareGroupOffsetsResponsePartition,
    AlterShareGroupOffsetsResponseTopic,
)

TOPIC_AUTHORIZATION_FAILED_MESSAGE = "Topic authorization failed."


def _topic(t: AlteredTopic) -> AlterShareGroupOffsetsResponseTopic:
    topic = AlterShareGroupOffsetsResponseTopic(
        topic_name=t.topic_name,
        partitions=[
            AlterShareGroupOffsetsResponsePartition(partition_index=p, error_code=code, error_message=message)
            for p, (code, message) in t.partitions.items()
        ],
    )
    if t.topic_id is not None:
        topic.topic_id = t.topic_id
    return topic


async def handle(ctx: RequestContext, request: AlterShareGroupOffsetsRequest) -> AlterShareGroupOffsetsResponse:
    group_id = request.group_id
    if not ctx.broker.groups.share.settings.enabled:
        explain(ErrorCode.UNSUPPORTED_VERSION, "share groups are not enabled (group.share.enable)")
        return AlterShareGroupOffsetsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id):
        explain(ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {group_id!r}")
        return AlterShareGroupOffsetsResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if not group_id:
        explain(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
        return AlterShareGroupOffsetsResponse(error_code=ErrorCode.INVALID_GROUP_ID)
    refused: list[AlteredTopic] = []
    wanted: dict[str, dict[int, int]] = {}
    for topic in request.topics:
        offsets = {p.partition_index: p.start_offset for p in topic.partitions}
        if ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.topic_name):
            wanted.setdefault(topic.topic_name, {}).update(offsets)
        else:
            explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no READ on topic {topic.topic_name!r}")
            denied = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED_MESSAGE)
            refused.append(AlteredTopic(topic.topic_name, None, dict.fromkeys(offsets, denied)))
    answer = await ctx.broker.groups.alter_share_group_offsets(AlterParams(group_id, wanted))
    if answer.error_code:
        return AlterShareGroupOffsetsResponse(error_code=answer.error_code, error_message=answer.error_message)
    return AlterShareGroupOffsetsResponse(responses=[_topic(t) for t in refused + answer.topics])
