"""Share-group records <-> Kafka 4.2's exact __consumer_offsets bytes (CoordinatorRecordSerde).

key = int16 record type ++ group id (++ member id for types 10, 13, 14), int16-length strings
(keys are never flexible); value = int16 version 0 ++ a flexible struct (compact strings and
arrays, every struct ending in its tagged fields, none of which these records define), or None
for a tombstone. Unknown tags are skipped when reading. A value version other than 0 raises
UnknownConsumerRecordVersion, which the __consumer_offsets dispatch turns into a skipped record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from coordinator.groups.consumer.codec import ConsumerRecordDecodeError, UnknownConsumerRecordVersion
from coordinator.groups.share import records as r
from protocol import primitives as p
from protocol.errors import DecodeError

T = TypeVar("T")
VALUE_VERSION = 0
_TAGS_NONE = b"\x00"


class ShareRecordDecodeError(ConsumerRecordDecodeError):
    """Bytes that claim a share-group record type but do not parse."""


# -- writing ---------------------------------------------------------------------------------


def _carray(items: Sequence[T], write: Callable[[T], bytes]) -> bytes:
    return p.write_compact_array(items, write)


def _topic_partitions(tp: r.TopicPartitions) -> bytes:
    return p.write_uuid(tp.topic_id) + _carray(tp.partitions, p.write_int32) + _TAGS_NONE


def _partitions_info(t: r.TopicPartitionsInfo) -> bytes:
    return b"".join(
        (
            p.write_uuid(t.topic_id),
            p.write_compact_string(t.topic_name),
            _carray(t.partitions, p.write_int32),
            _TAGS_NONE,
        )
    )


def _topic_info(t: r.TopicInfo) -> bytes:
    return p.write_uuid(t.topic_id) + p.write_compact_string(t.topic_name) + _TAGS_NONE


def encode_key(record: Any) -> bytes:
    """The key bytes (the compaction identity, shared by a record and its tombstone)."""
    parts = [p.write_int16(record.key_type), p.write_string(record.group_id)]
    if record.key_type in r.MEMBER_KEY_TYPES:
        parts.append(p.write_string(record.member_id))
    return b"".join(parts)


def _encode_value(record: Any) -> bytes:
    head = p.write_int16(VALUE_VERSION)
    if isinstance(record, r.ShareGroupMemberMetadataRecord):
        return b"".join(
            (
                head,
                p.write_compact_nullable_string(record.rack_id),
                p.write_compact_string(record.client_id),
                p.write_compact_string(record.client_host),
                _carray(record.subscribed_topic_names, p.write_compact_string),
                _TAGS_NONE,
            )
        )
    if isinstance(record, r.ShareGroupMetadataRecord):
        return head + p.write_int32(record.epoch) + p.write_int64(record.metadata_hash) + _TAGS_NONE
    if isinstance(record, r.ShareGroupTargetAssignmentMetadataRecord):
        return head + p.write_int32(record.assignment_epoch) + _TAGS_NONE
    if isinstance(record, r.ShareGroupTargetAssignmentMemberRecord):
        return head + _carray(record.topic_partitions, _topic_partitions) + _TAGS_NONE
    if isinstance(record, r.ShareGroupCurrentMemberAssignmentRecord):
        return b"".join(
            (
                head,
                p.write_int32(record.member_epoch),
                p.write_int32(record.previous_member_epoch),
                p.write_int8(record.state),
                _carray(record.assigned_partitions, _topic_partitions),
                _TAGS_NONE,
            )
        )
    if isinstance(record, r.ShareGroupStatePartitionMetadataRecord):
        return b"".join(
            (
                head,
                _carray(record.initializing_topics, _partitions_info),
                _carray(record.initialized_topics, _partitions_info),
                _carray(record.deleting_topics, _topic_info),
                _TAGS_NONE,
            )
        )
    raise TypeError(f"not a share-group record: {type(record).__name__}")


def encode_share_record(record: Any) -> tuple[bytes, bytes | None]:
    """(key, value) bytes; value None for a tombstone."""
    if not r.is_share_record(record):
        raise TypeError(f"not a share-group record: {type(record).__name__}")
    return encode_key(record), (None if isinstance(record, r.TOMBSTONES) else _encode_value(record))


# -- reading ---------------------------------------------------------------------------------


def _read_carray(data: Any, pos: int, read: Callable[[Any, int], tuple[T, int]]) -> tuple[tuple[T, ...], int]:
    items, pos = p.read_compact_array(data, pos, read)
    return tuple(items), pos


def _read_topic_partitions(data: Any, pos: int) -> tuple[r.TopicPartitions, int]:
    topic_id, pos = p.read_uuid(data, pos)
    parts, pos = _read_carray(data, pos, p.read_int32)
    return r.TopicPartitions(topic_id, parts), p.skip_tagged_fields(data, pos)


def _read_partitions_info(data: Any, pos: int) -> tuple[r.TopicPartitionsInfo, int]:
    topic_id, pos = p.read_uuid(data, pos)
    name, pos = p.read_compact_string(data, pos)
    parts, pos = _read_carray(data, pos, p.read_int32)
    return r.TopicPartitionsInfo(topic_id, name, parts), p.skip_tagged_fields(data, pos)


def _read_topic_info(data: Any, pos: int) -> tuple[r.TopicInfo, int]:
    topic_id, pos = p.read_uuid(data, pos)
    name, pos = p.read_compact_string(data, pos)
    return r.TopicInfo(topic_id, name), p.skip_tagged_fields(data, pos)


def _end(data: bytes, pos: int, what: str) -> None:
    if pos != len(data):
        raise ShareRecordDecodeError(f"{len(data) - pos} trailing bytes after {what}")


def _decode_key(key_type: int, key: bytes) -> tuple[str, str | None]:
    kt, pos = p.read_int16(key, 0)
    if kt != key_type:
        raise ShareRecordDecodeError(f"key starts with type {kt}, expected {key_type}")
    group_id, pos = p.read_string(key, pos)
    member_id = None
    if key_type in r.MEMBER_KEY_TYPES:
        member_id, pos = p.read_string(key, pos)
    _end(key, pos, f"key of record type {key_type}")
    return group_id, member_id


def decode_share_record(key_type: int, key: bytes, value: bytes | None) -> Any:
    """The record (or tombstone) for `key` (the whole key, type included) and `value`. Raises
    ShareRecordDecodeError on malformed bytes, UnknownConsumerRecordVersion on a value version
    other than 0."""
    if key_type not in r.SHARE_KEY_TYPES:
        raise ShareRecordDecodeError(f"record type {key_type} is not a share-group record")
    try:
        group_id, member_id = _decode_key(key_type, key)
        if value is None:
            return _tombstone(key_type, group_id, member_id)
        version, pos = p.read_int16(value, 0)
        if version != VALUE_VERSION:
            raise UnknownConsumerRecordVersion(key_type, version)
        record, pos = _VALUE_READERS[key_type](value, pos, group_id, member_id)
        pos = p.skip_tagged_fields(value, pos)
        _end(value, pos, f"value of record type {key_type}")
        return record
    except DecodeError as exc:
        raise ShareRecordDecodeError(str(exc)) from None


def _tombstone(key_type: int, group_id: str, member_id: str | None) -> Any:
    if key_type == r.SHARE_GROUP_METADATA:
        return r.ShareGroupMetadataTombstone(group_id)
    if key_type == r.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
        return r.ShareGroupTargetAssignmentMetadataTombstone(group_id)
    if key_type == r.SHARE_GROUP_STATE_PARTITION_METADATA:
        return r.ShareGroupStatePartitionMetadataTombstone(group_id)
    assert member_id is not None
    if key_type == r.SHARE_GROUP_MEMBER_METADATA:
        return r.ShareGroupMemberMetadataTombstone(group_id, member_id)
    if key_type == r.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
        return r.ShareGroupTargetAssignmentMemberTombstone(group_id, member_id)
    return r.ShareGroupCurrentMemberAssignmentTombstone(group_id, member_id)


def _v_member(v: bytes, pos: int, group_id: str, member_id: str | None) -> tuple[Any, int]:
    assert member_id is not None
    rack_id, pos = p.read_compact_nullable_string(v, pos)
    client_id, pos = p.read_compact_string(v, pos)
    client_host, pos = p.read_compact_string(v, pos)
    names, pos = _read_carray(v, pos, p.read_compact_string)
    return r.ShareGroupMemberMetadataRecord(group_id, member_id, rack_id, client_id, client_host, names), pos


def _v_metadata(v: bytes, pos: int, group_id: str, _: str | None) -> tuple[Any, int]:
    epoch, pos = p.read_int32(v, pos)
    metadata_hash, pos = p.read_int64(v, pos)
    return r.ShareGroupMetadataRecord(group_id, epoch, metadata_hash), pos


def _v_target_metadata(v: bytes, pos: int, group_id: str, _: str | None) -> tuple[Any, int]:
    epoch, pos = p.read_int32(v, pos)
    return r.ShareGroupTargetAssignmentMetadataRecord(group_id, epoch), pos


def _v_target_member(v: bytes, pos: int, group_id: str, member_id: str | None) -> tuple[Any, int]:
    assert member_id is not None
    tps, pos = _read_carray(v, pos, _read_topic_partitions)
    return r.ShareGroupTargetAssignmentMemberRecord(group_id, member_id, tps), pos


def _v_current(v: bytes, pos: int, group_id: str, member_id: str | None) -> tuple[Any, int]:
    assert member_id is not None
    epoch, pos = p.read_int32(v, pos)
    previous, pos = p.read_int32(v, pos)
    state, pos = p.read_int8(v, pos)
    assigned, pos = _read_carray(v, pos, _read_topic_partitions)
    return r.ShareGroupCurrentMemberAssignmentRecord(group_id, member_id, epoch, previous, state, assigned), pos


def _v_state_metadata(v: bytes, pos: int, group_id: str, _: str | None) -> tuple[Any, int]:
    initializing, pos = _read_carray(v, pos, _read_partitions_info)
    initialized, pos = _read_carray(v, pos, _read_partitions_info)
    deleting, pos = _read_carray(v, pos, _read_topic_info)
    return r.ShareGroupStatePartitionMetadataRecord(group_id, initializing, initialized, deleting), pos


_VALUE_READERS: dict[int, Callable[[bytes, int, str, str | None], tuple[Any, int]]] = {
    r.SHARE_GROUP_MEMBER_METADATA: _v_member,
    r.SHARE_GROUP_METADATA: _v_metadata,
    r.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: _v_target_metadata,
    r.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: _v_target_member,
    r.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: _v_current,
    r.SHARE_GROUP_STATE_PARTITION_METADATA: _v_state_metadata,
}

__all__ = ["ShareRecordDecodeError", "decode_share_record", "encode_key", "encode_share_record"]
