"""OffsetFetch (key 9), v1-v9.

v1: one group, listed partitions only; a group-level error is repeated on every partition.
v2+: topics null = every committed partition; a top-level error code. v3+: throttle time.
v5+: committed leader epoch. v6+: flexible. v7+: require_stable (no transactions here, so it
never yields UNSTABLE_OFFSET_COMMIT). v8+: several groups, each with its own error code.
v9: member id/epoch, checked for KIP-848 consumer groups (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID as
the group's error). Unknown groups are not an error: their partitions answer offset -1 (Kafka's
OffsetMetadataManager.fetchOffsets).
"""

from __future__ import annotations

from coordinator.groups.offset_requests import FetchedGroup, FetchGroup, OffsetFetchParams
from coordinator.handlers.request_context import RequestContext
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)


async def handle(ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
    version = ctx.api_version
    service = ctx.broker.groups
    if version >= 8:
        fetched = await service.fetch_offsets(
            OffsetFetchParams(
                [
                    FetchGroup(
                        g.group_id,
                        None if g.topics is None else [(t.name, list(t.partition_indexes)) for t in g.topics],
                        g.member_id if version >= 9 else None,
                        g.member_epoch if version >= 9 else -1,
                    )
                    for g in request.groups
                ],
                request.require_stable,
            )
        )
        return OffsetFetchResponse(groups=[_group(g) for g in fetched])
    topics = None if request.topics is None else [(t.name, list(t.partition_indexes)) for t in request.topics]
    (group,) = await service.fetch_offsets(
        OffsetFetchParams.single(request.group_id, topics, request.require_stable if version >= 7 else False)
    )
    if group.error and version < 2:
        # No top-level error before v2: every asked partition carries it (getErrorResponse).
        return OffsetFetchResponse(
            topics=[
                OffsetFetchResponseTopic(
                    name, [OffsetFetchResponsePartition(n, -1, -1, "", group.error) for n in partitions]
                )
                for name, partitions in topics or []
            ]
        )
    return OffsetFetchResponse(
        error_code=group.error,
        topics=[
            OffsetFetchResponseTopic(
                name,
                [
                    OffsetFetchResponsePartition(p.partition, p.offset, p.leader_epoch, p.metadata, p.error)
                    for p in partitions
                ],
            )
            for name, partitions in group.topics
        ],
    )


def _group(g: FetchedGroup) -> OffsetFetchResponseGroup:
    return OffsetFetchResponseGroup(
        group_id=g.group_id,
        error_code=g.error,
        topics=[
            OffsetFetchResponseTopics(
                name=name,
                partitions=[
                    OffsetFetchResponsePartitions(p.partition, p.offset, p.leader_epoch, p.metadata, p.error)
                    for p in partitions
                ],
            )
            for name, partitions in g.topics
        ],
    )
