"""The transaction coordinator's operations on one TxnShard (Kafka's TransactionCoordinator:
handleInitProducerId, handleAddPartitionsToTransaction, handleVerifyPartitionsInTransaction,
endTransaction, and the marker completion of TransactionMarkerChannelManager).

Each op checks the request against the id's metadata with Kafka's rules and error codes, then
writes the whole new metadata as one TransactionRecord through `ctx.apply` (so memory changes
only through replay). A decided transaction (PrepareCommit/PrepareAbort durable) gets its markers
written by a deferred job (markers.py), which ends with `complete`: CompleteCommit/CompleteAbort.
Transactions v1 only (KIP-890 part 2 epoch bumps per transaction are not served: EndTxn <= v4).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from coordinator.observe.reasons import explain
from coordinator.txn.records import TransactionRecord, TransactionTombstone
from coordinator.txn.shard import TxnContext, TxnShard
from coordinator.txn.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionMetadata,
    TransactionState,
    check_transition,
    is_epoch_exhausted,
)
from protocol.errors import ErrorCode

S = TransactionState


@dataclass(frozen=True)
class InitPidParams:
    transactional_id: str
    timeout_ms: int
    producer_id: int = NO_PRODUCER_ID  # v3+: the caller's id and epoch (KIP-360), -1 if none
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True)
class InitPidResult:
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True)
class AddPartitionsParams:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class EndTxnParams:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    from_client: bool = True


@dataclass(frozen=True)
class MarkerJob:
    """A decided transaction whose markers must be written (TxnTransitMetadata + result)."""

    shard: TxnShard
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    partitions: tuple[tuple[str, int], ...]

    async def __call__(self, runtime: object) -> None:
        await self.shard.markers.send(runtime, self)


def _record(meta: TransactionMetadata, state: TransactionState, now_ms: int, **changes: object) -> TransactionRecord:
    check_transition(meta.transactional_id, meta.state, state)
    rec = TransactionRecord(
        meta.transactional_id,
        meta.producer_id,
        meta.producer_epoch,
        meta.timeout_ms,
        state,
        tuple(meta.sorted_partitions()),
        now_ms,
        meta.start_ms,
        meta.previous_producer_id,
        meta.next_producer_id,
        meta.last_producer_epoch,
    )
    return replace(rec, **changes)  # type: ignore[arg-type]


def _error(code: ErrorCode, text: str) -> ErrorCode:
    explain(code, text)
    return code


# -- InitProducerId -------------------------------------------------------------------------------


def init_producer_id(ctx: TxnContext, p: InitPidParams) -> InitPidResult:
    shard, now = ctx.shard, ctx.now_ms
    meta = shard.get(p.transactional_id)
    if meta is None:
        assert shard.producer_ids is not None
        meta = TransactionMetadata(
            p.transactional_id,
            shard.producer_ids.next_id(),
            NO_PRODUCER_EPOCH,
            p.timeout_ms,
            S.EMPTY,
            last_update_ms=now,
        )
    expected = p.producer_id >= 0
    if expected and not (
        meta.producer_epoch == NO_PRODUCER_EPOCH
        or p.producer_id == meta.producer_id
        or (p.producer_id == meta.previous_producer_id and is_epoch_exhausted(p.producer_epoch))
    ):
        return InitPidResult(
            _error(
                ErrorCode.PRODUCER_FENCED,
                f"producer id {p.producer_id} is not {p.transactional_id!r}'s ({meta.producer_id})",
            )
        )
    if meta.state.is_prepare:
        return InitPidResult(
            _error(
                ErrorCode.CONCURRENT_TRANSACTIONS,
                f"{p.transactional_id!r} is in {meta.state}: its markers are being written",
            )
        )
    if meta.state is S.ONGOING:
        # prepareFenceProducerEpoch + endTransaction(ABORT): the epoch the old producer holds is
        # fenced; the caller retries (CONCURRENT_TRANSACTIONS) and gets a newer one afterwards.
        _fence_and_abort(ctx, meta, f"InitProducerId for {p.transactional_id!r} while a transaction is open")
        return InitPidResult(
            _error(
                ErrorCode.CONCURRENT_TRANSACTIONS,
                f"{p.transactional_id!r} had an open transaction: it is being aborted, retry",
            )
        )
    if not meta.state.is_complete_or_empty:
        raise RuntimeError(f"{p.transactional_id!r} is {meta.state}: never reachable here")
    if is_epoch_exhausted(meta.producer_epoch) and (not expected or p.producer_epoch == meta.producer_epoch):
        # prepareProducerIdRotation: a fresh producer id at epoch 0.
        assert shard.producer_ids is not None
        rec = _record(
            meta,
            S.EMPTY,
            now,
            producer_id=shard.producer_ids.next_id(),
            producer_epoch=0,
            last_producer_epoch=meta.producer_epoch if expected else NO_PRODUCER_EPOCH,
            previous_producer_id=meta.producer_id,
            timeout_ms=p.timeout_ms,
            partitions=(),
            start_ms=-1,
        )
    else:
        bumped = meta.producer_epoch + 1
        if not expected:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif meta.producer_epoch == NO_PRODUCER_EPOCH or p.producer_epoch == meta.producer_epoch:
            epoch, last = bumped, meta.producer_epoch  # KIP-360: resume after an abortable error
        elif p.producer_epoch == meta.last_producer_epoch:
            epoch, last = meta.producer_epoch, meta.last_producer_epoch  # a retry of a bump that worked
        else:
            return InitPidResult(
                _error(
                    ErrorCode.PRODUCER_FENCED,
                    f"epoch {p.producer_epoch} is neither "
                    f"{meta.producer_epoch} nor the previous {meta.last_producer_epoch}",
                )
            )
        rec = _record(
            meta,
            S.EMPTY,
            now,
            producer_epoch=epoch,
            last_producer_epoch=last,
            timeout_ms=p.timeout_ms,
            partitions=(),
            start_ms=-1,
            previous_producer_id=meta.previous_producer_id,
        )
    ctx.apply(rec)
    return InitPidResult(ErrorCode.NONE, rec.producer_id, rec.producer_epoch)


# -- AddPartitionsToTxn / AddOffsetsToTxn -----------------------------------------------------------


def _check_producer(meta: TransactionMetadata | None, txn_id: str, producer_id: int, epoch: int) -> ErrorCode | None:
    if meta is None:
        return _error(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{txn_id!r} has no producer id: InitProducerId first")
    if meta.producer_id != producer_id:
        return _error(
            ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{txn_id!r} has producer id {meta.producer_id}, not {producer_id}"
        )
    if meta.producer_epoch != epoch:
        return _error(
            ErrorCode.PRODUCER_FENCED, f"{txn_id!r} is at epoch {meta.producer_epoch}, the request says {epoch}"
        )
    return None


def add_partitions(ctx: TxnContext, p: AddPartitionsParams) -> ErrorCode:
    meta = ctx.shard.get(p.transactional_id)
    error = _check_producer(meta, p.transactional_id, p.producer_id, p.producer_epoch)
    if error is not None:
        return error
    assert meta is not None
    if meta.state.is_prepare:
        return _error(
            ErrorCode.CONCURRENT_TRANSACTIONS,
            f"{p.transactional_id!r} is in {meta.state}: the last transaction's markers are being written",
        )
    added = set(p.partitions)
    if meta.state is S.ONGOING and added <= meta.partitions:
        return ErrorCode.NONE  # already in the transaction: nothing to write
    start = ctx.now_ms if meta.state.is_complete_or_empty else meta.start_ms
    ctx.apply(_record(meta, S.ONGOING, ctx.now_ms, partitions=tuple(sorted(meta.partitions | added)), start_ms=start))
    return ErrorCode.NONE


def verify_partitions(shard: TxnShard, p: AddPartitionsParams) -> dict[tuple[str, int], ErrorCode]:
    """handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4+ verify_only, and the produce
    path's KIP-890 check): read only."""
    meta = shard.get(p.transactional_id)
    error = _check_producer(meta, p.transactional_id, p.producer_id, p.producer_epoch)
    if error is None and meta is not None and meta.state.is_prepare:
        error = _error(ErrorCode.CONCURRENT_TRANSACTIONS, f"{p.transactional_id!r} is in {meta.state}")
    if error is not None:
        return {tp: error for tp in p.partitions}
    assert meta is not None
    return {tp: ErrorCode.NONE if tp in meta.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in p.partitions}


