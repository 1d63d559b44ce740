"""The share coordinator's operations on one shard (Kafka ShareCoordinatorShard.initializeState,
readStateAndMaybeUpdateLeaderEpoch, writeState, readStateSummary, deleteState,
snapshotColdPartitions, maybeCleanupShareState), each `op(ctx, params) -> answer`.

Checks run in Kafka's order (maybeGet*Error) and cost nothing when they fail: a negative
partition is INVALID_REQUEST; a write or read of a key never initialized is INVALID_REQUEST; a
leader epoch below the recorded one is FENCED_LEADER_EPOCH (a write's -1: not given); a state
epoch below the recorded one is FENCED_STATE_EPOCH (-1: not given); a topic id the metadata image
lacks, or a partition past its count, is UNKNOWN_TOPIC_OR_PARTITION. A write (and a read by a new
leader epoch) writes a ShareUpdate, or a ShareSnapshot once the key has had
share.coordinator.snapshot.update.records.per.snapshot updates (generateShareStateRecord).
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.observe.reasons import explain
from coordinator.share.persister import (
    DEFAULT_STATE_EPOCH,
    UNINITIALIZED_DELIVERY_COMPLETE_COUNT,
    UNINITIALIZED_START_OFFSET,
    SharePartitionKey,
    ShareState,
    StateBatch,
    StateSummary,
)
from coordinator.share.state.combiner import combine_state_batches
from coordinator.share.state.records import ShareSnapshot, ShareTombstone, ShareUpdate
from coordinator.share.state.shard import UNINITIALIZED_EPOCH, ShareContext, ShareStateShard
from protocol.errors import ErrorCode

DEFAULT_LEADER_EPOCH = 0  # PartitionFactory.DEFAULT_LEADER_EPOCH (a summary of a key with no state)
NEGATIVE_PARTITION_ID = "The partition id cannot be a negative number."
WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."
_INT16, _INT32, _INT64 = (1 << 15) - 1, (1 << 31) - 1, (1 << 63) - 1


@dataclass(frozen=True)
class InitializeParams:
    key: SharePartitionKey
    state_epoch: int
    start_offset: int


@dataclass(frozen=True)
class WriteParams:
    key: SharePartitionKey
    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int
    batches: tuple[StateBatch, ...]


@dataclass(frozen=True)
class ReadParams:
    key: SharePartitionKey
    leader_epoch: int


def _refuse(code: ErrorCode, text: str) -> ErrorCode:
    explain(code, text)
    return code


def _partition_error(key: SharePartitionKey) -> ErrorCode | None:
    if key.partition < 0:
        return _refuse(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID)
    try:
        fits = key.partition <= _INT32 and len(key.group_id.encode("utf-8")) <= _INT16
    except UnicodeEncodeError:
        fits = False
    if not fits:
        return _refuse(
            ErrorCode.INVALID_REQUEST, "the key does not fit Kafka's types (int32 partition, string group id)"
        )
    return None


def _fits(p: WriteParams) -> bool:
    """Every field within its wire type (the RPC's types guard this in Kafka; an in-process caller
    could pass anything, and a record that cannot be encoded must never reach the shard)."""
    epochs_ok = all(-_INT32 - 1 <= e <= _INT32 for e in (p.state_epoch, p.leader_epoch, p.delivery_complete_count))
    return (
        epochs_ok
        and -_INT64 - 1 <= p.start_offset <= _INT64
        and all(
            -_INT64 - 1 <= b.first_offset <= _INT64
            and -_INT64 - 1 <= b.last_offset <= _INT64
            and -128 <= b.delivery_state <= 127
            and -_INT16 - 1 <= b.delivery_count <= _INT16
            for b in p.batches
        )
    )


def _topic_error(shard: ShareStateShard, key: SharePartitionKey) -> ErrorCode | None:
    count = shard.partition_count(key.topic_id)
    if count is None or count <= key.partition:
        return _refuse(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"no partition {key.partition} of topic id {key.topic_id} in the metadata",
        )
    return None


def _fenced_state_epoch(shard: ShareStateShard, key: SharePartitionKey, state_epoch: int) -> ErrorCode | None:
    stored = shard.state_epochs.get(key)
    if state_epoch != -1 and stored is not None and stored > state_epoch:
        return _refuse(ErrorCode.FENCED_STATE_EPOCH, f"state epoch {state_epoch} is older than the recorded {stored}")
    return None


def _fenced_leader_epoch(shard: ShareStateShard, key: SharePartitionKey, leader_epoch: int) -> ErrorCode | None:
    stored = shard.leader_epochs.get(key)
    if stored is not None and stored > leader_epoch:
        return _refuse(
            ErrorCode.FENCED_LEADER_EPOCH, f"leader epoch {leader_epoch} is older than the recorded {stored}"
        )
    return None


# -- initialize / write / read ------------------------------------------------------------------


def initialize(ctx: ShareContext, p: InitializeParams) -> ErrorCode:
    """initializeState: a fresh ShareSnapshot (no batches, leader epoch 0) at the next snapshot
    epoch; its delivery complete count is -1 for an uninitialized start offset, else 0."""
    shard, key = ctx.shard, p.key
    error = _partition_error(key)
    if error is None and not _fits(WriteParams(key, p.state_epoch, 0, p.start_offset, 0, ())):
        error = _refuse(ErrorCode.INVALID_REQUEST, "a field is out of the range of its Kafka type")
    error = error or _fenced_state_epoch(shard, key, p.state_epoch) or _topic_error(shard, key)
    if error is not None:
        return error
    current = shard.states.get(key)
    ctx.apply(
        ShareSnapshot(
            key,
            0 if current is None else current.snapshot_epoch + 1,
            p.state_epoch,
            UNINITIALIZED_EPOCH,
            p.start_offset,
            ctx.now_ms,
            ctx.now_ms,
            UNINITIALIZED_DELIVERY_COMPLETE_COUNT if p.start_offset == UNINITIALIZED_START_OFFSET else 0,
            (),
        )
    )
    return ErrorCode.NONE


def write(ctx: ShareContext, p: WriteParams) -> ErrorCode:
    """writeState (a write never changes the leader epoch: only a read by a new leader does)."""
    shard, key = ctx.shard, p.key
    error = _partition_error(key)
    if error is None and not _fits(p):
        error = _refuse(ErrorCode.INVALID_REQUEST, "a field is out of the range of its Kafka type")
    if error is None and key not in shard.states:
        error = _refuse(ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED)
    if error is None and p.leader_epoch != -1:
        error = _fenced_leader_epoch(shard, key, p.leader_epoch)
    error = error or _fenced_state_epoch(shard, key, p.state_epoch) or _topic_error(shard, key)
    if error is not None:
        return error
    ctx.apply(_state_record(ctx, p, update_leader_epoch=False))
    return ErrorCode.NONE


def read(ctx: ShareContext, p: ReadParams) -> tuple[ErrorCode, ShareState | None]:
    """readStateAndMaybeUpdateLeaderEpoch: the combined state; a new leader epoch is recorded by a
    state record carrying the current start offset and no batches."""
    shard, key = ctx.shard, p.key
    error = _partition_error(key)
    if error is None and not _fits(WriteParams(key, 0, p.leader_epoch, 0, 0, ())):
        error = _refuse(ErrorCode.INVALID_REQUEST, "a field is out of the range of its Kafka type")
    if error is None and key not in shard.states:
        error = _refuse(ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED)
    error = error or _fenced_leader_epoch(shard, key, p.leader_epoch) or _topic_error(shard, key)
    if error is not None:
        return error, None
    current = shard.states[key]
    answer = ShareState(
        current.state_epoch,
        current.start_offset,
        current.leader_epoch,
        current.delivery_complete_count,
        current.batches,
    )
    if p.leader_epoch != -1 and shard.leader_epochs.get(key) != p.leader_epoch:
        epoch_write = WriteParams(
            key, current.state_epoch, p.leader_epoch, current.start_offset, current.delivery_complete_count, ()
        )
        ctx.apply(_state_record(ctx, epoch_write, update_leader_epoch=True))
    return ErrorCode.NONE, answer


def _state_record(ctx: ShareContext, p: WriteParams, *, update_leader_epoch: bool) -> ShareSnapshot | ShareUpdate:
    """generateShareStateRecord: a ShareSnapshot of the combined state once the key had enough
    updates, else a ShareUpdate of the written batches (combined among themselves)."""
    shard, key = ctx.shard, p.key
    current = shard.states[key]
    leader_epoch = current.leader_epoch
    if update_leader_epoch and p.leader_epoch != -1:
        leader_epoch = p.leader_epoch
    if shard.update_counts.get(key, 0) >= shard.settings.snapshot_update_records_per_snapshot:
        start = current.start_offset if p.start_offset == -1 else p.start_offset
        return ShareSnapshot(
            key,
            current.snapshot_epoch + 1,
            current.state_epoch,
            leader_epoch,
            start,
            ctx.now_ms,
            ctx.now_ms,
            p.delivery_complete_count,
            combine_state_batches(current.batches, p.batches, start),
        )
    return ShareUpdate(
        key,
        current.snapshot_epoch,
        leader_epoch,
        p.start_offset,
        p.delivery_complete_count,
        combine_state_batches((), p.batches, p.start_offset),
    )


# -- summary / delete ---------------------------------------------------------------------------


def read_summary(ctx: ShareContext, p: ReadParams) -> tuple[ErrorCode, StateSummary | None]:
    """readStateSummary: no epoch is checked or recorded; a key with no state answers an
    uninitialized summary, not an error."""
    shard, key = ctx.shard, p.key
    error = _partition_error(key) or _topic_error(shard, key)
    if error is not None:
        return error, None
    current = shard.states.get(key)
    if current is None:
        return ErrorCode.NONE, StateSummary(
            DEFAULT_STATE_EPOCH, UNINITIALIZED_START_OFFSET, DEFAULT_LEADER_EPOCH, UNINITIALIZED_DELIVERY_COMPLETE_COUNT
        )
    return ErrorCode.NONE, StateSummary(
        current.state_epoch, current.start_offset, current.leader_epoch, current.delivery_complete_count
    )


def delete(ctx: ShareContext, key: SharePartitionKey) -> ErrorCode:
    """deleteState: a ShareSnapshot tombstone; a key with no state writes nothing."""
    shard = ctx.shard
    error = _partition_error(key) or _topic_error(shard, key)
    if error is not None:
        return error
    if key in shard.states:
        ctx.apply(ShareTombstone(key))
    return ErrorCode.NONE


# -- periodic work (lifecycle.py's timers) -------------------------------------------------------


def snapshot_cold_partitions(ctx: ShareContext) -> int:
    """snapshotColdPartitions: a new snapshot of each state whose last one is older than
    share.coordinator.cold.partition.snapshot.interval.ms (so pruning can pass it), unless every
    state was already re-snapshotted this way (a quiet partition). Returns how many."""
    shard = ctx.shard
    states = list(shard.states.items())
    if all(s.create_timestamp != s.write_timestamp for _, s in states):
        return 0
    cold = [
        ShareSnapshot(
            key,
            s.snapshot_epoch + 1,
            s.state_epoch,
            s.leader_epoch,
            s.start_offset,
            s.create_timestamp,
            ctx.now_ms,
            s.delivery_complete_count,
            s.batches,
        )
        for key, s in states
        if ctx.now_ms - s.write_timestamp >= shard.settings.cold_partition_snapshot_interval_ms
    ]
    ctx.apply_all(cold)
    return len(cold)


def forget_deleted_topics(ctx: ShareContext) -> int:
    """maybeCleanupShareState: tombstones for the states of topics that no longer exist."""
    shard = ctx.shard
    gone = sorted({key for key in shard.states if shard.partition_count(key.topic_id) is None})
    ctx.apply_all([ShareTombstone(key) for key in gone])
    return len(gone)


__all__ = [
    "InitializeParams",
    "ReadParams",
    "WriteParams",
    "delete",
    "forget_deleted_topics",
    "initialize",
    "read",
    "read_summary",
    "snapshot_cold_partitions",
    "write",
]
