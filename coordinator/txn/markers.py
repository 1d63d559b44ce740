"""Writing a decided transaction's markers (Kafka's TransactionMarkerChannelManager and
TransactionMarkerRequestCompletionHandler).

A job (end_txn.MarkerJob) starts once PrepareCommit/PrepareAbort is durable, or when a moved
coordinator loads a transaction still in one of them. It appends a COMMIT/ABORT control batch to
every partition of the transaction at once, then waits for all of them together (each log's
group commit shares one fsync among every marker and record appended meanwhile): user partitions
through the data path (Partition.append_marker, whichever broker leads: replicas are logical),
`__consumer_offsets` partitions through the group coordinator's runtime (their offsets
materialise or drop). Failed partitions are retried with backoff (a full disk that clears heals);
a deleted partition is dropped from the transaction, as Kafka drops one its metadata no longer
knows (TransactionMarkerChannelManager.addTxnMarkersToBrokerQueue).
With `kgc serve --processes` (`peers` set) a partition another process leads gets its marker
from that process: WriteTxnMarkers over the broker link (cluster/peer_link.py), answered by
`write_here` there (handlers/k27); Kafka's retriable answers (NOT_LEADER_OR_FOLLOWER,
UNKNOWN_TOPIC_OR_PARTITION, ...: a leader moved meanwhile) and a peer that did not answer are
retried, re-routed to the leader of the moment; UNSUPPORTED_VERSION drops the partition as Kafka
does. A process writes only the logs it leads (one writer per log).
When every marker is durable the job writes CompleteCommit/CompleteAbort without waiting for
it: no fsync starts for Complete alone, the id's next write makes it durable with its own (a
crash before then only makes the next load resend the markers). While a job runs it is the
shard's `in_flight` entry for its id, and is `settled` once Complete is written or its first
pass left a marker unwritten (then it is retried with backoff; requests meeting it get
CONCURRENT_TRANSACTIONS, as in Kafka). If the shard it came from is unloaded meanwhile, the
job stops: the next coordinator's load sends the markers again (a second marker for a completed
transaction changes nothing).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import trio

from coordinator.observe.reasons import because
from coordinator.runtime.coordinator_runtime import CoordinatorUnavailable
from coordinator.txn.end_txn import CompleteParams, MarkerJob, complete
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)


class MarkerPartition(Protocol):
    """A user-topic partition (broker/partition.py)."""

    def append_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, transaction_version: int = 0
    ) -> tuple[Any, int]: ...
    async def make_durable(self, result: Any, wait_for: int) -> None: ...


class DataPartitions(Protocol):
    """The data path (broker/data_path.py): a served partition, None if it does not exist."""

    def partition(self, topic_name: str, index: int) -> Any: ...


class OffsetsMarkers(Protocol):
    """The group coordinator's side (groups/txn_offset_commit.py OffsetsTxnMarkers)."""

    topic: str

    async def complete_transaction(
        self, partition: int, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int
    ) -> ErrorCode: ...


class Marker(Protocol):
    """What a marker says (end_txn.MarkerJob; a WriteTxnMarkers request's WritableTxnMarker)."""

    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    transaction_version: int


class MarkerPeers(Protocol):
    """The other broker processes (cluster/peer_link.py PeerLink)."""

    def leads_here(self, topic: str, index: int) -> bool: ...
    def exists(self, topic: str, index: int) -> bool: ...
    async def write_marker(self, topic: str, index: int, marker: Marker) -> ErrorCode: ...


# TransactionMarkerRequestCompletionHandler: the partition is done (dropped from the set waiting
# for markers) on these; the retriable ones (and any other) are retried.
_DONE = frozenset({ErrorCode.NONE, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.UNSUPPORTED_VERSION})


