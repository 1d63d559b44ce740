"""One transition of a transactional id: the whole new metadata as the record that writes it
(Kafka's TransactionMetadata.prepareTransitionTo + TxnTransitMetadata), and the refusals.

`prepare` checks the state table, then builds the record from the current metadata with the
given changes. As Kafka's prepareTransitionTo does, every transition records the producer id it
leaves as `previous_producer_id` (TransactionLogValue v1 tag 0), which is how a retry after a
producer id rotation or a KIP-890 epoch overflow is recognised.
"""

from __future__ import annotations

from dataclasses import replace

from coordinator.observe.reasons import explain
from coordinator.txn.records import TransactionRecord
from coordinator.txn.state import TransactionMetadata, TransactionState, check_transition
from protocol.errors import ErrorCode


def prepare(meta: TransactionMetadata, state: TransactionState, now_ms: int, **changes: object) -> TransactionRecord:
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
        meta.producer_id,
        meta.next_producer_id,
        meta.last_producer_epoch,
        meta.client_version,
    )
    return replace(rec, **changes)  # type: ignore[arg-type]


def refuse(code: ErrorCode, text: str) -> ErrorCode:
    """The error a request gets, with the reason the transcript shows."""
    explain(code, text)
    return code
