"""OffsetCommit, OffsetFetch and OffsetDelete against the in-memory groups and offset store.

Copies Kafka's OffsetMetadataManager (commitOffset, fetchOffsets/fetchAllOffsets, deleteOffsets,
deleteAllOffsets) and ClassicGroup.validateOffsetCommit / validateOffsetDelete; for KIP-848
consumer groups ConsumerGroup.validateOffsetCommit / validateOffsetFetch (consumer/
commit_validation.py: KIP-1251 lets an older epoch commit the partitions the member held since,
one refused partition refuses the whole commit). A v10 commit's topic ids are persisted with the
offsets and a v10 fetch answers -1 for an offset stored under another id (KAFKA-19154). Operations never
touch the offset store themselves: each change is a record (one OffsetCommitRecord or
OffsetTombstone per partition, all in one op, so one batch) applied through replay, live exactly
as at load; the runtime answers only once they are durable. Expiry lives in
retention.py. Topic existence is the handler's business (Kafka checks it in KafkaApis).
"""

from __future__ import annotations

import uuid

from coordinator.groups.consumer.commit_validation import (
    AssignmentEpochCheck,
    validate_offset_commit,
    validate_offset_fetch,
)
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.group import ClassicGroup
from coordinator.groups.offset_requests import (
    DEFAULT_RETENTION_TIME,
    FetchedGroup,
    FetchedPartition,
    OffsetCommitParams,
    OffsetCommitResult,
    OffsetDeleteParams,
    OffsetDeleteResult,
    OffsetFetchParams,
)
from coordinator.groups.rebalance import reschedule_member_heartbeat
from coordinator.groups.record_types import offset_commit_record
from coordinator.groups.records import OffsetCommitRecord, OffsetTombstone
from coordinator.groups.shard import GroupContext
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode

# -- OffsetCommit ----------------------------------------------------------------------------


def commit_offsets(ctx: GroupContext, p: OffsetCommitParams) -> OffsetCommitResult:
    group, check, error = _validate_commit(ctx, p)
    if error is None and check is not None:
        error = _refused_partition(ctx, check, p)
    if error is not None:
        return commit_error(p, error)
    if group is not None and group.is_in(GroupState.STABLE, GroupState.PREPARING_REBALANCE):
        # A classic member's commit also keeps its session alive (commitOffset).
        reschedule_member_heartbeat(ctx, group, group.members[p.member_id])
    now = ctx.now_ms
    # v2-4 may ask for their own retention: stored as an expire timestamp (OffsetCommitValue v1).
    expire = None if p.retention_time_ms == DEFAULT_RETENTION_TIME else now + p.retention_time_ms
    max_bytes = ctx.shard.config.offset_metadata_max_bytes
    topics = []
    group_id = p.group_id
    records: list[OffsetCommitRecord] = []
    record = records.append
    none = ErrorCode.NONE
    topic_ids = p.topic_ids
    for topic, partitions in p.topics:
        answers: list[tuple[int, ErrorCode]] = []
        answer = answers.append
        topic_id = topic_ids.get(topic)
        for part in partitions:
            index, metadata = part.partition_index, part.committed_metadata
            # a Java length is at most twice the str's: most metadata needs no exact count
            if metadata and len(metadata) * 2 > max_bytes and _java_length(metadata) > max_bytes:
                explain(
                    ErrorCode.OFFSET_METADATA_TOO_LARGE,
                    f"metadata of {topic}-{index} is "
                    f"{_java_length(metadata)} chars, offset.metadata.max.bytes is {max_bytes}",
                )
                answer((index, ErrorCode.OFFSET_METADATA_TOO_LARGE))
                continue
            record(
                offset_commit_record(
                    group_id,
                    topic,
                    index,
                    part.committed_offset,
                    part.committed_leader_epoch,
                    metadata or "",
                    now,
                    expire,
                    topic_id,
                )
            )
            answer((index, none))
        topics.append((topic, answers))
    # Nothing above reads the offsets: applying the records together equals applying each in turn.
    ctx.apply_all(records)
    return OffsetCommitResult(ErrorCode.NONE, topics)


def _refused_partition(ctx: GroupContext, check: AssignmentEpochCheck, p: OffsetCommitParams) -> ErrorCode | None:
    """KIP-1251's per-partition check (skipping partitions whose metadata is too large to commit,
    as Kafka's commit loop does): the first refusal, explained, refuses the whole request."""
    max_bytes = ctx.shard.config.offset_metadata_max_bytes
    for topic, partitions in p.topics:
        topic_id = p.topic_ids.get(topic)
        if topic_id is None:  # below v10 Kafka 4.3's KafkaApis resolves the id by name
            meta = ctx.shard.topics.by_name(topic)
            topic_id = None if meta is None else meta.topic_id
        for part in partitions:
            metadata = part.committed_metadata
            if metadata and len(metadata) * 2 > max_bytes and _java_length(metadata) > max_bytes:
                continue
            refusal = check.refusal(topic_id, topic, part.partition_index)
            if refusal is not None:
                explain(refusal.code, refusal.message)
                return refusal.code
    return None


