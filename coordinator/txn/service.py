"""The transaction coordinator as handlers see it: one typed method per request.

Kafka's TransactionCoordinator front door. Each method finds the transactional id's
__transaction_state partition (placement.partition_for), answers NOT_COORDINATOR when another
broker (or none) leads it, runs the operation on that partition's shard through the runtime, and
turns an unavailable partition into COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE.
Each broker of the cluster has its own TxnService bound to its node id. Reads (Describe, List,
and the verification of transactional produce and TxnOffsetCommit, which Kafka's brokers ask the
coordinator over the network) read the active shards directly; the KIP-890 part 2 additions of a
Produce v12+ or TxnOffsetCommit v5+ go through `add_partitions(..., here_only=False)`, as
AddPartitionsToTxnManager sends them to whichever broker coordinates the id. With
`kgc serve --processes` (`peers` set) a coordinator in another process is asked over the broker
link instead (`verify_for_leader`; cluster/peer_link.py), and `markers` writes the markers other
processes send here (handlers/k27_write_txn_markers.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import trio

from coordinator.observe.reasons import explain
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime, CoordinatorUnavailable
from coordinator.runtime.leadership import Leaders, not_coordinator
from coordinator.txn.end_txn import EndTxnParams, EndTxnResult, end_txn
from coordinator.txn.ops import (
    AddPartitionsParams,
    InitPidParams,
    InitPidResult,
    add_partitions,
    init_producer_id,
    verify_partitions,
)
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC, partition_for
from coordinator.txn.shard import TxnContext, TxnShard
from coordinator.txn.state import TransactionMetadata, TransactionState
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from coordinator.txn.markers import MarkerChannel

P = TypeVar("P")
R = TypeVar("R")

MARKER_WAIT_MS = 1_000  # how long an AddPartitions waits for the last transaction's markers


@dataclass(frozen=True)
class DescribedTxn:
    transactional_id: str
    error: ErrorCode
    meta: TransactionMetadata | None = None


@dataclass(frozen=True)
class ListedTxns:
    error: ErrorCode
    states: list[TransactionMetadata]
    unknown_state_filters: list[str]


class TxnPeers(Protocol):
    """The transaction coordinators of the other broker processes (cluster/peer_link.py)."""

    async def verify(self, leader: int, p: AddPartitionsParams, *, add: bool) -> dict[tuple[str, int], ErrorCode]: ...


class TxnService:
    def __init__(
        self,
        runtime: CoordinatorRuntime[TxnShard],
        leaders: Leaders,
        node_id: int,
        max_timeout_ms: int,
        *,
        markers: MarkerChannel | None = None,
        peers: TxnPeers | None = None,
    ) -> None:
        self.runtime = runtime
        self.leaders = leaders
        self.node_id = node_id
        self.max_timeout_ms = max_timeout_ms
        self.num_partitions = runtime.num_partitions
        self.markers = markers  # writes the markers of this process's partitions
        self.peers = peers  # --processes: the coordinators of the others

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions)

    def _not_here(self, partition: int) -> CoordinatorUnavailable | None:
        return not_coordinator(self.leaders, TRANSACTION_STATE_TOPIC, partition, self.node_id, "its transactional ids")

    async def _one(
        self,
        transactional_id: str,
        op: Callable[[TxnContext, P], R],
        params: P,
        error_result: Callable[[ErrorCode], R],
        *,
        here_only: bool = True,
    ) -> R:
        partition = self.partition_for(transactional_id)
        try:
            if here_only and (elsewhere := self._not_here(partition)) is not None:
                raise elsewhere
            return await self.runtime.run_op(partition, op, params)
        except CoordinatorUnavailable as exc:
            explain(exc.error_code, str(exc))
            return error_result(exc.error_code)

    # -- writes -----------------------------------------------------------------------------------
    async def init_producer_id(self, p: InitPidParams) -> InitPidResult:
        if p.transactional_id == "":
            explain(ErrorCode.INVALID_REQUEST, "the transactional id is empty")
            return InitPidResult(ErrorCode.INVALID_REQUEST)
        if not 0 < p.timeout_ms <= self.max_timeout_ms:
            explain(
                ErrorCode.INVALID_TRANSACTION_TIMEOUT,
                f"transaction timeout {p.timeout_ms} ms is not in "
                f"(0, transaction.max.timeout.ms = {self.max_timeout_ms}]",
            )
            return InitPidResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        return await self._one(p.transactional_id, init_producer_id, p, InitPidResult)

    async def add_partitions(self, p: AddPartitionsParams, *, here_only: bool = True) -> ErrorCode:
        """handleAddPartitionsToTransaction. The one difference from Kafka: meeting the last
        transaction's markers in flight, it waits for them (at most MARKER_WAIT_MS) and tries
        once more, instead of answering CONCURRENT_TRANSACTIONS at once: a producer's next
        transaction then starts as soon as its last one is complete, as with librdkafka's mock
        (librdkafka would wait 20 ms before retrying; Kafka's own producer likewise)."""
        if not p.transactional_id:
            return _invalid("the transactional id is empty")
        error = await self._one(p.transactional_id, add_partitions, p, lambda e: e, here_only=here_only)
        if error != ErrorCode.CONCURRENT_TRANSACTIONS:
            return error
        shard = self.runtime.shard(self.partition_for(p.transactional_id))
        job = None if shard is None else shard.in_flight.get(p.transactional_id)
        if job is None or job.settled.is_set():
            return error
        with trio.move_on_after(MARKER_WAIT_MS / 1000):
            await job.settled.wait()
        return await self._one(p.transactional_id, add_partitions, p, lambda e: e, here_only=here_only)

    async def end_txn(self, p: EndTxnParams) -> EndTxnResult:
        if not p.transactional_id:
            return EndTxnResult(_invalid("the transactional id is empty"))
        return await self._one(p.transactional_id, end_txn, p, EndTxnResult)

    async def verify_for_leader(self, p: AddPartitionsParams, *, add: bool) -> Mapping[tuple[str, int], int]:
        """A partition leader's question to the id's coordinator, wherever it is (Kafka's
        AddPartitionsToTxnManager): are the partitions in the transaction (add=False: verify_only)
        or, for a transaction.version 2 client, added to it? An error per partition."""
        if self.peers is not None and p.transactional_id:
            leader = self.leaders.leader(TRANSACTION_STATE_TOPIC, self.partition_for(p.transactional_id))
            if leader != self.node_id:  # another process coordinates it: over the broker link
                return await self.peers.verify(leader, p, add=add)
        if add:
            return dict.fromkeys(p.partitions, await self.add_partitions(p, here_only=False))
        return self.verify(p, here_only=False)

    # -- reads ------------------------------------------------------------------------------------
    def verify(self, p: AddPartitionsParams, *, here_only: bool = True) -> dict[tuple[str, int], ErrorCode]:
        """Are these partitions in the producer's transaction? (AddPartitionsToTxn verify_only; with
        here_only=False from any broker, as the produce path and TxnOffsetCommit ask it.)"""
        if not p.transactional_id:
            return {tp: _invalid("the transactional id is empty") for tp in p.partitions}
        partition = self.partition_for(p.transactional_id)
        unavailable = self._not_here(partition) if here_only else None
        unavailable = unavailable or self.runtime.unavailable(partition)
        shard = self.runtime.shard(partition)
        if unavailable is not None or shard is None:
            code = unavailable.error_code if unavailable else ErrorCode.COORDINATOR_NOT_AVAILABLE
            explain(code, str(unavailable or "no shard"))
            return {tp: code for tp in p.partitions}
        return verify_partitions(shard, p)

    def describe(self, transactional_id: str) -> DescribedTxn:
        """TransactionCoordinator.handleDescribeTransactions."""
        if not transactional_id:
            return DescribedTxn(transactional_id, _invalid("the transactional id is empty"))
        partition = self.partition_for(transactional_id)
        unavailable = self._not_here(partition) or self.runtime.unavailable(partition)
        shard = self.runtime.shard(partition)
        if unavailable is not None or shard is None:
            code = unavailable.error_code if unavailable else ErrorCode.COORDINATOR_NOT_AVAILABLE
            explain(code, str(unavailable))
            return DescribedTxn(transactional_id, code)
        meta = shard.get(transactional_id)
        if meta is None or meta.state is TransactionState.DEAD:
            explain(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, f"no transactional id {transactional_id!r}")
            return DescribedTxn(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        return DescribedTxn(transactional_id, ErrorCode.NONE, meta)

    def list_transactions(
        self,
        states: list[str],
        producer_ids: list[int],
        duration_ms: int = -1,
        pattern: str | None = None,
        now_ms: int = 0,
    ) -> ListedTxns:
        """TransactionStateManager.listTransactionStates over the partitions this broker leads."""
        wanted = {s for s in (TransactionState.from_name(n) for n in states) if s is not None}
        unknown = [n for n in states if TransactionState.from_name(n) is None]
        regex = re.compile(pattern) if pattern else None
        found: list[TransactionMetadata] = []
        for partition in range(self.num_partitions):
            if self._not_here(partition) is not None:
                continue
            unavailable = self.runtime.unavailable(partition)
            if unavailable is not None:
                return ListedTxns(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [], unknown)
            shard = self.runtime.shard(partition)
            for meta in shard.transactions.values() if shard is not None else ():
                if (
                    meta.state is TransactionState.DEAD
                    or (producer_ids and meta.producer_id not in producer_ids)
                    or (states and meta.state not in wanted)
                    or (duration_ms >= 0 and now_ms - meta.start_ms <= duration_ms)
                    or (regex is not None and not regex.fullmatch(meta.transactional_id))
                ):
                    continue
                found.append(meta)
        return ListedTxns(ErrorCode.NONE, found, unknown)


def _invalid(text: str) -> ErrorCode:
    explain(ErrorCode.INVALID_REQUEST, text)
    return ErrorCode.INVALID_REQUEST
