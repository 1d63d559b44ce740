"""__share_group_state records as JSON, as Kafka's DumpLogSegments --share-group-state-decoder
prints them (ShareGroupStateMessageParser, a CoordinatorRecordMessageParser, and
ShareGroupStateMessageFormatter): the key as `{"type":"0","data":{"groupId":...,"topicId":...,
"partition":...}}` with the topic id in Uuid.toString form, the value as `{"version":"0",
"data":{...}}` with the fields in schema order (deliveryCompleteCount, a tagged field, only when
not -1), a tombstone as `<DELETE>`; an unknown record type or a record that does not parse
becomes one explanatory key text, as the parser reports them.
"""

from __future__ import annotations

import json
from typing import Any

from coordinator.share.persister import UNINITIALIZED_DELIVERY_COMPLETE_COUNT, StateBatch
from coordinator.share.state.placement import topic_id_text
from coordinator.share.state.records import (
    ShareRecordDecodeError,
    ShareSnapshot,
    ShareTombstone,
    ShareUpdate,
    UnknownShareRecord,
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
    except ShareRecordDecodeError as exc:
        return f"Error at offset {offset}, skipping. {exc}", None
    if isinstance(record, UnknownShareRecord):
        if record.version < 0:
            return f"Unknown record type {record.record_type} at offset {offset}, skipping.", None
        return (
            f"Error at offset {offset}, skipping. Found an unknown record version {record.version} "
            f"for {record.record_type} type"
        ), None
    record_type = (
        0 if isinstance(record, ShareSnapshot) else 1 if isinstance(record, ShareUpdate) else record.record_type
    )
    spk = record.key
    key_text = _json(
        {
            "type": str(record_type),
            "data": {"groupId": spk.group_id, "topicId": topic_id_text(spk.topic_id), "partition": spk.partition},
        }
    )
    if isinstance(record, ShareTombstone):
        return key_text, DELETE
    return key_text, _json({"version": "0", "data": value_json(record)})


def _batches(batches: tuple[StateBatch, ...]) -> list[dict[str, int]]:
    return [
        {
            "firstOffset": b.first_offset,
            "lastOffset": b.last_offset,
            "deliveryState": b.delivery_state,
            "deliveryCount": b.delivery_count,
        }
        for b in batches
    ]


def value_json(r: ShareSnapshot | ShareUpdate) -> dict[str, Any]:
    data: dict[str, Any] = {"snapshotEpoch": r.snapshot_epoch}
    if isinstance(r, ShareSnapshot):
        data |= {"stateEpoch": r.state_epoch, "leaderEpoch": r.leader_epoch, "startOffset": r.start_offset}
        data |= {"createTimestamp": r.create_timestamp, "writeTimestamp": r.write_timestamp}
    else:
        data |= {"leaderEpoch": r.leader_epoch, "startOffset": r.start_offset}
    if r.delivery_complete_count != UNINITIALIZED_DELIVERY_COMPLETE_COUNT:
        data["deliveryCompleteCount"] = r.delivery_complete_count
    data["stateBatches"] = _batches(r.batches)
    return data
