"""What a cleaning round does with transactions (Kafka's CleanedTransactionMetadata and the
transaction half of LogCleaner's checkBatchRetention).

The round reads its batches in offset order and tells this object about each one:
- a batch of an aborted transaction (the segments' `.txnindex`) is dropped;
- an ABORT marker stays while this round still read a batch of its transaction (and so does its
  index entry); a COMMIT marker stays while this round read a batch of its transaction; an
  empty control batch (already cleaned) may go. A marker that may go is first rewritten with a
  delete horizon of now + delete.retention.ms (KIP-534, as tombstones are) and dropped by the
  first round after it: so a marker outlives the data it covers by at least delete.retention.ms,
  and read_committed readers never meet data without its marker or index entry.
- the batch that holds an active producer's last sequence (or, if it has written no data since
  its epoch changed, its markers at that epoch) keeps its header (RETAIN_EMPTY): producer state
  survives; producers that expired (producer.id.expiration.ms) no longer hold anything back.
A header-only transactional batch counts as read only when it holds its producer's state (as
in Kafka, where no other empty batches exist); the ones kgc keeps because they end a group do
not, so they never hold a marker back, and a replay of producer state (producer_state.apply)
lets no header-only batch open a transaction.
"""

from __future__ import annotations

from typing import NamedTuple

from .batch.control import read_marker
from .batch.layout import Buffer, InvalidBatch
from .log import Log
from .txn_index import AbortedTxn

__all__ = ["RoundTransactions", "MarkerFate"]


class MarkerFate(NamedTuple):
    """What the round writes for one control batch."""

    keep_records: bool  # False: only a header (retain_empty) or nothing
    retain_empty: bool  # the producer's state needs the header
    stamp_horizon: bool  # rewrite it with a delete horizon (it may go once that passes)


class RoundTransactions:
    def __init__(self, log_: Log, now_ms: int) -> None:
        self.now_ms = now_ms
        self.delete_retention_ms = log_.config.delete_retention_ms
        entries = sorted((t for seg in log_.segments for t in seg.txn_index.entries), key=lambda t: t.first_offset)
        self._pending = entries  # aborted transactions not reached yet, by first offset
        self._next = 0
        self._ranges: dict[int, list[tuple[int, int]]] = {}  # pid -> [(first, marker offset)]
        for txn in entries:
            self._ranges.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
        self._ongoing_aborted: dict[int, list[object]] = {}  # pid -> [AbortedTxn, read a batch?]
        self._ongoing_committed: set[int] = set()
        self.kept_aborted: set[AbortedTxn] = set()  # entries whose marker stays with its data
        # Kafka's lastRecordsOfActiveProducers: (last data offset or -1, epoch) per live producer.
        self._active = {pid: (e.last_data_offset, e.producer_epoch) for pid, e in log_.producer_state.producers.items()}
        self.trusted = True  # False once a group was skipped: then no marker may go this round

    # -- facts -----------------------------------------------------------------------------------
    def is_aborted(self, pid: int, base: int) -> bool:
        """The batch belongs to a transaction that an ABORT marker ended."""
        return any(first <= base <= last for first, last in self._ranges.get(pid, ()))

    def holds_producer_state(self, pid: int, last: int) -> bool:
        """A data batch holding an active producer's last sequence (RETAIN_EMPTY)."""
        found = self._active.get(pid)
        return found is not None and found[0] == last

    # -- the round's reading, in offset order ------------------------------------------------------
    def _consume_up_to(self, offset: int) -> None:
        pending = self._pending
        while self._next < len(pending) and pending[self._next].first_offset <= offset:
            txn = pending[self._next]
            self._ongoing_aborted.setdefault(txn.producer_id, [txn, False])
            self._next += 1

    def on_data_batch(self, pid: int, last: int, transactional: bool, records: int) -> None:
        """CleanedTransactionMetadata.onBatchRead (the batch is dropped if `is_aborted`)."""
        self._consume_up_to(last)
        if not transactional or (records == 0 and not self.holds_producer_state(pid, last)):
            return
        ongoing = self._ongoing_aborted.get(pid)
        if ongoing is not None:
            ongoing[1] = True
        else:
            self._ongoing_committed.add(pid)

    def on_control_batch(
        self, raw: Buffer, pid: int, epoch: int, last: int, records: int, horizon: int | None
    ) -> MarkerFate:
        """onControlBatchRead + checkBatchRetention for a control batch."""
        self._consume_up_to(last)
        can_discard = self._can_discard(raw, pid, records) and self.trusted
        found = self._active.get(pid)
        retain_empty = found is not None and found[0] < 0 and found[1] == epoch
        discard_records = can_discard and horizon is not None and horizon <= self.now_ms
        return MarkerFate(
            keep_records=not discard_records and records > 0,
            retain_empty=retain_empty,
            stamp_horizon=can_discard and horizon is None and records > 0,
        )

    def _can_discard(self, raw: Buffer, pid: int, records: int) -> bool:
        if records == 0:
            return True  # an empty control batch was cleaned already
        try:
            marker = read_marker(raw)
        except InvalidBatch:
            return False
        if marker is None:
            return False  # another control type: kept
        if not marker.commit:
            ongoing = self._ongoing_aborted.pop(pid, None)
            if ongoing is not None and ongoing[1]:
                self.kept_aborted.add(ongoing[0])  # type: ignore[arg-type]
                return False
            return True
        if pid in self._ongoing_committed:
            self._ongoing_committed.discard(pid)
            return False
        return True

    def index_entries(self, entries: list[AbortedTxn], end: int) -> list[AbortedTxn]:
        """The aborted-transaction entries a cleaned segment keeps: markers beyond the round,
        and markers that stay with their data (an entry whose data is gone covers nothing)."""
        if not self.trusted:
            return entries
        return [t for t in entries if t.last_offset >= end or t in self.kept_aborted]

    def horizon(self) -> int:
        return self.now_ms + self.delete_retention_ms
