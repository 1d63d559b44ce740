"""__consumer_offsets records as JSON, as Kafka's DumpLogSegments prints them: the one renderer.

`kgc dump --offsets-decoder` and the transcript both use it (the core owns its rendering).

Kafka's OffsetsMessageParser (tools/DumpLogSegments, Kafka 3.7+) prints the key as
`{"type":"<record type>","data":{...}}` and the value as `{"version":"<v>","data":{...}}`, both
compact JSON with the schema's field names and only the fields of that version; a tombstone is
`<DELETE>`. For GroupMetadataValue with protocol type "consumer" the member subscription and
assignment are decoded into JSON too (left as base64 if they do not parse). KIP-848 consumer-group
records (key types 3-8, 16) are rendered by consumer/record_json.py, KIP-932 share-group records
(key types 10-15) by share/record_json.py. Unknown record types
and unparseable records become one explanatory key text, as Kafka's parser reports them.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

from coordinator.groups.consumer import record_json as consumer_json
from coordinator.groups.consumer.record_json import kafka_uuid
from coordinator.groups.consumer.records import is_consumer_record
from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.records import (
    GROUP_METADATA_KEY_TYPE,
    LEGACY_OFFSET_COMMIT_KEY_TYPE,
    OFFSET_COMMIT_KEY_TYPE,
    OffsetCommitRecord,
    OffsetTombstone,
    RecordDecodeError,
    UnknownRecord,
    decode_record,
)
from coordinator.groups.share import record_json as share_json
from coordinator.groups.share.records import is_share_record
from protocol.consumer_protocol import MAX_VERSION, decode_assignment, decode_subscription
from protocol.errors import DecodeError

DELETE = "<DELETE>"


def _json(value: Any) -> str:
    # Jackson's ObjectNode.toString(): no spaces, non-ASCII kept as is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


def decode(offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """(key text, payload text) for one record, as OffsetsMessageParser.parse returns them."""
    key_json, value_json = decode_json(offset, key, value)
    return (
        key_json if isinstance(key_json, str) else _json(key_json),
        value_json if value_json is None or isinstance(value_json, str) else _json(value_json),
    )


def decode_json(offset: int, key: bytes | None, value: bytes | None) -> tuple[Any, Any]:
    """`decode` before the JSON is printed: dicts, or the explanatory/`<DELETE>` texts."""
    if key is None:
        raise ValueError(
            f"Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"
        )
    try:
        record = decode_record(key, value)
    except (RecordDecodeError, DecodeError, struct.error, UnicodeDecodeError) as exc:
        return f"Error at offset {offset}, skipping. {exc}", None
    if is_consumer_record(record):
        return consumer_json.to_json(record)
    if is_share_record(record):
        return share_json.to_json(record)
    key_type = struct.unpack_from(">h", key)[0]
    if isinstance(record, UnknownRecord):
        if record.value_version is None:
            return f"Unknown record type {record.key_type} at offset {offset}, skipping.", None
        return (
            f"Error at offset {offset}, skipping. Unknown version {record.value_version} "
            f"of record type {record.key_type}"
        ), None
    key_json = {"type": str(key_type), "data": key_data(record)}
    if value is None:
        return key_json, DELETE
    version = struct.unpack_from(">h", value)[0]
    return key_json, {"version": str(version), "data": value_data(record, version)}


def transcript_fields(offset: int, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """A record written, as the transcript shows it: its group and Kafka's key/value JSON."""
    key_json, value_json = decode_json(offset, key, value)
    return {"group": key_group(key), "key": key_json, "value": value_json}


def key_group(key: bytes | None) -> str | None:
    """The group id every __consumer_offsets key starts with (after the int16 type)."""
    if key is None or len(key) < 4:
        return None
    (n,) = struct.unpack_from(">h", key, 2)
    try:
        return key[4 : 4 + n].decode("utf-8") if 0 <= n <= len(key) - 4 else None
    except UnicodeDecodeError:
        return None


