"""One transition of a transactional id: the whole new metadata as the record that writes it
(Kafka's TransactionMetadata.prepareTransitionTo + TxnTransitMetadata), and the refusals.

`prepare` checks the state table, then builds the record from the current metadata with the
given changes. As Kafka's prepareTransitionTo does, every transition records the producer id it
leaves as `previous_producer_id` (TransactionLogValue v1 tag 0), which is how a retry after a
producer id rotation or a KIP-890 epoch overflow is recognised.
"""

from __future__ import annotations

from typing import Any

from coordinator.observe.reasons import explain
from coordinator.txn.records import TransactionRecord
from coordinator.txn.state import TransactionMetadata, TransactionState, check_transition
from protocol.errors import ErrorCode


def prepare(meta: TransactionMetadata, state: TransactionState, now_ms: int, **changes: Any) -> TransactionRecord:
    check_transition(meta.transactional_id, meta.state, state)
    fields: dict[str, Any] = {
        "transactional_id": meta.transactional_id,
        "producer_id": meta.producer_id,
        "producer_epoch": meta.producer_epoch,
        "timeout_ms": meta.timeout_ms,
        "state": state,
        "partitions": None,
        "last_update_ms": now_ms,
        "start_ms": meta.start_ms,
        "previous_producer_id": meta.producer_id,
        "next_producer_id": meta.next_producer_id,
        "last_producer_epoch": meta.last_producer_epoch,
        "client_version": meta.client_version,
    }
    fields.update(changes)  # one construction, not a record and its replace (every request builds one)
    if fields["partitions"] is None:
        fields["partitions"] = tuple(meta.sorted_partitions())
    return TransactionRecord(**fields)


def refuse(code: ErrorCode, text: str) -> ErrorCode:
    """The error a request gets, with the reason the transcript shows."""
    explain(code, text)
    return code