def _validate_commit(
    ctx: GroupContext, p: OffsetCommitParams
) -> tuple[ClassicGroup | None, AssignmentEpochCheck | None, ErrorCode | None]:
    """OffsetMetadataManager.validateOffsetCommit + ClassicGroup.validateOffsetCommit. No
    error and no group: a commit outside group management (admin client, assign()), which
    Kafka accepts; replaying its first record creates the empty "simple" group. A consumer
    group may answer a per-partition check (KIP-1251) instead of accepting the whole commit."""
    found = ctx.shard.groups.get(p.group_id)  # (one lookup: shard.share_group, consumer_group, group)
    if isinstance(found, ShareGroup):  # ShareGroup.validateOffsetCommit
        explain(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {p.group_id} is not a consumer group.")
        return None, None, ErrorCode.GROUP_ID_NOT_FOUND
    if isinstance(found, ConsumerGroup):
        consumer = found
        try:
            check = validate_offset_commit(
                consumer, p.member_id, p.group_instance_id, p.generation_id, api_version=p.request_version
            )
        except ConsumerGroupError as exc:
            explain(exc.code, exc.message)
            return None, None, exc.code
        return None, check, None
    group, error = _validate_classic_commit(found if isinstance(found, ClassicGroup) else None, p)
    return group, None, error


def _validate_classic_commit(
    group: ClassicGroup | None, p: OffsetCommitParams
) -> tuple[ClassicGroup | None, ErrorCode | None]:
    if group is None:
        if p.generation_id < 0:
            return None, None
        # v9 answers GROUP_ID_NOT_FOUND; older versions keep ILLEGAL_GENERATION.
        explain(
            ErrorCode.GROUP_ID_NOT_FOUND if p.request_version >= 9 else ErrorCode.ILLEGAL_GENERATION,
            f"group {p.group_id!r} does not exist, yet the commit names generation {p.generation_id}",
        )
        return None, ErrorCode.GROUP_ID_NOT_FOUND if p.request_version >= 9 else ErrorCode.ILLEGAL_GENERATION
    if group.is_in(GroupState.DEAD):
        explain(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {p.group_id!r} is Dead (being deleted)")
        return None, ErrorCode.COORDINATOR_NOT_AVAILABLE
    if p.generation_id < 0 and group.is_in(GroupState.EMPTY):
        return group, None
    if p.generation_id >= 0 or p.member_id or p.group_instance_id is not None:
        error = group.validate_existing_member(p.member_id, p.group_instance_id)
        if error is not None:
            return None, ErrorCode(error)
        if p.generation_id != group.generation_id:
            explain(
                ErrorCode.ILLEGAL_GENERATION,
                f"request generation {p.generation_id}, group generation {group.generation_id}",
            )
            return None, ErrorCode.ILLEGAL_GENERATION
    elif not group.is_in(GroupState.EMPTY):
        # No member id and no generation: only an empty group takes such commits.
        explain(
            ErrorCode.UNKNOWN_MEMBER_ID,
            f"a commit without member id and generation, but group "
            f"{p.group_id!r} is {group.state} (only an Empty group takes one)",
        )
        return None, ErrorCode.UNKNOWN_MEMBER_ID
    if group.is_in(GroupState.COMPLETING_REBALANCE):
        # The member has its generation but not its assignment yet: let it finish the sync.
        explain(
            ErrorCode.REBALANCE_IN_PROGRESS,
            f"group {p.group_id!r} is CompletingRebalance: finish SyncGroup before committing",
        )
        return None, ErrorCode.REBALANCE_IN_PROGRESS
    return group, None


def commit_error(p: OffsetCommitParams, error: ErrorCode) -> OffsetCommitResult:
    """OffsetCommitRequest.getErrorResponse: every partition carries the error."""
    return OffsetCommitResult(error, [(t, [(part.partition_index, error) for part in parts]) for t, parts in p.topics])


def _java_length(text: str) -> int:
    """Java String.length(): UTF-16 code units (what Kafka compares with the limit)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


# -- OffsetFetch -----------------------------------------------------------------------------


def fetch_offsets(ctx: GroupContext, p: OffsetFetchParams) -> list[FetchedGroup]:
    """fetchOffsets / fetchAllOffsets per group. An unknown (or Dead) group is not an error:
    Kafka catches GroupIdNotFoundException and answers -1 for each partition (no partitions
    when all were asked). With require_stable, a partition an open transaction holds an offset
    of answers UNSTABLE_OFFSET_COMMIT (KIP-447: hasPendingTransactionalOffsets)."""
    answers = []
    store = ctx.shard.offsets
    for request in p.groups:
        consumer = ctx.shard.consumer_group(request.group_id)
        if consumer is not None:
            try:
                validate_offset_fetch(consumer, request.member_id, request.member_epoch)
            except ConsumerGroupError as exc:
                explain(exc.code, exc.message)
                answers.append(FetchedGroup(request.group_id, exc.code))
                continue
        group = ctx.shard.group(request.group_id)
        known = consumer is not None or (group is not None and not group.is_in(GroupState.DEAD))
        offsets = store.groups.get(request.group_id, {}) if known else {}
        unstable = _unstable(ctx, request.group_id) if p.require_stable else None
        if request.topics is None:
            by_topic: dict[str, list[FetchedPartition]] = {}
            for (topic, partition), rec in sorted(offsets.items()):
                by_topic.setdefault(topic, []).append(_fetched(partition, rec, unstable))
            answers.append(FetchedGroup(request.group_id, ErrorCode.NONE, list(by_topic.items())))
            continue
        topics = [
            (
                topic,
                [
                    _fetched(partition, offsets.get((topic, partition)), unstable, topic, request.topic_ids.get(topic))
                    for partition in partitions
                ],
            )
            for topic, partitions in request.topics
        ]
        answers.append(FetchedGroup(request.group_id, ErrorCode.NONE, topics))
    return answers


def _unstable(ctx: GroupContext, group_id: str) -> set[tuple[str, int]] | None:
    pending = ctx.shard.txn_offsets.pending_partitions(group_id)
    return pending or None


def _fetched(
    partition: int,
    rec: OffsetCommitRecord | None,
    unstable: set[tuple[str, int]] | None = None,
    topic: str | None = None,
    asked_id: uuid.UUID | None = None,
) -> FetchedPartition:
    if unstable is not None and rec is not None:
        topic = rec.topic
    if unstable is not None and (topic, partition) in unstable:
        explain(ErrorCode.UNSTABLE_OFFSET_COMMIT, f"an open transaction holds an offset of {topic}-{partition}")
        return FetchedPartition(partition, error=ErrorCode.UNSTABLE_OFFSET_COMMIT)
    if rec is None or (asked_id is not None and rec.topic_id is not None and rec.topic_id != asked_id):
        # Nothing committed, or committed under another id (a recreated topic): Kafka's
        # isOffsetInvalid / isMismatchedTopicId (KAFKA-19154).
        return FetchedPartition(partition)  # offset -1, leader epoch -1, metadata "", NONE
    return FetchedPartition(partition, rec.offset, rec.leader_epoch, rec.metadata)


# -- OffsetDelete ----------------------------------------------------------------------------


def delete_offsets(ctx: GroupContext, p: OffsetDeleteParams) -> OffsetDeleteResult:
    group: ClassicGroup | ConsumerGroup | None = ctx.shard.consumer_group(p.group_id) or ctx.shard.group(p.group_id)
    if isinstance(group, ConsumerGroup):
        return _delete_offsets(ctx, group, p)  # ConsumerGroup.validateOffsetDelete allows it always
    if group is None or group.is_in(GroupState.DEAD):
        explain(ErrorCode.GROUP_ID_NOT_FOUND, f"group {p.group_id!r} does not exist")
        return OffsetDeleteResult(ErrorCode.GROUP_ID_NOT_FOUND)
    # ClassicGroup.validateOffsetDelete: a group with members may delete offsets only if it is
    # a consumer group (then per topic: not while subscribed to it).
    if not group.is_in(GroupState.EMPTY) and not group.uses_consumer_protocol:
        explain(ErrorCode.NON_EMPTY_GROUP, f"group {p.group_id!r} is {group.state} and not a consumer group")
        return OffsetDeleteResult(ErrorCode.NON_EMPTY_GROUP)
    return _delete_offsets(ctx, group, p)


def _delete_offsets(
    ctx: GroupContext, group: ClassicGroup | ConsumerGroup, p: OffsetDeleteParams
) -> OffsetDeleteResult:
    store = ctx.shard.offsets
    topics = []
    for topic, partitions in p.topics:
        if group.is_subscribed_to_topic(topic):
            explain(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, f"members of group {p.group_id!r} are subscribed to {topic!r}")
            topics.append((topic, [(n, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC) for n in partitions]))
            continue
        for n in partitions:
            if store.get(p.group_id, topic, n) is not None:
                ctx.apply(OffsetTombstone(p.group_id, topic, n))
        topics.append((topic, [(n, ErrorCode.NONE) for n in partitions]))
    return OffsetDeleteResult(ErrorCode.NONE, topics)


def delete_all_offsets(ctx: GroupContext, group_id: str) -> int:
    """OffsetMetadataManager.deleteAllOffsets (DeleteGroups): a tombstone per committed offset."""
    committed = list(ctx.shard.offsets.group_offsets(group_id))
    # ...and one per partition only an open transaction holds (its pending offset goes too).
    committed += sorted(ctx.shard.txn_offsets.pending_partitions(group_id) - set(committed))
    for topic, partition in committed:
        ctx.apply(OffsetTombstone(group_id, topic, partition))
    return len(committed)
