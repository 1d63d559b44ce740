"""__transaction_state records as JSON, as Kafka's DumpLogSegments --transaction-log-decoder
prints them (TransactionLogMessageParser, a CoordinatorRecordMessageParser, Kafka 4.1+): the key
as `{"type":"0","data":{"transactionalId":...}}`, the value as `{"version":"<v>","data":{...}}`
with TransactionLogValue's fields in schema order (tagged v1 fields only when not default), a
tombstone as `<DELETE>`; an unknown key type or a record that does not parse becomes one
explanatory key text, as the parser reports them.
"""

from __future__ import annotations

import json
from typing import Any

from coordinator.txn.records import (
    TransactionRecord,
    TransactionTombstone,
    TxnRecordDecodeError,
    UnknownTxnRecord,
    decode_record,
)

DELETE = "<DELETE>"


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def decode(offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """(key text, payload text) for one record, as the message parser returns them."""
    if key is None:
        raise ValueError(
            f"Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"
        )
    try:
        record = decode_record(key, value)
    except TxnRecordDecodeError as exc:
        return f"Error at offset {offset}, skipping. {exc}", None
    if isinstance(record, UnknownTxnRecord):
        return f"Unknown record type {record.key_version} at offset {offset}, skipping.", None
    key_text = _json({"type": "0", "data": {"transactionalId": record.transactional_id}})
    if isinstance(record, TransactionTombstone) or value is None:
        return key_text, DELETE
    assert isinstance(record, TransactionRecord)
    version = int.from_bytes(value[:2], "big", signed=True)
    return key_text, _json({"version": str(version), "data": value_json(record, version)})


def value_json(r: TransactionRecord, version: int = 0) -> dict[str, Any]:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in r.partitions:
        by_topic.setdefault(topic, []).append(partition)
    data: dict[str, Any] = {"producerId": r.producer_id}
    if version >= 1 and r.previous_producer_id != -1:
        data["previousProducerId"] = r.previous_producer_id
    if version >= 1 and r.next_producer_id != -1:
        data["nextProducerId"] = r.next_producer_id
    data.update(
        {
            "producerEpoch": r.producer_epoch,
            "transactionTimeoutMs": r.timeout_ms,
            "transactionStatus": r.state.id,
            "transactionPartitions": None
            if r.state.id == 0
            else [{"topic": t, "partitionIds": ps} for t, ps in by_topic.items()],
            "transactionLastUpdateTimestampMs": r.last_update_ms,
            "transactionStartTimestampMs": r.start_ms,
        }
    )
    if version >= 1 and r.client_version != 0:
        data["clientTransactionVersion"] = r.client_version
    return data
