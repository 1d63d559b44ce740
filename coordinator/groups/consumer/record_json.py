"""Consumer-group records as Kafka's dump tool prints them (DumpLogSegments --offsets-decoder).

Kafka's OffsetsMessageParser prints a key as `{"type":"<record type>","data":{...}}` and a value
as `{"version":"0","data":{...}}` (a tombstone as `<DELETE>`), with the generated JSON
converters' field names (camelCase of the schema names): uuids in Kafka's Uuid text form
(URL-safe base64, no padding), bytes as standard base64, tagged fields only when they differ from
their default. `to_json` returns the two as Python values; `to_json_text` as the printed text.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from coordinator.groups.consumer import records as r

DELETE = "<DELETE>"


def kafka_uuid(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")


def _tps(items: tuple[r.TopicPartitions, ...]) -> list[dict[str, Any]]:
    """Kafka's generated JSON writes a tagged field only when it is not its default (null)."""
    out = []
    for tp in items:
        entry: dict[str, Any] = {"topicId": kafka_uuid(tp.topic_id), "partitions": list(tp.partitions)}
        if tp.assignment_epochs is not None:
            entry["assignmentEpochs"] = list(tp.assignment_epochs)
        out.append(entry)
    return out


def key_data(record: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"groupId": record.group_id}
    if hasattr(record, "member_id"):
        data["memberId"] = record.member_id
    if hasattr(record, "regular_expression"):
        data["regularExpression"] = record.regular_expression
    return data


def value_data(record: Any) -> dict[str, Any]:
    if isinstance(record, r.ConsumerGroupMetadataRecord):
        data: dict[str, Any] = {"epoch": record.epoch}
        if record.metadata_hash != 0:
            data["metadataHash"] = record.metadata_hash
        return data
    if isinstance(record, r.ConsumerGroupPartitionMetadataRecord):
        return {
            "topics": [
                {
                    "topicId": kafka_uuid(t.topic_id),
                    "topicName": t.topic_name,
                    "numPartitions": t.num_partitions,
                    "partitionMetadata": [
                        {"partition": pm.partition, "racks": list(pm.racks)} for pm in t.partition_metadata
                    ],
                }
                for t in record.topics
            ]
        }
    if isinstance(record, r.ConsumerGroupMemberMetadataRecord):
        data = {
            "instanceId": record.instance_id,
            "rackId": record.rack_id,
            "clientId": record.client_id,
            "clientHost": record.client_host,
            "subscribedTopicNames": list(record.subscribed_topic_names),
            "subscribedTopicRegex": record.subscribed_topic_regex,
            "rebalanceTimeoutMs": record.rebalance_timeout_ms,
            "serverAssignor": record.server_assignor,
        }
        c = record.classic_member_metadata
        if c is not None:
            data["classicMemberMetadata"] = {
                "sessionTimeoutMs": c.session_timeout_ms,
                "supportedProtocols": [
                    {"name": cp.name, "metadata": base64.b64encode(cp.metadata).decode("ascii")}
                    for cp in c.supported_protocols
                ],
            }
        return data
    if isinstance(record, r.ConsumerGroupTargetAssignmentMetadataRecord):
        return {"assignmentEpoch": record.assignment_epoch}
    if isinstance(record, r.ConsumerGroupTargetAssignmentMemberRecord):
        return {"topicPartitions": _tps(record.topic_partitions)}
    if isinstance(record, r.ConsumerGroupCurrentMemberAssignmentRecord):
        return {
            "memberEpoch": record.member_epoch,
            "previousMemberEpoch": record.previous_member_epoch,
            "state": record.state,
            "assignedPartitions": _tps(record.assigned_partitions),
            "partitionsPendingRevocation": _tps(record.partitions_pending_revocation),
        }
    if isinstance(record, r.ConsumerGroupRegularExpressionRecord):
        return {"topics": list(record.topics), "version": record.version, "timestamp": record.timestamp}
    raise TypeError(f"not a consumer-group record value: {type(record).__name__}")


def to_json(record: Any) -> tuple[dict[str, Any], dict[str, Any] | str]:
    """(key JSON, value JSON or "<DELETE>") as Python values."""
    if not r.is_consumer_record(record):
        raise TypeError(f"not a consumer-group record: {type(record).__name__}")
    key = {"type": str(record.key_type), "data": key_data(record)}
    if isinstance(record, r.TOMBSTONES):
        return key, DELETE
    return key, {"version": "0", "data": value_data(record)}


def to_json_text(record: Any) -> tuple[str, str]:
    """The texts Kafka prints (Jackson's compact form: no spaces, non-ASCII kept)."""
    key, value = to_json(record)
    return _dump(key), value if isinstance(value, str) else _dump(value)


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