class MarkerChannel:
    def __init__(
        self,
        data: DataPartitions,
        offsets: OffsetsMarkers,
        *,
        retry_backoff_ms: int = 100,
        max_retry_backoff_ms: int = 5_000,
        peers: MarkerPeers | None = None,
    ) -> None:
        self.data = data
        self.offsets = offsets
        self.peers = peers  # --processes: who writes the markers of partitions led elsewhere
        self._backoff_ms = (retry_backoff_ms, max_retry_backoff_ms)

    async def send(self, runtime: Any, job: MarkerJob) -> None:
        in_flight = job.shard.in_flight
        in_flight[job.transactional_id] = job  # (a moved coordinator's load starts it too)
        try:
            if await self._write_all(runtime, job):
                self._complete(runtime, job)
        finally:
            job.settled.set()
            if in_flight.get(job.transactional_id) is job:
                del in_flight[job.transactional_id]

    async def _write_all(self, runtime: Any, job: MarkerJob) -> bool:
        """Every marker durable (True), or the shard moved on (False: its next load resends)."""
        result = "COMMIT" if job.commit else "ABORT"
        pending = list(job.partitions)
        delay_ms = self._backoff_ms[0]
        while pending:
            failed: set[tuple[str, int]] = set()
            if len(pending) == 1:
                await self._write(pending[0], job, failed)
            else:
                async with trio.open_nursery() as nursery:
                    for tp in pending:
                        nursery.start_soon(self._write, tp, job, failed)
            pending = sorted(failed)
            if runtime.shard(job.shard.partition) is not job.shard:
                return False  # the coordinator moved: its next load sends the markers again
            if pending:
                job.settled.set()  # whoever waits for it gets CONCURRENT_TRANSACTIONS, as in Kafka
                log.warning(
                    "%s markers of %r to %s failed; retrying in %d ms", result, job.transactional_id, pending, delay_ms
                )
                await trio.sleep(delay_ms / 1000)
                delay_ms = min(2 * delay_ms, self._backoff_ms[1])
        because(f"every {result} marker of {job.transactional_id!r} is durable")
        return True

    def _complete(self, runtime: Any, job: MarkerJob) -> None:
        """Complete* is written, not waited for: no fsync starts for it alone; the id's next
        write (AddPartitions, InitProducerId, ...) makes it durable with its own, and a crash
        before then only makes the next load resend the markers (end_txn.complete)."""
        try:
            runtime.run_op_unawaited(
                job.shard.partition,
                complete,
                CompleteParams(job.transactional_id, job.producer_id, job.producer_epoch, job.commit),
            )
        except CoordinatorUnavailable:
            pass  # failed or moved: the load after it resends the markers and completes

    async def _write(self, tp: tuple[str, int], job: MarkerJob, failed: set[tuple[str, int]]) -> None:
        topic, index = tp
        try:
            if self.peers is not None and not self.peers.leads_here(topic, index):
                error = await self.peers.write_marker(topic, index, job)
            else:
                error = await self.write_here(topic, index, job)
        except Exception:  # never let one partition end the job: retry it
            log.exception("writing a marker to %s-%s failed", topic, index)
            error = ErrorCode.UNKNOWN_SERVER_ERROR
        if error in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED):
            log.warning(
                "%s-%s refused %r's marker (epoch %d): %s; skipped",
                topic,
                index,
                job.transactional_id,
                job.producer_epoch,
                ErrorCode(error).name,
            )
        elif error not in _DONE:
            failed.add(tp)

    async def write_here(self, topic: str, index: int, marker: Marker) -> ErrorCode:
        """The marker into a partition of this process: `__consumer_offsets` through the group
        coordinator, a user partition through the data path."""
        if topic == self.offsets.topic:
            return await self.offsets.complete_transaction(
                index, marker.producer_id, marker.producer_epoch, marker.commit, marker.coordinator_epoch
            )
        part = self.data.partition(topic, index)
        if part is None:
            if self.peers is not None and self.peers.exists(topic, index):
                return ErrorCode.NOT_LEADER_OR_FOLLOWER  # led here, not open yet (the last leader lets go): retried
            return ErrorCode.NONE  # deleted meanwhile: Kafka removes it from the transaction
        m = marker
        result, wait_for = part.append_marker(
            m.producer_id, m.producer_epoch, m.commit, m.coordinator_epoch, m.transaction_version
        )
        if result.error == ErrorCode.NONE:
            await part.make_durable(result, wait_for)
        return ErrorCode(result.error)
