"""A log's producer state and aborted-transaction indexes, kept with its appends (Kafka's
UnifiedLog producer-state and txn-index duties: loadProducerState, updateProducerStateManager,
takeSnapshot on roll and close, collectAbortedTransactions).

Invariants: after `load`, the state describes the log up to its end; every ABORT marker that
closes an open transaction has its entry in the `.txnindex` of the segment holding the marker.
Open: the newest usable snapshot at or below the recovery point after a crash (written at rolls,
checkpoints and closes; the log end after a clean stop) is read and the batch headers after it
are replayed (control batches decoded); after a crash the `.txnindex` of what was replayed is
rewritten from that replay (entries below the snapshot were fsynced with the recovery point),
because an index entry is not made durable with its marker. Snapshots are only a cache: without
one the whole log is replayed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .batch.control import Marker, read_marker
from .batch.layout import CONTROL_BIT, LOG_OVERHEAD, BatchHeader, InvalidBatch
from .batch.scan import Frames
from .producer_snapshot import (
    CorruptSnapshotError,
    delete_snapshot,
    delete_snapshots,
    encode_snapshot,
    list_snapshots,
    read_snapshot,
    snapshot_path,
    write_snapshot,
)
from .producer_state import ProducerStateManager
from .segment import LogSegment
from .txn_index import AbortedTxn

__all__ = ["LogTransactions", "marker_of"]

log = logging.getLogger(__name__)


def marker_of(batch: bytes | memoryview, header: BatchHeader) -> Marker | None:
    """The end-transaction marker of a control batch (None if it is not one or is unreadable)."""
    if not header.attributes & CONTROL_BIT:
        return None
    try:
        return read_marker(batch)
    except (InvalidBatch, IndexError, ValueError):
        return None


class LogTransactions:
    def __init__(self, directory: str, state: ProducerStateManager) -> None:
        self.directory = directory
        self.state = state
        self.replayed_from: int | None = None  # where the open replayed from (None: a snapshot sufficed)

    # -- opening --------------------------------------------------------------------------------
    @classmethod
    def load(
        cls, directory: str, segments: Sequence[LogSegment], *, clean: bool, recovery_point: int | None
    ) -> LogTransactions:
        log_start, log_end = segments[0].base_offset, segments[-1].next_offset
        delete_snapshots(directory, above=log_end, below=log_start)  # stale after a truncation
        state, start = None, log_start
        limit = log_end if clean or recovery_point is None else min(recovery_point, log_end)
        for offset in reversed(list_snapshots(directory)):
            if offset > limit:
                continue
            try:
                entries = read_snapshot(snapshot_path(directory, offset))
            except CorruptSnapshotError as exc:
                log.warning("ignoring producer snapshot: %s", exc)
                delete_snapshot(directory, offset)
                continue
            state, start = ProducerStateManager(offset), offset
            for entry in entries:
                state.load_entry(entry)
            break
        if state is None:
            state = ProducerStateManager(log_start)
        txns = cls(directory, state)
        if not clean or start < log_end:
            txns.replayed_from = start
            txns._replay(segments, start, rebuild=not clean)
        return txns

    def _replay(self, segments: Sequence[LogSegment], start: int, *, rebuild: bool) -> None:
        """Apply every batch at or after `start`; with `rebuild`, rewrite the txn index of each
        segment replayed from what the markers say (keeping its entries below `start`)."""
        state = self.state
        for seg in segments:
            if seg.next_offset <= start:
                continue
            aborted = [t for t in seg.txn_index.entries if t.last_offset < start]
            position = 0 if seg.base_offset >= start else (seg.find_position(start) or 0)
            for _, buf, off, fields in Frames(seg.fd, position, seg.size):
                h = BatchHeader._make(fields)
                if h.base_offset < start:
                    continue
                marker = None
                if h.attributes & CONTROL_BIT:
                    marker = marker_of(memoryview(buf)[off : off + fields[1] + LOG_OVERHEAD], h)
                completed = state.apply(h, marker)
                if completed is not None:
                    entry = state.complete_txn(completed)
                    if entry is not None:
                        aborted.append(entry)
            if rebuild:
                seg.txn_index.rewrite(aborted)
        state.map_end_offset = segments[-1].next_offset

    # -- appends ---------------------------------------------------------------------------------
    def on_append(self, batch: bytes, header: BatchHeader, segment: LogSegment) -> None:
        """A batch of a producer was appended to `segment` (raises OSError if the index write fails)."""
        completed = self.state.apply(header, marker_of(batch, header))
        if completed is not None:
            entry = self.state.complete_txn(completed)
            if entry is not None:
                segment.txn_index.append(entry)

    def snapshot(self, offset: int, *, keep: int | None = None) -> None:
        """Write the snapshot for `offset` (roll, close) and keep only the newest `keep`; a
        failure only costs a longer replay at the next open."""
        self.state.map_end_offset = offset
        try:
            write_snapshot(self.directory, offset, self.state, sync=False)
            if keep is not None:
                for old in list_snapshots(self.directory)[:-keep]:
                    delete_snapshot(self.directory, old)
        except OSError as exc:
            log.warning("%s: writing the producer snapshot at %d failed: %r", self.directory, offset, exc)

    def encode(self) -> bytes:
        return encode_snapshot(self.state)

    def prune(self, keep: int = 3) -> None:
        for old in list_snapshots(self.directory)[:-keep]:
            delete_snapshot(self.directory, old)

    def on_log_start(self, log_start: int) -> None:
        """Retention moved the log start: forget producers whose data is gone, and old snapshots."""
        self.state.evict_before(log_start)
        delete_snapshots(self.directory, below=log_start)

    # -- reads -----------------------------------------------------------------------------------
    @staticmethod
    def collect_aborted(segments: Sequence[LogSegment], fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """UnifiedLog.collectAbortedTransactions: aborted transactions overlapping
        [fetch_offset, upper_bound), from the segment holding fetch_offset onwards."""
        found: list[AbortedTxn] = []
        for seg in segments:
            if seg.next_offset <= fetch_offset and seg is not segments[-1]:
                continue
            entries, complete = seg.txn_index.collect(fetch_offset, upper_bound)
            found.extend(entries)
            if complete:
                break
        return found