# -- EndTxn -----------------------------------------------------------------------------------------


def end_txn(ctx: TxnContext, p: EndTxnParams) -> ErrorCode:
    meta = ctx.shard.get(p.transactional_id)
    if meta is None:
        return _error(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{p.transactional_id!r} has no producer id")
    if meta.producer_id != p.producer_id:
        return _error(
            ErrorCode.INVALID_PRODUCER_ID_MAPPING,
            f"{p.transactional_id!r} has producer id {meta.producer_id}, not {p.producer_id}",
        )
    # Transactions v1: a client must name the current epoch exactly.
    if (p.from_client and p.producer_epoch != meta.producer_epoch) or p.producer_epoch < meta.producer_epoch:
        return _error(
            ErrorCode.PRODUCER_FENCED,
            f"{p.transactional_id!r} is at epoch {meta.producer_epoch}, the request says {p.producer_epoch}",
        )
    result = "COMMIT" if p.commit else "ABORT"
    state = meta.state
    if state is S.ONGOING:
        _decide(ctx, meta, p.commit, meta.producer_epoch)
        return ErrorCode.NONE
    if (state is S.COMPLETE_COMMIT and p.commit) or (state is S.COMPLETE_ABORT and not p.commit):
        return ErrorCode.NONE  # a retry of an EndTxn that already completed
    if (state is S.PREPARE_COMMIT and p.commit) or (state is S.PREPARE_ABORT and not p.commit):
        return _error(ErrorCode.CONCURRENT_TRANSACTIONS, f"{p.transactional_id!r} is in {state}: markers in flight")
    return _error(ErrorCode.INVALID_TXN_STATE, f"{p.transactional_id!r} is {state}, which cannot take {result}")


def _decide(ctx: TxnContext, meta: TransactionMetadata, commit: bool, epoch: int, **changes: object) -> None:
    """Write PrepareCommit/PrepareAbort; once durable, the markers go out (a deferred job)."""
    state = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
    rec = _record(meta, state, ctx.now_ms, producer_epoch=epoch, **changes)
    ctx.apply(rec)
    ctx.defer(
        MarkerJob(
            ctx.shard,
            rec.transactional_id,
            rec.producer_id,
            rec.producer_epoch,
            commit,
            ctx.shard.coordinator_epoch(),
            rec.partitions,
        )
    )


def _fence_and_abort(ctx: TxnContext, meta: TransactionMetadata, why: str) -> None:
    """prepareFenceProducerEpoch + endTransaction(ABORT, isFromClient=false): Ongoing ->
    PrepareEpochFence -> PrepareAbort at epoch + 1 (only PrepareAbort is written)."""
    check_transition(meta.transactional_id, meta.state, S.PREPARE_EPOCH_FENCE)
    explain(ErrorCode.PRODUCER_FENCED, f"{meta.transactional_id!r} epoch {meta.producer_epoch} fenced: {why}")
    _decide(
        ctx,
        replace(meta, state=S.PREPARE_EPOCH_FENCE),
        False,
        meta.producer_epoch + 1,
        last_producer_epoch=NO_PRODUCER_EPOCH,
    )


@dataclass(frozen=True)
class CompleteParams:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool


def complete(ctx: TxnContext, p: CompleteParams) -> bool:
    """Every marker is durable: CompleteCommit/CompleteAbort (prepareComplete). False if the id
    moved on meanwhile (another job completed it)."""
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
    ctx.apply(_record(meta, done, ctx.now_ms, partitions=()))
    return True


# -- timers -------------------------------------------------------------------------------------------


def abort_timed_out(ctx: TxnContext) -> int:
    """TransactionCoordinator.abortTimedOutTransactions: an Ongoing transaction past its timeout
    is fenced and aborted. Returns how many."""
    count = 0
    for meta in list(ctx.shard.transactions.values()):
        if meta.state is S.ONGOING and meta.start_ms + meta.timeout_ms < ctx.now_ms and meta.producer_epoch < 32767:
            _fence_and_abort(
                ctx,
                meta,
                f"transaction.timeout.ms {meta.timeout_ms} passed ({ctx.now_ms - meta.start_ms} ms since it started)",
            )
            count += 1
    return count


def expire_transactional_ids(ctx: TxnContext) -> int:
    """TransactionStateManager.removeExpiredTransactionalIds: ids idle in Empty/Complete* for
    transactional.id.expiration.ms get a tombstone. Returns how many."""
    limit = ctx.now_ms - ctx.shard.settings.id_expiration_ms
    count = 0
    for meta in list(ctx.shard.transactions.values()):
        if meta.state.is_expiration_allowed and meta.last_update_ms <= limit:
            check_transition(meta.transactional_id, meta.state, S.DEAD)
            ctx.apply(TransactionTombstone(meta.transactional_id))
            count += 1
    return count
