"""Consumer-group records <-> Kafka's exact __consumer_offsets bytes (Kafka 4.2 serde).

key = int16 record type ++ key struct (never flexible: int16-length strings); value = int16
version (always 0) ++ flexible value struct (compact strings/arrays, every struct ending in its
tagged fields), or None for a tombstone (Kafka CoordinatorRecordSerde). Tagged fields are written
only when they differ from their default, as Kafka's generated code does; unknown tags are
skipped when reading (Kafka keeps them as unknown tagged fields; we do not re-emit them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from coordinator.groups.consumer import records as r
from protocol import primitives as p
from protocol.errors import DecodeError

T = TypeVar("T")
VALUE_VERSION = 0


class ConsumerRecordDecodeError(ValueError):
    """Bytes that claim a consumer-group record type but do not parse."""


class UnknownConsumerRecordVersion(ConsumerRecordDecodeError):
    """A value version this coordinator does not know (Kafka UnknownRecordVersionException,
    which its loader skips)."""

    def __init__(self, key_type: int, version: int) -> None:
        super().__init__(f"unknown version {version} of record type {key_type}")
        self.key_type = key_type
        self.version = version


# -- writing ---------------------------------------------------------------------------------

_TAGS_NONE = b"\x00"


def _carray(items: Sequence[T], write: Callable[[T], bytes]) -> bytes:
    return p.write_compact_array(items, write)


def _int32s(values: Sequence[int]) -> bytes:
    return _carray(values, p.write_int32)


def _strings(values: Sequence[str]) -> bytes:
    return _carray(values, p.write_compact_string)


def _topic_partitions(tp: r.TopicPartitions) -> bytes:
    if tp.assignment_epochs is None:
        return p.write_uuid(tp.topic_id) + _int32s(tp.partitions) + _TAGS_NONE
    # KIP-1251 AssignmentEpochs: tagged field 0, a nullable int32 array (only the current
    # assignment's TopicPartitions defines it; no other record sets it).
    return (
        p.write_uuid(tp.topic_id) + _int32s(tp.partitions) + p.write_tagged_fields({0: _int32s(tp.assignment_epochs)})
    )


def _partition_racks(pr: r.PartitionRacks) -> bytes:
    return p.write_int32(pr.partition) + _strings(pr.racks) + _TAGS_NONE


def _topic_metadata(t: r.TopicMetadataEntry) -> bytes:
    return b"".join(
        (
            p.write_uuid(t.topic_id),
            p.write_compact_string(t.topic_name),
            p.write_int32(t.num_partitions),
            _carray(t.partition_metadata, _partition_racks),
            _TAGS_NONE,
        )
    )


def _classic_protocol(cp: r.ClassicProtocol) -> bytes:
    return p.write_compact_string(cp.name) + p.write_compact_bytes(cp.metadata) + _TAGS_NONE


def _classic_member_metadata(c: r.ClassicMemberMetadata) -> bytes:
    return p.write_int32(c.session_timeout_ms) + _carray(c.supported_protocols, _classic_protocol) + _TAGS_NONE


def encode_key(record: Any) -> bytes:
    """The key bytes (the compaction identity, shared by a record and its tombstone)."""
    kt = record.key_type
    parts = [p.write_int16(kt), p.write_string(record.group_id)]
    if kt in (
        r.CONSUMER_GROUP_MEMBER_METADATA,
        r.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
        r.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    ):
        parts.append(p.write_string(record.member_id))
    elif kt == r.CONSUMER_GROUP_REGULAR_EXPRESSION:
        parts.append(p.write_string(record.regular_expression))
    return b"".join(parts)


def _encode_value(record: Any) -> bytes:
    head = p.write_int16(VALUE_VERSION)
    if isinstance(record, r.ConsumerGroupMetadataRecord):
        tags = {0: p.write_int64(record.metadata_hash)} if record.metadata_hash != 0 else {}
        return head + p.write_int32(record.epoch) + p.write_tagged_fields(tags)
    if isinstance(record, r.ConsumerGroupPartitionMetadataRecord):
        return head + _carray(record.topics, _topic_metadata) + _TAGS_NONE
    if isinstance(record, r.ConsumerGroupMemberMetadataRecord):
        tags = {}
        if record.classic_member_metadata is not None:
            # A nullable struct in a tagged field: a 1 marker, then the struct (MessageDataGenerator).
            tags[0] = p.write_uvarint(1) + _classic_member_metadata(record.classic_member_metadata)
        return b"".join(
            (
                head,
                p.write_compact_nullable_string(record.instance_id),
                p.write_compact_nullable_string(record.rack_id),
                p.write_compact_string(record.client_id),
                p.write_compact_string(record.client_host),
                _strings(record.subscribed_topic_names),
                p.write_compact_nullable_string(record.subscribed_topic_regex),
                p.write_int32(record.rebalance_timeout_ms),
                p.write_compact_nullable_string(record.server_assignor),
                p.write_tagged_fields(tags),
            )
        )
    if isinstance(record, r.ConsumerGroupTargetAssignmentMetadataRecord):
        return head + p.write_int32(record.assignment_epoch) + _TAGS_NONE
    if isinstance(record, r.ConsumerGroupTargetAssignmentMemberRecord):
        return head + _carray(record.topic_partitions, _topic_partitions) + _TAGS_NONE
    if isinstance(record, r.ConsumerGroupCurrentMemberAssignmentRecord):
        return b"".join(
            (
                head,
                p.write_int32(record.member_epoch),
                p.write_int32(record.previous_member_epoch),
                p.write_int8(record.state),
                _carray(record.assigned_partitions, _topic_partitions),
                _carray(record.partitions_pending_revocation, _topic_partitions),
                _TAGS_NONE,
            )
        )
    if isinstance(record, r.ConsumerGroupRegularExpressionRecord):
        return b"".join(
            (head, _strings(record.topics), p.write_int64(record.version), p.write_int64(record.timestamp), _TAGS_NONE)
        )
    raise TypeError(f"not a consumer-group record: {type(record).__name__}")


def encode_consumer_record(record: Any) -> tuple[bytes, bytes | None]:
    """(key, value) bytes; value None for a tombstone."""
    if not r.is_consumer_record(record):
        raise TypeError(f"not a consumer-group record: {type(record).__name__}")
    key = encode_key(record)
    return key, (None if isinstance(record, r.TOMBSTONES) else _encode_value(record))


# -- reading ---------------------------------------------------------------------------------


def _read_carray(data: bytes, pos: int, read: Callable[[Any, int], tuple[T, int]]) -> tuple[tuple[T, ...], int]:
    items, pos = p.read_compact_array(data, pos, read)
    return tuple(items), pos


def _read_tags(data: bytes, pos: int) -> tuple[dict[int, bytes], int]:
    return p.read_tagged_fields(data, pos)


def _read_topic_partitions(data: Any, pos: int) -> tuple[r.TopicPartitions, int]:
    """TopicPartitions without tagged fields of its own (target assignment records)."""
    topic_id, pos = p.read_uuid(data, pos)
    parts, pos = _read_carray(data, pos, p.read_int32)
    return r.TopicPartitions(topic_id, parts), p.skip_tagged_fields(data, pos)


def _read_assigned_partitions(data: Any, pos: int) -> tuple[r.TopicPartitions, int]:
    """ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions, with AssignmentEpochs (tag 0,
    KIP-1251) when present: records written before Kafka 4.3 have none."""
    topic_id, pos = p.read_uuid(data, pos)
    parts, pos = _read_carray(data, pos, p.read_int32)
    tags, pos = _read_tags(data, pos)
    epochs = None
    if 0 in tags:
        values, at = p.read_compact_nullable_array(tags[0], 0, p.read_int32)
        _end(tags[0], at, "AssignmentEpochs")
        epochs = None if values is None else tuple(values)
    return r.TopicPartitions(topic_id, parts, epochs), pos


def _read_partition_racks(data: Any, pos: int) -> tuple[r.PartitionRacks, int]:
    partition, pos = p.read_int32(data, pos)
    racks, pos = _read_carray(data, pos, p.read_compact_string)
    return r.PartitionRacks(partition, racks), p.skip_tagged_fields(data, pos)


def _read_topic_metadata(data: Any, pos: int) -> tuple[r.TopicMetadataEntry, int]:
    topic_id, pos = p.read_uuid(data, pos)
    name, pos = p.read_compact_string(data, pos)
    num, pos = p.read_int32(data, pos)
    racks, pos = _read_carray(data, pos, _read_partition_racks)
    return r.TopicMetadataEntry(topic_id, name, num, racks), p.skip_tagged_fields(data, pos)


def _read_classic_protocol(data: Any, pos: int) -> tuple[r.ClassicProtocol, int]:
    name, pos = p.read_compact_string(data, pos)
    metadata, pos = p.read_compact_bytes(data, pos)
    return r.ClassicProtocol(name, metadata), p.skip_tagged_fields(data, pos)


def _read_classic_member_metadata(raw: bytes) -> r.ClassicMemberMetadata | None:
    marker, pos = p.read_uvarint(raw, 0)
    if marker == 0:
        return None
    session, pos = p.read_int32(raw, pos)
    protocols, pos = _read_carray(raw, pos, _read_classic_protocol)
    pos = p.skip_tagged_fields(raw, pos)
    _end(raw, pos, "ClassicMemberMetadata")
    return r.ClassicMemberMetadata(session, protocols)


def _end(data: bytes, pos: int, what: str) -> None:
    if pos != len(data):
        raise ConsumerRecordDecodeError(f"{len(data) - pos} trailing bytes after {what}")


def _decode_key(key_type: int, key: bytes) -> tuple[str, str | None]:
    kt, pos = p.read_int16(key, 0)
    if kt != key_type:
        raise ConsumerRecordDecodeError(f"key starts with type {kt}, expected {key_type}")
    group_id, pos = p.read_string(key, pos)
    second = None
    if key_type in (5, 7, 8, 16):
        second, pos = p.read_string(key, pos)
    _end(key, pos, f"key of record type {key_type}")
    return group_id, second


def decode_consumer_record(key_type: int, key: bytes, value: bytes | None) -> Any:
    """The record (or tombstone) for `key` (the whole key, int16 type included) and `value`.
    Raises ConsumerRecordDecodeError on malformed bytes, UnknownConsumerRecordVersion on a value
    version other than 0."""
    if key_type not in r.CONSUMER_KEY_TYPES:
        raise ConsumerRecordDecodeError(f"record type {key_type} is not a consumer-group record")
    try:
        group_id, second = _decode_key(key_type, key)
        if value is None:
            return _tombstone(key_type, group_id, second)
        version, pos = p.read_int16(value, 0)
        if version != VALUE_VERSION:
            raise UnknownConsumerRecordVersion(key_type, version)
        record, pos = _VALUE_READERS[key_type](value, pos, group_id, second)
        _end(value, pos, f"value of record type {key_type}")
        return record
    except DecodeError as exc:
        raise ConsumerRecordDecodeError(str(exc)) from None


def _tombstone(key_type: int, group_id: str, second: str | None) -> Any:
    if key_type == r.CONSUMER_GROUP_METADATA:
        return r.ConsumerGroupMetadataTombstone(group_id)
    if key_type == r.CONSUMER_GROUP_PARTITION_METADATA:
        return r.ConsumerGroupPartitionMetadataTombstone(group_id)
    if key_type == r.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
        return r.ConsumerGroupTargetAssignmentMetadataTombstone(group_id)
    assert second is not None
    if key_type == r.CONSUMER_GROUP_MEMBER_METADATA:
        return r.ConsumerGroupMemberMetadataTombstone(group_id, second)
    if key_type == r.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
        return r.ConsumerGroupTargetAssignmentMemberTombstone(group_id, second)
    if key_type == r.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
        return r.ConsumerGroupCurrentMemberAssignmentTombstone(group_id, second)
    return r.ConsumerGroupRegularExpressionTombstone(group_id, second)


def _v_metadata(v: bytes, pos: int, group_id: str, _: str | None) -> tuple[Any, int]:
    epoch, pos = p.read_int32(v, pos)
    tags, pos = _read_tags(v, pos)
    metadata_hash = 0
    if 0 in tags:
        if len(tags[0]) != 8:
            raise ConsumerRecordDecodeError("MetadataHash tag is not 8 bytes")
        metadata_hash = p.read_int64(tags[0], 0)[0]
    return r.ConsumerGroupMetadataRecord(group_id, epoch, metadata_hash), pos


def _v_partition_metadata(v: bytes, pos: int, group_id: str, _: str | None) -> tuple[Any, int]:
    topics, pos = _read_carray(v, pos, _read_topic_metadata)
    return r.ConsumerGroupPartitionMetadataRecord(group_id, topics), p.skip_tagged_fields(v, pos)


def _v_member_metadata(v: bytes, pos: int, group_id: str, member_id: str | None) -> tuple[Any, int]:
    assert member_id is not None
    instance_id, pos = p.read_compact_nullable_string(v, pos)
    rack_id, pos = p.read_compact_nullable_string(v, pos)
    client_id, pos = p.read_compact_string(v, pos)
    client_host, pos = p.read_compact_string(v, pos)
    names, pos = _read_carray(v, pos, p.read_compact_string)
    regex, pos = p.read_compact_nullable_string(v, pos)
    rebalance_timeout_ms, pos = p.read_int32(v, pos)
    server_assignor, pos = p.read_compact_nullable_string(v, pos)
    tags, pos = _read_tags(v, pos)
    classic = _read_classic_member_metadata(tags[0]) if 0 in tags else None
    return r.ConsumerGroupMemberMetadataRecord(
        group_id,
        member_id,
        instance_id,
        rack_id,
        client_id,
        client_host,
        names,
        regex,
        rebalance_timeout_ms,
        server_assignor,
        classic,
    ), pos


def _v_target_metadata(v: bytes, pos: int, group_id: str, _: str | None) -> tuple[Any, int]:
    epoch, pos = p.read_int32(v, pos)
    return r.ConsumerGroupTargetAssignmentMetadataRecord(group_id, epoch), p.skip_tagged_fields(v, pos)


def _v_target_member(v: bytes, pos: int, group_id: str, member_id: str | None) -> tuple[Any, int]:
    assert member_id is not None
    tps, pos = _read_carray(v, pos, _read_topic_partitions)
    return r.ConsumerGroupTargetAssignmentMemberRecord(group_id, member_id, tps), p.skip_tagged_fields(v, pos)


def _v_current_assignment(v: bytes, pos: int, group_id: str, member_id: str | None) -> tuple[Any, int]:
    assert member_id is not None
    epoch, pos = p.read_int32(v, pos)
    previous, pos = p.read_int32(v, pos)
    state, pos = p.read_int8(v, pos)
    assigned, pos = _read_carray(v, pos, _read_assigned_partitions)
    pending, pos = _read_carray(v, pos, _read_assigned_partitions)
    return r.ConsumerGroupCurrentMemberAssignmentRecord(
        group_id, member_id, epoch, previous, state, assigned, pending
    ), p.skip_tagged_fields(v, pos)


def _v_regex(v: bytes, pos: int, group_id: str, regex: str | None) -> tuple[Any, int]:
    assert regex is not None
    topics, pos = _read_carray(v, pos, p.read_compact_string)
    version, pos = p.read_int64(v, pos)
    timestamp, pos = p.read_int64(v, pos)
    return r.ConsumerGroupRegularExpressionRecord(group_id, regex, topics, version, timestamp), p.skip_tagged_fields(
        v, pos
    )


_VALUE_READERS: dict[int, Callable[[bytes, int, str, str | None], tuple[Any, int]]] = {
    r.CONSUMER_GROUP_METADATA: _v_metadata,
    r.CONSUMER_GROUP_PARTITION_METADATA: _v_partition_metadata,
    r.CONSUMER_GROUP_MEMBER_METADATA: _v_member_metadata,
    r.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: _v_target_metadata,
    r.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: _v_target_member,
    r.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: _v_current_assignment,
    r.CONSUMER_GROUP_REGULAR_EXPRESSION: _v_regex,
}

__all__ = [
    "encode_consumer_record",
    "decode_consumer_record",
    "encode_key",
    "ConsumerRecordDecodeError",
    "UnknownConsumerRecordVersion",
]
