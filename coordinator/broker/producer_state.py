"""Produce-time checks of a producer's batch against its partition's producer state.

The state itself is the log's (storage/producer_state.py: epochs, the last 5 batches per
producer, open transactions, kept by every append and by snapshots across restarts); this module
only judges a client batch before it is appended, with Kafka's rules and error codes:
ProducerAppendInfo.checkProducerEpoch / checkSequence (Kafka 3.x/4.x, client origin), the
duplicate answer of a retried batch (ProducerStateEntry.findDuplicateBatch), and appendDataBatch's
transaction rule (a producer with an open transaction may only write transactional batches).
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.errors import ErrorCode
from storage.batch import BatchHeader
from storage.producer_state import BatchMetadata, ProducerStateManager

NO_PRODUCER_ID = -1
INT32_MAX = 2**31 - 1


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


def check(state: ProducerStateManager, header: BatchHeader) -> Verdict:
    """Validates a client batch against the state, before it is appended."""
    pid = header.producer_id
    if pid == NO_PRODUCER_ID:
        return ACCEPT
    entry = state.producers.get(pid)
    if entry is None:
        # No state for this producer (new, or all its batches were deleted by retention):
        # Kafka (since KIP-360) accepts any sequence here rather than UNKNOWN_PRODUCER_ID.
        return ACCEPT
    epoch, first_seq = header.producer_epoch, header.base_sequence
    if epoch == entry.producer_epoch:
        duplicate = entry.find_duplicate(first_seq, header.last_sequence)
        if duplicate is not None:
            return Verdict(duplicate=duplicate)
    if epoch < entry.producer_epoch:
        return Verdict(
            ErrorCode.INVALID_PRODUCER_EPOCH,
            f"Epoch of producer {pid} is {epoch}, which is smaller than the last seen epoch {entry.producer_epoch}",
        )
    if epoch != entry.producer_epoch:
        if first_seq != 0 and entry.producer_epoch != -1:
            return Verdict(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Invalid sequence number for new epoch of producer {pid}: {epoch} "
                f"(request epoch), {first_seq} (seq. number), {entry.producer_epoch} (current epoch)",
            )
    elif not in_sequence(entry.last_seq, first_seq):
        return Verdict(
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            f"Out of order sequence number for producer {pid}: {first_seq} "
            f"(incoming seq. number), {entry.last_seq} (current end sequence number)",
        )
    if entry.current_txn_first_offset >= 0 and not header.is_transactional:
        return Verdict(
            ErrorCode.INVALID_TXN_STATE,
            f"Expected transactional write from producer {pid}: its transaction started at "
            f"offset {entry.current_txn_first_offset} is still open",
        )
    return ACCEPT
