"""OffsetCommit (key 8), v2-v9.

v2-4: retention_time_ms (-1 = the broker's offsets.retention.minutes; anything else is stored as
an expire timestamp, OffsetCommitValue v1). v3+: throttle time. v5: retention_time_ms removed.
v6+: committed leader epoch. v7+: group.instance.id (static members are checked). v8+: flexible.
v9: an unknown group with a generation >= 0 gets GROUP_ID_NOT_FOUND (ILLEGAL_GENERATION before); the
generation is a KIP-848 member's epoch (STALE_MEMBER_EPOCH when it differs; consumer-protocol
members must use v9+, UNSUPPORTED_VERSION otherwise).
Unknown topics and partitions get UNKNOWN_TOPIC_OR_PARTITION each, before the group sees the
rest (Kafka's KafkaApis.handleOffsetCommitRequest; its new coordinator itself does not check).
Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED for every partition), READ on each
topic (else TOPIC_AUTHORIZATION_FAILED for its partitions), before the existence checks.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.groups.offset_requests import CommitPartitionLike, OffsetCommitParams
from coordinator.handlers.authz import refused, split_authorized
from coordinator.handlers.known_partitions import split_known
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)


async def handle(ctx: RequestContext, request: OffsetCommitRequest) -> OffsetCommitResponse:
    version = ctx.api_version
    registry = ctx.broker.topics
    answers: dict[str, list[OffsetCommitResponsePartition]] = {}
    known: list[tuple[str, Sequence[CommitPartitionLike]]] = []
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleOffsetCommitRequest
        if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
            why = f"no READ on group {request.group_id}"
            return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, why)
        _, denied = split_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        if t.name in denied:
            answers.setdefault(t.name, []).extend(
                OffsetCommitResponsePartition(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                for p in t.partitions
            )
            continue
        topic = registry.get(t.name)
        if topic is not None and all(0 <= p.partition_index < topic.partitions for p in t.partitions):
            # The decoded partitions are what the commit reads (before v6 they decode with leader
            # epoch -1): passed as they are, no copy per partition.
            known.append((t.name, t.partitions))
            continue
        valid, unknown = split_known(registry, t.name, t.partitions)
        if unknown:
            answers.setdefault(t.name, []).extend(
                OffsetCommitResponsePartition(n, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for n in unknown
            )
        if valid:
            known.append((t.name, valid))
    if known:
        result = await ctx.broker.groups.commit_offsets(
            OffsetCommitParams(
                group_id=request.group_id,
                topics=known,
                generation_id=request.generation_id_or_member_epoch,
                member_id=request.member_id,
                group_instance_id=request.group_instance_id if version >= 7 else None,
                retention_time_ms=request.retention_time_ms if version <= 4 else -1,
                request_version=version,
            )
        )
        if not answers and len(known) == len({name for name, _ in known}):
            # Every topic known, each named once (the usual case): the result is the response.
            return OffsetCommitResponse(
                topics=[
                    OffsetCommitResponseTopic(
                        name=name, partitions=[OffsetCommitResponsePartition(n, error) for n, error in partitions]
                    )
                    for name, partitions in result.topics
                ]
            )
        for name, partitions in result.topics:
            answers.setdefault(name, []).extend(OffsetCommitResponsePartition(n, error) for n, error in partitions)
    return OffsetCommitResponse(
        topics=[OffsetCommitResponseTopic(name=name, partitions=partitions) for name, partitions in answers.items()]
    )
