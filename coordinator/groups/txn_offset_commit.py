"""TxnOffsetCommit and the transaction markers of __consumer_offsets (Kafka's
OffsetMetadataManager.commitTransactionalOffset / validateTransactionalOffsetCommit and
GroupCoordinatorService.completeTransaction).

A TxnOffsetCommit is validated as KIP-447 wants (an unknown group with generation -1 becomes a
simple group; otherwise the member, instance id and generation must match, as for OffsetCommit,
except that a classic group's state is not enforced and a request without member fields passes),
then written as OffsetCommit records in one transactional batch of the producer: they stay
pending (txn_offsets.py) until the transaction coordinator writes the COMMIT or ABORT marker
here through `OffsetsTxnMarkers`, whatever broker leads the partition (one copy of the log).
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.groups.consumer.commit_validation import AssignmentEpochCheck, validate_offset_commit
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.offset_requests import CommitPartition, OffsetCommitParams, OffsetCommitResult
from coordinator.groups.offsets import commit_error
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.records import OffsetCommitRecord
from coordinator.groups.shard import GroupContext, GroupShard
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime, CoordinatorUnavailable
from protocol.errors import ErrorCode


@dataclass(frozen=True)
class TxnOffsetCommitParams:
    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    topics: list[tuple[str, list[CommitPartition]]]
    generation_id: int = -1  # v3+ (KIP-447)
    member_id: str = ""
    group_instance_id: str | None = None
    request_version: int = 3


def commit_transactional_offsets(ctx: GroupContext, p: TxnOffsetCommitParams) -> OffsetCommitResult:
    error = _validate(ctx, p)
    if error is not None:
        return commit_error(_as_commit(p), error)
    ctx.transactional(p.producer_id, p.producer_epoch)
    max_bytes = ctx.shard.config.offset_metadata_max_bytes
    topics = []
    for topic, partitions in p.topics:
        answers = []
        for part in partitions:
            metadata = part.metadata or ""
            if len(metadata) > max_bytes:
                explain(
                    ErrorCode.OFFSET_METADATA_TOO_LARGE,
                    f"metadata of {topic}-{part.partition} is "
                    f"{len(metadata)} chars, offset.metadata.max.bytes is {max_bytes}",
                )
                answers.append((part.partition, ErrorCode.OFFSET_METADATA_TOO_LARGE))
                continue
            ctx.apply(
                OffsetCommitRecord(
                    p.group_id, topic, part.partition, part.offset, part.leader_epoch, metadata, ctx.now_ms, None
                )
            )
            answers.append((part.partition, ErrorCode.NONE))
        topics.append((topic, answers))
    return OffsetCommitResult(ErrorCode.NONE, topics)


def _validate(ctx: GroupContext, p: TxnOffsetCommitParams) -> ErrorCode | None:
    """validateTransactionalOffsetCommit + Group.validateOffsetCommit(isTransactional=true)."""
    shard = ctx.shard
    if shard.share_group(p.group_id) is not None:  # ShareGroup.validateOffsetCommit
        explain(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {p.group_id} is not a consumer group.")
        return ErrorCode.GROUP_ID_NOT_FOUND
    consumer = shard.consumer_group(p.group_id)
    if consumer is not None:
        try:
            check = validate_offset_commit(
                consumer,
                p.member_id,
                p.group_instance_id,
                p.generation_id,
                is_transactional=True,
                api_version=p.request_version,
            )
            refusal = None if check is None else _refusal(ctx, check, p)
            if refusal is not None:
                raise refusal
        except ConsumerGroupError as exc:
            # StaleMemberEpochException becomes ILLEGAL_GENERATION for TxnOffsetCommit.
            code = ErrorCode.ILLEGAL_GENERATION if exc.code == ErrorCode.STALE_MEMBER_EPOCH else exc.code
            explain(code, exc.message)
            return code
        return None
    group = shard.group(p.group_id)
    if group is None:
        if p.generation_id < 0:
            return None  # a simple group: replaying the first record creates it
        explain(
            ErrorCode.ILLEGAL_GENERATION,
            f"group {p.group_id!r} does not exist, yet the commit names generation {p.generation_id}",
        )
        return ErrorCode.ILLEGAL_GENERATION
    if group.is_in(GroupState.DEAD):
        explain(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {p.group_id!r} is Dead (being deleted)")
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if p.generation_id < 0 and group.is_in(GroupState.EMPTY):
        return None
    if p.generation_id >= 0 or p.member_id or p.group_instance_id is not None:
        error = group.validate_existing_member(p.member_id, p.group_instance_id)
        if error is not None:
            return ErrorCode(error)
        if p.generation_id != group.generation_id:
            explain(
                ErrorCode.ILLEGAL_GENERATION,
                f"request generation {p.generation_id}, group generation {group.generation_id}",
            )
            return ErrorCode.ILLEGAL_GENERATION
    return None


def _refusal(ctx: GroupContext, check: AssignmentEpochCheck, p: TxnOffsetCommitParams) -> ConsumerGroupError | None:
    """KIP-1251 per partition (Kafka 4.3 commitTransactionalOffset resolves each topic's id by
    name), skipping partitions whose metadata is too large to commit: the first refusal."""
    max_bytes = ctx.shard.config.offset_metadata_max_bytes
    for topic, partitions in p.topics:
        meta = ctx.shard.topics.by_name(topic)
        for part in partitions:
            if len(part.metadata or "") > max_bytes:
                continue
            refusal = check.refusal(None if meta is None else meta.topic_id, topic, part.partition)
            if refusal is not None:
                return refusal
    return None


def _as_commit(p: TxnOffsetCommitParams) -> OffsetCommitParams:
    return OffsetCommitParams(p.group_id, p.topics)


@dataclass(frozen=True)
class MarkerParams:
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int


def write_txn_marker(ctx: GroupContext, p: MarkerParams) -> ErrorCode:
    """CoordinatorRuntime.scheduleTransactionCompletion: the marker, replayed at once."""
    ctx.end_transaction(p.producer_id, p.producer_epoch, p.commit, p.coordinator_epoch)
    return ErrorCode.NONE


class OffsetsTxnMarkers:
    """What the transaction coordinator's marker channel calls for __consumer_offsets partitions."""

    topic = OFFSETS_TOPIC

    def __init__(self, runtime: CoordinatorRuntime[GroupShard]) -> None:
        self.runtime = runtime

    async def complete_transaction(
        self, partition: int, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int
    ) -> ErrorCode:
        try:
            return await self.runtime.run_op(
                partition, write_txn_marker, MarkerParams(producer_id, producer_epoch, commit, coordinator_epoch)
            )
        except CoordinatorUnavailable as exc:
            return exc.error_code
