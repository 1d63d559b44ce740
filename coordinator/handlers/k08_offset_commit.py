"""OffsetCommit (key 8), v2-v10.

v2-4: retention_time_ms (-1 = the broker's offsets.retention.minutes; anything else is stored as
an expire timestamp, OffsetCommitValue v1). v3+: throttle time. v5: retention_time_ms removed.
v6+: committed leader epoch. v7+: group.instance.id (static members are checked). v8+: flexible.
v9: an unknown group with a generation >= 0 gets GROUP_ID_NOT_FOUND (ILLEGAL_GENERATION before); the
generation is a KIP-848 member's epoch (STALE_MEMBER_EPOCH when newer, or older than a partition's
assignment epoch, KIP-1251; consumer-protocol members must use v9+, UNSUPPORTED_VERSION otherwise).
v10: topics are named by id, not name; an id the broker does not know (the zero id included) gets
UNKNOWN_TOPIC_ID for its partitions; the response names topics by id and merges entries of the
same id; the offsets are still keyed by name on disk, with the id in OffsetCommitValue v4.
Unknown topics and partitions get UNKNOWN_TOPIC_OR_PARTITION each, before the group sees the
rest (Kafka's KafkaApis.handleOffsetCommitRequest; its new coordinator itself does not check).
Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED for every partition), READ on each
topic (else TOPIC_AUTHORIZATION_FAILED for its partitions), after the id lookup and before the
existence checks.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from itertools import starmap

from coordinator.groups.offset_requests import CommitPartitionLike, OffsetCommitParams
from coordinator.handlers.authz import refused, split_authorized
from coordinator.handlers.known_partitions import split_known
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.topic_ids import FIRST_TOPIC_ID_VERSION, name_commit_topics
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)

Key = str | uuid.UUID  # how the response tells topics apart: the name, or the id from v10


async def handle(ctx: RequestContext, request: OffsetCommitRequest) -> OffsetCommitResponse:
    version = ctx.api_version
    use_ids = version >= FIRST_TOPIC_ID_VERSION
    registry = ctx.broker.topics
    if ctx.broker.authorizer is not None:  # KafkaApis.handleOffsetCommitRequest
        if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
            why = f"no READ on group {request.group_id}"
            return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, why)
    if use_ids:
        name_commit_topics(request, registry)
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:
        _, denied = split_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    # Kafka's OffsetCommitResponse.Builder: one entry per topic key, first-seen order.
    answers: dict[Key, tuple[str, list[OffsetCommitResponsePartition]]] = {}
    known: list[tuple[str, Sequence[CommitPartitionLike]]] = []
    ids: dict[str, uuid.UUID] = {}

    def add(key: Key, name: str, partitions: list[OffsetCommitResponsePartition]) -> None:
        answers.setdefault(key, (name, []))[1].extend(partitions)

    for t in request.topics:
        key: Key = t.topic_id if use_ids else t.name
        if use_ids and not t.name:
            explain(ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {t.topic_id}")
            add(
                key,
                "",
                [OffsetCommitResponsePartition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_ID) for p in t.partitions],
            )
            continue
        if t.name in denied:
            add(
                key,
                t.name,
                [
                    OffsetCommitResponsePartition(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                    for p in t.partitions
                ],
            )
            continue
        if use_ids:
            ids[t.name] = t.topic_id
        topic = registry.get(t.name)
        if topic is not None and _all_in_range(t.partitions, topic.partitions):
            # The decoded partitions are what the commit reads (before v6 they decode with leader
            # epoch -1): passed as they are, no copy per partition.
            known.append((t.name, t.partitions))
            continue
        valid, unknown = split_known(registry, t.name, t.partitions)
        if unknown:
            add(key, t.name, [OffsetCommitResponsePartition(n, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for n in unknown])
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
                topic_ids=ids,
            )
        )
        if not answers and len(known) == len({name for name, _ in known}):
            # Every topic known, each named once (the usual case): the result is the response.
            return OffsetCommitResponse(
                topics=[
                    OffsetCommitResponseTopic(
                        name=name,
                        topic_id=ids.get(name, _NO_ID),
                        partitions=list(starmap(OffsetCommitResponsePartition, partitions)),  # (n, error) each
                    )
                    for name, partitions in result.topics
                ]
            )
        for name, partitions in result.topics:
            add(ids[name] if use_ids else name, name, list(starmap(OffsetCommitResponsePartition, partitions)))
    return OffsetCommitResponse(
        topics=[
            OffsetCommitResponseTopic(name=name, topic_id=key if isinstance(key, uuid.UUID) else _NO_ID, partitions=ps)
            for key, (name, ps) in answers.items()
        ]
    )


def _all_in_range(partitions: Sequence[CommitPartitionLike], count: int) -> bool:
    """Is every partition index in 0..count-1? (A plain loop: all() over a generator costs more.)"""
    for p in partitions:
        if not 0 <= p.partition_index < count:
            return False
    return True


_NO_ID = uuid.UUID(int=0)
