"""Ending a transaction: EndTxn, the coordinator's own aborts, and completion (Kafka's
TransactionCoordinator.endTransaction / endTransactionWithTV1, prepareAbortOrCommit,
prepareFenceProducerEpoch, prepareComplete).

The client's transaction version decides the rules (TransactionVersion.transactionVersionForEndTxn:
EndTxn v5+ is 2, below is 0), never the broker's finalized level:
- v1 (EndTxn v0-v4): the request names the current epoch; the epoch stays; a retry of a
  completed EndTxn of the same outcome is NONE.
- v2 (KIP-890 part 2): every end bumps the epoch (a new producer id at epoch 0 once exhausted);
  a retry names the epoch before the bump; Empty and Complete* accept an abort of nothing.
A decision (PrepareCommit/PrepareAbort) is one record; EndTxn is answered once it is durable,
as Kafka answers, and a MarkerJob writes the markers (markers.py) and ends with `complete`
(CompleteCommit/CompleteAbort). The job is `settled` once Complete is written (or its first pass
left a marker unwritten): the service lets an AddPartitions that met the markers in flight wait
for that instead of answering CONCURRENT_TRANSACTIONS (service.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import trio

from coordinator.observe.reasons import explain
from coordinator.txn.shard import TxnContext, TxnShard
from coordinator.txn.state import (
    MAX_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionMetadata,
    TransactionState,
    check_transition,
    is_epoch_exhausted,
)
from coordinator.txn.transition import prepare, refuse
from protocol.errors import ErrorCode

S = TransactionState


@dataclass(frozen=True)
class EndTxnParams:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    client_version: int = 0  # 2 for EndTxn v5+ (KIP-890 part 2)


@dataclass(frozen=True)
class EndTxnResult:
    """The EndTxn answer; v5+ carries the producer id and epoch of the next transaction."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass
class MarkerJob:
    """A decided transaction whose markers must be written (TxnTransitMetadata + result)."""

    shard: TxnShard
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    partitions: tuple[tuple[str, int], ...]
    transaction_version: int = 0  # the markers' (WriteTxnMarkers v2 TransactionVersion)
    # Set once Complete is written, the first pass left a marker unwritten, or the shard moved.
    settled: trio.Event = field(default_factory=trio.Event)

    async def __call__(self, runtime: Any) -> None:
        await self.shard.markers.send(runtime, self)


def end_txn(ctx: TxnContext, p: EndTxnParams) -> EndTxnResult:
    meta = ctx.shard.get(p.transactional_id)
    if meta is None:
        return _fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{p.transactional_id!r} has no producer id")
    if p.client_version >= 2:
        return _end_v2(ctx, meta, p)
    return _end_v1(ctx, meta, p)


def _fail(code: ErrorCode, text: str) -> EndTxnResult:
    return EndTxnResult(refuse(code, text))


def _invalid_state(meta: TransactionMetadata, commit: bool) -> EndTxnResult:
    result = "COMMIT" if commit else "ABORT"
    return _fail(ErrorCode.INVALID_TXN_STATE, f"{meta.transactional_id!r} is {meta.state}, which cannot take {result}")


def _end_v1(ctx: TxnContext, meta: TransactionMetadata, p: EndTxnParams) -> EndTxnResult:
    """endTransactionWithTV1 (isFromClient: the epoch must be the current one exactly)."""
    if meta.producer_id != p.producer_id:
        return _fail(
            ErrorCode.INVALID_PRODUCER_ID_MAPPING,
            f"{p.transactional_id!r} has producer id {meta.producer_id}, not {p.producer_id}",
        )
    if p.producer_epoch != meta.producer_epoch:
        return _fail(
            ErrorCode.PRODUCER_FENCED,
            f"{p.transactional_id!r} is at epoch {meta.producer_epoch}, the request says {p.producer_epoch}",
        )
    state = meta.state
    if state is S.ONGOING:
        return decide(ctx, meta, p.commit, meta.producer_epoch, meta.last_producer_epoch, 0)
    if (state is S.COMPLETE_COMMIT and p.commit) or (state is S.COMPLETE_ABORT and not p.commit):
        return EndTxnResult(ErrorCode.NONE)  # a retry of an EndTxn that already completed
    if (state is S.PREPARE_COMMIT and p.commit) or (state is S.PREPARE_ABORT and not p.commit):
        return _fail(ErrorCode.CONCURRENT_TRANSACTIONS, f"{p.transactional_id!r} is in {state}: markers in flight")
    return _invalid_state(meta, p.commit)


