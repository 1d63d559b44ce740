"""The transaction coordinator's operations on one TxnShard besides ending a transaction
(end_txn.py): Kafka's TransactionCoordinator handleInitProducerId,
handleAddPartitionsToTransaction, handleVerifyPartitionsInTransaction and its two scheduled tasks.

Each op checks the request against the id's metadata with Kafka's rules and error codes, then
writes the whole new metadata as one TransactionRecord through `ctx.apply` (so memory changes
only through replay). PrepareCommit/PrepareAbort play the part of Kafka's pending Complete
transition (the markers are in flight): InitProducerId and AddPartitions meeting them get
CONCURRENT_TRANSACTIONS before any other check, as Kafka's pendingTransitionInProgress does.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.txn.end_txn import fence_and_abort
from coordinator.txn.records import TransactionTombstone
from coordinator.txn.shard import TxnContext, TxnShard
from coordinator.txn.state import (
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
    # TransactionVersion.transactionVersionForAddPartitionsToTxn: 2 for AddPartitionsToTxn v4+
    # (a broker adding a partition for a Produce v12+ or a TxnOffsetCommit v5+), 0 below it and
    # for AddOffsetsToTxn.
    client_version: int = 0


def _busy(meta: TransactionMetadata) -> ErrorCode:
    return refuse(
        ErrorCode.CONCURRENT_TRANSACTIONS,
        f"{meta.transactional_id!r} is in {meta.state}: the last transaction's markers are being written",
    )


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
    if meta.state.is_prepare:
        return InitPidResult(_busy(meta))
    expected = p.producer_id >= 0
    if expected and not (
        meta.producer_epoch == NO_PRODUCER_EPOCH
        or p.producer_id == meta.producer_id
        or (p.producer_id == meta.previous_producer_id and is_epoch_exhausted(p.producer_epoch))
    ):
        return InitPidResult(
            refuse(
                ErrorCode.PRODUCER_FENCED,
                f"producer id {p.producer_id} is not {p.transactional_id!r}'s ({meta.producer_id})",
            )
        )
    if meta.state is S.ONGOING:
        # prepareFenceProducerEpoch + endTransaction(ABORT): the epoch the old producer holds is
        # fenced; the caller retries (CONCURRENT_TRANSACTIONS) and gets a newer one afterwards.
        fence_and_abort(ctx, meta, f"InitProducerId for {p.transactional_id!r} while a transaction is open")
        return InitPidResult(
            refuse(
                ErrorCode.CONCURRENT_TRANSACTIONS,
                f"{p.transactional_id!r} had an open transaction: it is being aborted, retry",
            )
        )
    if not meta.state.is_complete_or_empty:
        raise RuntimeError(f"{p.transactional_id!r} is {meta.state}: never reachable here")
    if is_epoch_exhausted(meta.producer_epoch) and (not expected or p.producer_epoch == meta.producer_epoch):
        # prepareProducerIdRotation: a fresh producer id at epoch 0.
        assert shard.producer_ids is not None
        rec = prepare(
            meta,
            S.EMPTY,
            now,
            producer_id=shard.producer_ids.next_id(),
            producer_epoch=0,
            last_producer_epoch=meta.producer_epoch if expected else NO_PRODUCER_EPOCH,
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
                refuse(
                    ErrorCode.PRODUCER_FENCED,
                    f"epoch {p.producer_epoch} is neither "
                    f"{meta.producer_epoch} nor the previous {meta.last_producer_epoch}",
                )
            )
        rec = prepare(
            meta,
            S.EMPTY,
            now,
            producer_epoch=epoch,
            last_producer_epoch=last,
            timeout_ms=p.timeout_ms,
            partitions=(),
            start_ms=-1,
        )
    ctx.apply(rec)
    return InitPidResult(ErrorCode.NONE, rec.producer_id, rec.producer_epoch)


# -- AddPartitionsToTxn / AddOffsetsToTxn / Produce v12+ / TxnOffsetCommit v5+ ---------------------


def _check_producer(meta: TransactionMetadata | None, txn_id: str, producer_id: int, epoch: int) -> ErrorCode | None:
    if meta is None:
        return refuse(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{txn_id!r} has no producer id: InitProducerId first")
    if meta.producer_id != producer_id:
        return refuse(
            ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{txn_id!r} has producer id {meta.producer_id}, not {producer_id}"
        )
    if meta.producer_epoch != epoch:
        return refuse(
            ErrorCode.PRODUCER_FENCED, f"{txn_id!r} is at epoch {meta.producer_epoch}, the request says {epoch}"
        )
    return None


def add_partitions(ctx: TxnContext, p: AddPartitionsParams) -> ErrorCode:
    """handleAddPartitionsToTransaction: the transaction (Ongoing) takes the partitions, in the
    client's transaction version (prepareAddPartitions)."""
    meta = ctx.shard.get(p.transactional_id)
    if meta is not None and meta.state.is_prepare:
        # First, as Kafka's pending-transition check: under KIP-890 a v2 producer may already
        # hold the next producer id of an epoch overflow that Complete has not written yet.
        return _busy(meta)
    error = _check_producer(meta, p.transactional_id, p.producer_id, p.producer_epoch)
    if error is not None:
        return error
    assert meta is not None
    added = set(p.partitions)
    if meta.state is S.ONGOING and added <= meta.partitions:
        return ErrorCode.NONE  # already in the transaction: nothing to write
    start = ctx.now_ms if meta.state.is_complete_or_empty else meta.start_ms
    ctx.apply(
        prepare(
            meta,
            S.ONGOING,
            ctx.now_ms,
            partitions=tuple(sorted(meta.partitions | added)),
            start_ms=start,
            client_version=p.client_version,
        )
    )
    return ErrorCode.NONE


def verify_partitions(shard: TxnShard, p: AddPartitionsParams) -> dict[tuple[str, int], ErrorCode]:
    """handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4+ verify_only, and the produce
    path's KIP-890 part 1 check): read only."""
    meta = shard.get(p.transactional_id)
    error = _check_producer(meta, p.transactional_id, p.producer_id, p.producer_epoch)
    if error is None and meta is not None and meta.state.is_prepare:
        error = refuse(ErrorCode.CONCURRENT_TRANSACTIONS, f"{p.transactional_id!r} is in {meta.state}")
    if error is not None:
        return {tp: error for tp in p.partitions}
    assert meta is not None
    return {tp: ErrorCode.NONE if tp in meta.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in p.partitions}


# -- timers -------------------------------------------------------------------------------------------


def abort_timed_out(ctx: TxnContext) -> int:
    """TransactionCoordinator.abortTimedOutTransactions: an Ongoing transaction past its timeout
    is fenced and aborted. Returns how many."""
    count = 0
    for meta in list(ctx.shard.transactions.values()):
        if meta.state is S.ONGOING and meta.start_ms + meta.timeout_ms < ctx.now_ms and meta.producer_epoch < 32767:
            fence_and_abort(
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
