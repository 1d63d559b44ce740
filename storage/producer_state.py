"""What a partition's log knows about its producers (Kafka's ProducerStateManager, minus the
validation, which is the broker's): per producer id its epoch, the metadata of its last 5
batches, the coordinator epoch of its last marker and the first offset of its open transaction;
the open transactions by first offset; transactions completed but not yet below the high
watermark ("unreplicated"); the offset the state is current up to (`map_end_offset`).

Invariants: `apply` sees every batch in offset order exactly once (appends, replay on open);
`first_unstable_offset` is the lowest first offset of an open or unreplicated transaction, so the
last stable offset never passes data whose fate a crash could still change; an ABORT marker that
closes an open transaction yields an `AbortedTxn` for the segment's `.txnindex`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from .batch.control import Marker
from .batch.layout import CONTROL_BIT, TRANSACTIONAL_BIT, BatchHeader
from .txn_index import AbortedTxn

__all__ = [
    "BatchMetadata",
    "ProducerStateEntry",
    "CompletedTxn",
    "ProducerStateManager",
    "NUM_BATCHES_TO_RETAIN",
    "NO_PRODUCER_ID",
]

NUM_BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN
NO_PRODUCER_ID = -1
_INT32 = 2**31


class BatchMetadata(NamedTuple):
    """Kafka's BatchMetadata: a batch by its last sequence, last offset and their spread."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return (self.last_seq - self.offset_delta) % _INT32 if self.last_seq >= 0 else -1

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int = -1
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int = -1  # -1: no open transaction
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """ProducerStateEntry.batchWithSequenceRange."""
        for meta in self.batches:
            if meta.first_seq == first_seq and meta.last_seq == last_seq:
                return meta
        return None

    def _set_epoch(self, epoch: int) -> None:
        if epoch != self.producer_epoch:  # maybeUpdateProducerEpoch: a new epoch forgets batches
            self.batches.clear()
            self.producer_epoch = epoch


class CompletedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # the marker's offset
    is_aborted: bool


class ProducerStateManager:
    def __init__(self, map_end_offset: int = 0) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}
        self.ongoing: dict[int, int] = {}  # first offset -> producer id (open transactions)
        self.unreplicated: dict[int, tuple[int, int]] = {}  # first offset -> (producer id, marker offset)
        self.map_end_offset = map_end_offset

    # -- facts ------------------------------------------------------------------------------------
    def first_unstable_offset(self) -> int | None:
        """Lowest first offset of an open or not-yet-replicated transaction (None: none)."""
        if not self.ongoing and not self.unreplicated:
            return None
        return min(min(self.ongoing, default=2**63), min(self.unreplicated, default=2**63))

    def first_undecided_offset(self) -> int | None:
        """Lowest first offset of an open transaction (the cleaner's bound)."""
        return min(self.ongoing) if self.ongoing else None

    def has_ongoing(self, producer_id: int, epoch: int | None = None) -> bool:
        entry = self.producers.get(producer_id)
        return (
            entry is not None
            and entry.current_txn_first_offset >= 0
            and (epoch is None or entry.producer_epoch == epoch)
        )

    # -- changes ----------------------------------------------------------------------------------
    def apply(self, h: BatchHeader, marker: Marker | None = None) -> CompletedTxn | None:
        """Record a batch now in the log (ProducerAppendInfo.append + update, no checks). For a
        control batch pass its marker. Returns the transaction a marker completed, if any."""
        pid = h.producer_id
        self.map_end_offset = h.base_offset + h.last_offset_delta + 1
        if pid == NO_PRODUCER_ID:
            return None
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerStateEntry(pid)
        if h.attributes & CONTROL_BIT:
            if marker is None:
                return None
            completed = None
            if entry.current_txn_first_offset >= 0:
                completed = CompletedTxn(pid, entry.current_txn_first_offset, h.base_offset, not marker.commit)
            entry._set_epoch(h.producer_epoch)
            entry.coordinator_epoch = marker.coordinator_epoch
            entry.current_txn_first_offset = -1
            entry.last_timestamp = h.max_timestamp
            return completed
        entry._set_epoch(h.producer_epoch)
        last = h.base_offset + h.last_offset_delta
        entry.batches.append(BatchMetadata(h.last_sequence, last, h.last_offset_delta, h.max_timestamp))
        entry.last_timestamp = h.max_timestamp
        if h.attributes & TRANSACTIONAL_BIT and entry.current_txn_first_offset < 0 and h.records_count:
            # (A header-only batch is the cleaner's, of a transaction decided before it ran:
            # it keeps the producer's sequence, it opens nothing.)
            entry.current_txn_first_offset = h.base_offset
            self.ongoing[h.base_offset] = pid
        return None

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """ProducerStateManager.lastStableOffset: the LSO right after `completed` ends."""
        for first in sorted(self.ongoing):
            if self.ongoing[first] != completed.producer_id:
                return first
        return completed.last_offset + 1

    def complete_txn(self, completed: CompletedTxn) -> AbortedTxn | None:
        """Move the transaction from open to unreplicated; its index entry if it aborted (the
        LSO is computed before it leaves the open set, as Kafka's updateTxnIndex does)."""
        entry = None
        if completed.is_aborted:
            entry = AbortedTxn(
                completed.producer_id, completed.first_offset, completed.last_offset, self.last_stable_offset(completed)
            )
        self.ongoing.pop(completed.first_offset, None)
        self.unreplicated[completed.first_offset] = (completed.producer_id, completed.last_offset)
        return entry

    def on_high_watermark(self, high_watermark: int) -> None:
        """Completed transactions whose marker is below the high watermark are stable now."""
        if self.unreplicated:
            for first in [f for f, (_, last) in self.unreplicated.items() if last < high_watermark]:
                del self.unreplicated[first]

    def evict_before(self, log_start_offset: int) -> None:
        """ProducerStateManager.truncateHead: forget producers whose every batch is gone (an
        open transaction keeps its producer)."""
        gone = [
            pid
            for pid, e in self.producers.items()
            if e.current_txn_first_offset < 0 and e.last_data_offset < log_start_offset
        ]
        for pid in gone:
            del self.producers[pid]
        self.on_high_watermark(log_start_offset)

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """ProducerStateManager.removeExpiredProducers (producer.id.expiration.ms): forget every
        producer with no open transaction whose last batch or marker is `expiration_ms` old.
        Returns the producer ids removed."""
        gone = [
            pid
            for pid, e in self.producers.items()
            if e.current_txn_first_offset < 0 and now_ms - e.last_timestamp >= expiration_ms
        ]
        for pid in gone:
            del self.producers[pid]
        return gone

    def load_entry(self, entry: ProducerStateEntry) -> None:
        """loadProducerEntry (from a snapshot)."""
        self.producers[entry.producer_id] = entry
        if entry.current_txn_first_offset >= 0:
            self.ongoing[entry.current_txn_first_offset] = entry.producer_id

    def clear(self, map_end_offset: int = 0) -> None:
        self.producers.clear()
        self.ongoing.clear()
        self.unreplicated.clear()
        self.map_end_offset = map_end_offset