def _end_v2(ctx: TxnContext, meta: TransactionMetadata, p: EndTxnParams) -> EndTxnResult:
    """endTransaction with TV2: a retry names the epoch before the bump (or, after an
    overflow, the old producer id at Short.MaxValue - 1)."""
    state = meta.state
    retry_on_overflow = (
        meta.previous_producer_id == p.producer_id and p.producer_epoch == MAX_EPOCH - 1 and meta.producer_epoch == 0
    )
    retry_on_bump = meta.producer_epoch == p.producer_epoch + 1
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        valid_epoch = retry_on_bump
    elif state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        valid_epoch = retry_on_bump or retry_on_overflow or p.producer_epoch == meta.producer_epoch
    else:  # Ongoing, Empty: this transaction's epoch
        valid_epoch = p.producer_epoch == meta.producer_epoch
    is_retry = retry_on_bump or retry_on_overflow
    if meta.producer_id != p.producer_id and not retry_on_overflow:
        return _fail(
            ErrorCode.INVALID_PRODUCER_ID_MAPPING,
            f"{p.transactional_id!r} has producer id {meta.producer_id}, not {p.producer_id}",
        )
    if not valid_epoch:
        return _fail(
            ErrorCode.PRODUCER_FENCED,
            f"{p.transactional_id!r} is {state} at epoch {meta.producer_epoch}; epoch {p.producer_epoch} is "
            "neither this transaction's nor the retry of the last end",
        )
    current = EndTxnResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
    if state is S.ONGOING:
        return _decide_v2(ctx, meta, p.commit, no_partition_added=False)
    if state is S.COMPLETE_COMMIT:
        if p.commit:
            return current if is_retry else _invalid_state(meta, p.commit)
        return _invalid_state(meta, p.commit) if is_retry else _decide_v2(ctx, meta, False, no_partition_added=True)
    if state is S.COMPLETE_ABORT:
        if p.commit:
            return _invalid_state(meta, p.commit)
        return current if is_retry else _decide_v2(ctx, meta, False, no_partition_added=True)
    if (state is S.PREPARE_COMMIT and p.commit) or (state is S.PREPARE_ABORT and not p.commit):
        return _fail(ErrorCode.CONCURRENT_TRANSACTIONS, f"{p.transactional_id!r} is in {state}: markers in flight")
    if state is S.EMPTY and not p.commit:
        return _decide_v2(ctx, meta, False, no_partition_added=True)  # KIP-890: abort what was never added
    return _invalid_state(meta, p.commit)


def _decide_v2(ctx: TxnContext, meta: TransactionMetadata, commit: bool, *, no_partition_added: bool) -> EndTxnResult:
    """prepareAbortOrCommit with TV2: the epoch is bumped; an exhausted epoch gets the next
    producer id, which Complete switches to at epoch 0."""
    next_id = NO_PRODUCER_ID
    if is_epoch_exhausted(meta.producer_epoch):
        assert ctx.shard.producer_ids is not None
        next_id = ctx.shard.producer_ids.next_id()
    epoch = meta.producer_epoch if meta.producer_epoch == MAX_EPOCH and not commit else meta.producer_epoch + 1
    start = ctx.now_ms if no_partition_added else meta.start_ms
    return decide(ctx, meta, commit, epoch, meta.producer_epoch, 2, start_ms=start, next_id=next_id)