def key_data(record: Any) -> dict[str, Any]:
    if isinstance(record, (OffsetCommitRecord, OffsetTombstone)):
        return {"group": record.group_id, "topic": record.topic, "partition": record.partition}
    return {"group": record.group_id}  # GroupMetadataKey (record or tombstone)


def value_data(record: Any, version: int) -> dict[str, Any]:
    if isinstance(record, OffsetCommitRecord):
        return offset_value(record, version)
    assert isinstance(record, GroupMetadataRecord)
    return group_value(record, version)


def offset_value(r: OffsetCommitRecord, version: int) -> dict[str, Any]:
    """OffsetCommitValue.json: leaderEpoch v3+, expireTimestamp v1 only, topicId (tagged, v4+)
    when it is not Kafka's default ZERO_UUID."""
    data: dict[str, Any] = {"offset": r.offset}
    if version >= 3:
        data["leaderEpoch"] = r.leader_epoch
    data["metadata"] = r.metadata
    data["commitTimestamp"] = r.commit_timestamp_ms
    if version == 1:
        data["expireTimestamp"] = -1 if r.expire_timestamp_ms is None else r.expire_timestamp_ms
    if version >= 4 and r.topic_id is not None:
        data["topicId"] = kafka_uuid(r.topic_id)
    return data


def group_value(g: GroupMetadataRecord, version: int) -> dict[str, Any]:
    """GroupMetadataValue.json: currentStateTimestamp v2+; per member rebalanceTimeout v1+,
    groupInstanceId v3+."""
    data: dict[str, Any] = {
        "protocolType": g.protocol_type,
        "generation": g.generation_id,
        "protocol": g.protocol_name,
        "leader": g.leader,
    }
    if version >= 2:
        data["currentStateTimestamp"] = -1 if g.current_state_timestamp_ms is None else g.current_state_timestamp_ms
    consumer = g.protocol_type == "consumer"
    members = []
    for m in g.members:
        member: dict[str, Any] = {"memberId": m.member_id}
        if version >= 3:
            member["groupInstanceId"] = m.group_instance_id
        member["clientId"] = m.client_id
        member["clientHost"] = m.client_host
        if version >= 1:
            member["rebalanceTimeout"] = m.rebalance_timeout_ms
        member["sessionTimeout"] = m.session_timeout_ms
        member["subscription"] = subscription_json(m.subscription) if consumer else _b64(m.subscription)
        member["assignment"] = assignment_json(m.assignment) if consumer else _b64(m.assignment)
        members.append(member)
    data["members"] = members
    return data


def subscription_json(blob: bytes) -> Any:
    """ConsumerProtocolSubscription JSON at the blob's own version; base64 if it does not parse."""
    try:
        sub = decode_subscription(blob)
    except DecodeError:
        return _b64(blob)
    if sub.version > MAX_VERSION:
        return _b64(blob)  # Kafka's reader refuses versions it does not know
    data: dict[str, Any] = {"topics": sub.topics, "userData": _b64(sub.user_data)}
    if sub.version >= 1:
        data["ownedPartitions"] = [{"topic": tp.topic, "partitions": tp.partitions} for tp in sub.owned_partitions]
    if sub.version >= 2:
        data["generationId"] = sub.generation_id
    if sub.version >= 3:
        data["rackId"] = sub.rack_id
    return data


def assignment_json(blob: bytes) -> Any:
    if len(blob) < 2:  # an empty assignment (a member the leader gave nothing) has no version
        return _b64(blob)
    try:
        a = decode_assignment(blob)
    except DecodeError:
        return _b64(blob)
    if a.version > MAX_VERSION:
        return _b64(blob)
    return {
        "assignedPartitions": [{"topic": tp.topic, "partitions": tp.partitions} for tp in a.assigned_partitions],
        "userData": _b64(a.user_data),
    }


__all__ = ["decode", "DELETE", "LEGACY_OFFSET_COMMIT_KEY_TYPE", "OFFSET_COMMIT_KEY_TYPE", "GROUP_METADATA_KEY_TYPE"]
