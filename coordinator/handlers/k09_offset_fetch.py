"""OffsetFetch (key 9), v1-v10.

v1: one group, listed partitions only; a group-level error is repeated on every partition.
v2+: topics null = every committed partition; a top-level error code. v3+: throttle time.
v5+: committed leader epoch. v6+: flexible. v7+: require_stable (no transactions here, so it
never yields UNSTABLE_OFFSET_COMMIT). v8+: several groups, each with its own error code.
v9: member id/epoch, checked for KIP-848 consumer groups (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID as
the group's error). Unknown groups are not an error: their partitions answer offset -1 (Kafka's
OffsetMetadataManager.fetchOffsets).
v10: topics named by id (topic_ids.py): an id the broker does not know, the zero id included,
answers UNKNOWN_TOPIC_ID for its partitions; an offset committed under another id of the same
name (a recreated topic) answers -1; an all-topics fetch leaves out topics that no longer exist.
Authorization: DESCRIBE on each group and on each topic (KafkaApis; see `_authorized`).
"""

from __future__ import annotations

from coordinator.groups.offset_requests import FetchedGroup, FetchGroup, OffsetFetchParams
from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.topic_ids import FIRST_TOPIC_ID_VERSION, FetchTopicIds
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
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
    if ctx.api_version >= FIRST_TOPIC_ID_VERSION:
        ids = FetchTopicIds(request, ctx.broker.topics)
        response = await (
            _authorized(ctx, request, ids) if ctx.broker.authorizer is not None else _fetch(ctx, request, ids)
        )
        ids.answer(response)
        return response
    if ctx.broker.authorizer is not None:
        return await _authorized(ctx, request)
    return await _fetch(ctx, request)


async def _authorized(
    ctx: RequestContext, request: OffsetFetchRequest, ids: FetchTopicIds | None = None
) -> OffsetFetchResponse:
    """Kafka's handleOffsetFetchRequestFromCoordinator: DESCRIBE on each group (else
    GROUP_AUTHORIZATION_FAILED), DESCRIBE on each topic asked for (else TOPIC_AUTHORIZATION_FAILED
    for its partitions); an all-topics fetch leaves out the topics the principal may not see."""

    def may(resource_type: ResourceType, name: str) -> bool:
        return ctx.authorize(AclOperation.DESCRIBE, resource_type, name)

    denied_topics: dict[str, list[tuple[str, list[int]]]] = {}
    if ctx.api_version < 8:
        if not may(ResourceType.GROUP, request.group_id):
            return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no DESCRIBE on {request.group_id}")
        if request.topics is not None:
            denied_topics[request.group_id] = [
                (t.name, list(t.partition_indexes)) for t in request.topics if not may(ResourceType.TOPIC, t.name)
            ]
            request.topics = [t for t in request.topics if may(ResourceType.TOPIC, t.name)]
        response = await _fetch(ctx, request)
        response.topics = [t for t in response.topics if may(ResourceType.TOPIC, t.name)]
        response.topics += [
            OffsetFetchResponseTopic(
                name, [OffsetFetchResponsePartition(n, -1, -1, "", ErrorCode.TOPIC_AUTHORIZATION_FAILED) for n in ps]
            )
            for name, ps in denied_topics.get(request.group_id, [])
        ]
        return response
    denied_groups = [g.group_id for g in request.groups if not may(ResourceType.GROUP, g.group_id)]
    request.groups = [g for g in request.groups if g.group_id not in denied_groups]
    for g in request.groups:
        if g.topics is not None:
            denied_topics[g.group_id] = [
                (t.name, list(t.partition_indexes)) for t in g.topics if not may(ResourceType.TOPIC, t.name)
            ]
            g.topics = [t for t in g.topics if may(ResourceType.TOPIC, t.name)]
    response = await _fetch(ctx, request, ids) if request.groups else OffsetFetchResponse(groups=[])
    for group in response.groups:
        group.topics = [t for t in group.topics if may(ResourceType.TOPIC, t.name)]
        group.topics += [
            OffsetFetchResponseTopics(
                name=name,
                partitions=[
                    OffsetFetchResponsePartitions(n, -1, -1, "", ErrorCode.TOPIC_AUTHORIZATION_FAILED) for n in ps
                ],
            )
            for name, ps in denied_topics.get(group.group_id, [])
        ]
    response.groups += [
        OffsetFetchResponseGroup(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in denied_groups
    ]
    return response


async def _fetch(
    ctx: RequestContext, request: OffsetFetchRequest, ids: FetchTopicIds | None = None
) -> OffsetFetchResponse:
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
                        {} if ids is None else ids.asked(g.group_id),
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
