"""Idempotent-producer state of one partition: Kafka's ProducerStateManager, without transactions.

Per producer id we keep the epoch and the metadata of its last 5 batches
(ProducerStateEntry.NUM_BATCHES_TO_RETAIN), which is what a producer may have in flight. The
state is derived from the log alone: `rebuild` replays batch headers (producer id, epoch, base
sequence, last offset delta), so no snapshot file is needed and a restart recovers it exactly.
Rules copied from ProducerAppendInfo.checkProducerEpoch/checkSequence (Kafka 3.x/4.x, client origin).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol.errors import ErrorCode
from storage.batch import BatchHeader

NUM_BATCHES_TO_RETAIN = 5
NO_PRODUCER_ID = -1
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class ProducerEntry:
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        for meta in self.batches:
            if meta.first_seq == first_seq and meta.last_seq == last_seq:
                return meta
        return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of checking one batch: append it, answer with an earlier copy, or refuse."""
    error: int = ErrorCode.NONE
    message: str | None = None
    duplicate: BatchMetadata | None = None


ACCEPT = Verdict()


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """ProducerAppendInfo.inSequence: next follows last, wrapping at Integer.MAX_VALUE."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def check(self, header: BatchHeader) -> Verdict:
        """Validates a client batch against the state, before it is appended."""
        pid = header.producer_id
        if pid == NO_PRODUCER_ID:
            return ACCEPT
        entry = self.producers.get(pid)
        if entry is None:
            # No state for this producer (new, or all its batches were deleted by retention):
            # Kafka (since KIP-360) accepts any sequence here rather than UNKNOWN_PRODUCER_ID.
            return ACCEPT
        epoch, first_seq = header.producer_epoch, header.base_sequence
        if epoch == entry.epoch:
            duplicate = entry.find_duplicate(first_seq, header.last_sequence)
            if duplicate is not None:
                return Verdict(duplicate=duplicate)
        if epoch < entry.epoch:
            return Verdict(ErrorCode.INVALID_PRODUCER_EPOCH,
                           f"Epoch of producer {pid} is {epoch}, which is smaller than the last seen epoch "
                           f"{entry.epoch}")
        if epoch != entry.epoch:
            if first_seq != 0:
                return Verdict(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                               f"Invalid sequence number for new epoch of producer {pid}: {epoch} "
                               f"(request epoch), {first_seq} (seq. number), {entry.epoch} (current epoch)")
            return ACCEPT
        if not in_sequence(entry.last_seq, first_seq):
            return Verdict(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                           f"Out of order sequence number for producer {pid}: {first_seq} "
                           f"(incoming seq. number), {entry.last_seq} (current end sequence number)")
        return ACCEPT

    def update(self, header: BatchHeader, base_offset: int) -> None:
        """Records a batch that is now in the log at `base_offset` (append or replay)."""
        pid = header.producer_id
        if pid == NO_PRODUCER_ID:
            return
        entry = self.producers.get(pid)
        if entry is None or header.producer_epoch != entry.epoch:
            # A new epoch starts a fresh sequence space (ProducerStateEntry.update).
            entry = self.producers[pid] = ProducerEntry(header.producer_epoch)
        entry.batches.append(BatchMetadata(
            header.base_sequence, header.last_sequence, base_offset, base_offset + header.last_offset_delta,
        ))

    def rebuild(self, headers: Iterable[BatchHeader]) -> None:
        """Replays the log's batch headers in offset order (after open)."""
        self.producers.clear()
        for header in headers:
            if header.producer_id != NO_PRODUCER_ID and not header.is_control:
                self.update(header, header.base_offset)

    def evict_before(self, log_start_offset: int) -> None:
        """Drops producers whose every batch was deleted (ProducerStateManager.truncateHead)."""
        gone = [pid for pid, e in self.producers.items() if e.last_offset < log_start_offset]
        for pid in gone:
            del self.producers[pid]