def decide(
    ctx: TxnContext,
    meta: TransactionMetadata,
    commit: bool,
    epoch: int,
    last_epoch: int,
    client_version: int,
    *,
    start_ms: int | None = None,
    next_id: int = NO_PRODUCER_ID,
) -> EndTxnResult:
    """Write PrepareCommit/PrepareAbort; once durable, the markers go out (a deferred job).
    Returns EndTxn's answer (v5+: the identity of the next transaction, Complete's)."""
    state = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
    rec = prepare(
        meta,
        state,
        ctx.now_ms,
        producer_epoch=epoch,
        last_producer_epoch=last_epoch,
        client_version=client_version,
        next_producer_id=next_id,
        start_ms=meta.start_ms if start_ms is None else start_ms,
    )
    ctx.apply(rec)
    answer = EndTxnResult(ErrorCode.NONE)
    if client_version >= 2:
        answer = EndTxnResult(ErrorCode.NONE, rec.producer_id, rec.producer_epoch)
        if next_id != NO_PRODUCER_ID:
            answer = EndTxnResult(ErrorCode.NONE, next_id, 0)
    job = MarkerJob(
        ctx.shard,
        rec.transactional_id,
        rec.producer_id,
        rec.producer_epoch,
        commit,
        ctx.shard.coordinator_epoch(),
        rec.partitions,
        client_version,
    )
    # In flight from now on: if this record is never written, the partition fails and this
    # shard (with its bookkeeping) is dropped for the one reloaded from the log.
    ctx.shard.in_flight[rec.transactional_id] = job
    ctx.defer(job)
    return answer


def fence_and_abort(ctx: TxnContext, meta: TransactionMetadata, why: str) -> None:
    """prepareFenceProducerEpoch + endTransaction(ABORT, isFromClient=false), at the broker's
    transaction.version (TransactionStateManager.transactionVersionLevel): Ongoing ->
    PrepareEpochFence -> PrepareAbort (only PrepareAbort is written). The epoch goes up by one
    (never past Short.MaxValue): Kafka 4.2 bumps once under TV2 too
    (TransactionCoordinatorTest.testTV2AllowsEpochReBumpingAfterFailedWrite)."""
    check_transition(meta.transactional_id, meta.state, S.PREPARE_EPOCH_FENCE)
    explain(ErrorCode.PRODUCER_FENCED, f"{meta.transactional_id!r} epoch {meta.producer_epoch} fenced: {why}")
    epoch = min(meta.producer_epoch + 1, MAX_EPOCH)
    fenced = replace(meta, state=S.PREPARE_EPOCH_FENCE)
    if ctx.shard.settings.transaction_version >= 2:
        decide(ctx, fenced, False, epoch, meta.producer_epoch, ctx.shard.settings.transaction_version)
    else:
        decide(ctx, fenced, False, epoch, NO_PRODUCER_EPOCH, 0)


@dataclass(frozen=True)
class CompleteParams:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool


def complete(ctx: TxnContext, p: CompleteParams) -> bool:
    """Every marker is durable: CompleteCommit/CompleteAbort (prepareComplete; under TV2 an
    exhausted epoch moves to the next producer id at epoch 0). False if the id moved on
    meanwhile (another job completed it)."""
    meta = ctx.shard.get(p.transactional_id)
    want = S.PREPARE_COMMIT if p.commit else S.PREPARE_ABORT
    if (
        meta is None
        or meta.state is not want
        or meta.producer_id != p.producer_id
        or meta.producer_epoch != p.producer_epoch
    ):
        return False
    done = S.COMPLETE_COMMIT if p.commit else S.COMPLETE_ABORT
    pid, epoch = meta.producer_id, meta.producer_epoch
    if meta.supports_epoch_bump and meta.next_producer_id != NO_PRODUCER_ID:
        pid, epoch = meta.next_producer_id, 0
    rec = prepare(meta, done, ctx.now_ms, producer_id=pid, producer_epoch=epoch, partitions=())
    ctx.apply(replace(rec, next_producer_id=NO_PRODUCER_ID))
    return True
