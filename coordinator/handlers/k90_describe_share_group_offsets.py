"""DescribeShareGroupOffsets (key 90), v0-v1 (KIP-932).

For each group, each asked share-partition's start offset as the share coordinator holds it (-1
when it holds none: a topic that does not exist or was never initialized is no error, as
OffsetFetch treats it); Topics null asks for every initialized share-partition of the group.
v1: each partition's Lag (KIP-1226), the high watermark - start offset - records already
delivered past it, or -1 when the share coordinator does not know (older state).
KafkaApis' checks: UNSUPPORTED_VERSION when group.share.enable is off, GROUP_AUTHORIZATION_FAILED
without DESCRIBE on the group, TOPIC_AUTHORIZATION_FAILED on each partition of a topic without
DESCRIBE (topics left out when all were asked).
"""

from __future__ import annotations

import uuid

from coordinator.groups.share.service import OffsetsGroup
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
)
from protocol.messages.describe_share_group_offsets import DescribeShareGroupOffsetsRequestGroup as RequestGroup
from protocol.messages.describe_share_group_offsets import DescribeShareGroupOffsetsResponseGroup as ResponseGroup

TOPIC_AUTHORIZATION_FAILED_MESSAGE = "Topic authorization failed."  # Errors.TOPIC_AUTHORIZATION_FAILED


def _response(g: OffsetsGroup) -> ResponseGroup:
    return ResponseGroup(
        group_id=g.group_id,
        error_code=g.error_code,
        error_message=g.error_message,
        topics=[
            DescribeShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name,
                topic_id=t.topic_id,
                partitions=[
                    DescribeShareGroupOffsetsResponsePartition(
                        partition_index=r.partition,
                        start_offset=r.start_offset,
                        leader_epoch=r.leader_epoch,
                        lag=r.lag,
                        error_code=r.error_code,
                        error_message=r.error_message,
                    )
                    for r in t.partitions
                ],
            )
            for t in g.topics
        ],
    )


async def _group(ctx: RequestContext, request: RequestGroup) -> ResponseGroup:
    group_id = request.group_id
    if not ctx.broker.groups.share.settings.enabled:
        explain(ErrorCode.UNSUPPORTED_VERSION, "share groups are not enabled (group.share.enable)")
        return ResponseGroup(group_id=group_id, error_code=ErrorCode.UNSUPPORTED_VERSION)
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        explain(ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no DESCRIBE on group {group_id!r}")
        return ResponseGroup(group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if request.topics is None:
        answer = _response(await ctx.broker.groups.describe_share_group_offsets(group_id, None))
        answer.topics = [
            t for t in answer.topics if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic_name)
        ]
        return answer
    if not request.topics:
        return ResponseGroup(group_id=group_id)
    verdicts = [(t, ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic_name)) for t in request.topics]
    refused = [t for t, ok in verdicts if not ok]
    wanted = {t.topic_name: list(t.partitions) for t, ok in verdicts if ok}
    answer = _response(await ctx.broker.groups.describe_share_group_offsets(group_id, wanted))
    if answer.error_code:
        return answer
    for t in refused:
        explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no DESCRIBE on topic {t.topic_name!r}")
        answer.topics.append(
            DescribeShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name,
                topic_id=uuid.UUID(int=0),
                partitions=[
                    DescribeShareGroupOffsetsResponsePartition(
                        partition_index=p,
                        start_offset=-1,
                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                        error_message=TOPIC_AUTHORIZATION_FAILED_MESSAGE,
                    )
                    for p in t.partitions
                ],
            )
        )
    return answer


async def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequest) -> DescribeShareGroupOffsetsResponse:
    return DescribeShareGroupOffsetsResponse(groups=[await _group(ctx, g) for g in request.groups])
