"""__share_group_state records: objects <-> Kafka 4.2's exact bytes (ShareCoordinatorRecordSerde).

key = int16 record type (0 ShareSnapshot, 1 ShareUpdate) ++ the key struct, never flexible:
GroupId string (int16 length), TopicId uuid, Partition int32. value = int16 version (0) ++ the
flexible value struct, or null for a tombstone (Kafka writes only ShareSnapshot tombstones):
ShareSnapshotValue: SnapshotEpoch int32, StateEpoch int32, LeaderEpoch int32, StartOffset int64,
CreateTimestamp int64, WriteTimestamp int64, StateBatches compact [FirstOffset int64, LastOffset
int64, DeliveryState int8, DeliveryCount int16, tags], tags; ShareUpdateValue: SnapshotEpoch
int32, LeaderEpoch int32, StartOffset int64, StateBatches, tags. KIP-1226 (4.2) adds
DeliveryCompleteCount int32 as tagged field 0 (default -1, written only when not -1) to both.
Verified against Kafka's source (a 4.2.0-SNAPSHOT tree of 2025-10): every field above except
DeliveryCompleteCount, which that tree predates; its tag, type and default come from Kafka 4.2's
tests and KIP-1226 and could not be checked against the 4.2 JSON. Unknown record types and value
versions decode to `UnknownShareRecord`, which replay skips as Kafka's loader does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from coordinator.share.persister import UNINITIALIZED_DELIVERY_COMPLETE_COUNT, SharePartitionKey, StateBatch
from protocol import primitives as p
from protocol.errors import DecodeError

SNAPSHOT_TYPE = 0  # ShareSnapshotKey/Value (CoordinatorRecordType.SHARE_SNAPSHOT)
UPDATE_TYPE = 1  # ShareUpdateKey/Value (CoordinatorRecordType.SHARE_UPDATE)
VALUE_VERSION = 0
_DCC_TAG = 0  # DeliveryCompleteCount (KIP-1226)


@dataclass(frozen=True, slots=True)
class ShareSnapshot:
    """A share-partition's whole state (ShareSnapshotValue)."""

    key: SharePartitionKey
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    delivery_complete_count: int
    batches: tuple[StateBatch, ...]


@dataclass(frozen=True, slots=True)
class ShareUpdate:
    """A change to the state of the snapshot `snapshot_epoch` (ShareUpdateValue); start offset
    -1: unchanged."""

    key: SharePartitionKey
    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int
    batches: tuple[StateBatch, ...]


@dataclass(frozen=True, slots=True)
class ShareTombstone:
    """The key with a null value: the state is deleted (record type 0; a type-1 tombstone, which
    Kafka never writes, is read but changes nothing)."""

    key: SharePartitionKey
    record_type: int = SNAPSHOT_TYPE


@dataclass(frozen=True, slots=True)
class UnknownShareRecord:
    """A record type or value version this coordinator does not know: skipped at load."""

    record_type: int
    version: int = -1


ShareRecord = ShareSnapshot | ShareUpdate | ShareTombstone


class ShareRecordDecodeError(ValueError):
    """Bytes that claim a known record type and version but do not parse."""


# -- writing ---------------------------------------------------------------------------------


def encode_key(record_type: int, key: SharePartitionKey) -> bytes:
    return b"".join(
        (
            p.write_int16(record_type),
            p.write_string(key.group_id),
            p.write_uuid(key.topic_id),
            p.write_int32(key.partition),
        )
    )


def _batch(b: StateBatch) -> bytes:
    return struct.pack(">qqbhB", b.first_offset, b.last_offset, b.delivery_state, b.delivery_count, 0)


def _tail(batches: tuple[StateBatch, ...], delivery_complete_count: int) -> bytes:
    tags = {}
    if delivery_complete_count != UNINITIALIZED_DELIVERY_COMPLETE_COUNT:
        tags[_DCC_TAG] = p.write_int32(delivery_complete_count)
    return p.write_compact_array(batches, _batch) + p.write_tagged_fields(tags)


def encode_value(record: ShareSnapshot | ShareUpdate) -> bytes:
    if isinstance(record, ShareSnapshot):
        head = struct.pack(
            ">hiiiqqq",
            VALUE_VERSION,
            record.snapshot_epoch,
            record.state_epoch,
            record.leader_epoch,
            record.start_offset,
            record.create_timestamp,
            record.write_timestamp,
        )
    else:
        head = struct.pack(">hiiq", VALUE_VERSION, record.snapshot_epoch, record.leader_epoch, record.start_offset)
    return head + _tail(record.batches, record.delivery_complete_count)


def encode_record(record: Any) -> tuple[bytes, bytes | None]:
    if isinstance(record, ShareSnapshot):
        return encode_key(SNAPSHOT_TYPE, record.key), encode_value(record)
    if isinstance(record, ShareUpdate):
        return encode_key(UPDATE_TYPE, record.key), encode_value(record)
    if isinstance(record, ShareTombstone):
        return encode_key(record.record_type, record.key), None
    raise TypeError(f"not a __share_group_state record: {type(record).__name__}")


# -- reading ---------------------------------------------------------------------------------


def decode_record(key: bytes, value: bytes | None) -> ShareRecord | UnknownShareRecord:
    try:
        record_type, pos = p.read_int16(key, 0)
        if record_type not in (SNAPSHOT_TYPE, UPDATE_TYPE):
            return UnknownShareRecord(record_type)
        group_id, pos = p.read_string(key, pos)
        topic_id, pos = p.read_uuid(key, pos)
        partition, pos = p.read_int32(key, pos)
        if pos != len(key):
            raise ShareRecordDecodeError(f"{len(key) - pos} trailing bytes after the key of record type {record_type}")
        spk = SharePartitionKey(group_id, topic_id, partition)
        if value is None:
            return ShareTombstone(spk, record_type)
        version, pos = p.read_int16(value, 0)
        if version != VALUE_VERSION:
            return UnknownShareRecord(record_type, version)
        if record_type == SNAPSHOT_TYPE:
            snap, state, leader, start, created, written = struct.unpack_from(">iiiqqq", value, pos)
            batches, dcc, pos = _read_tail(value, pos + 36)
            record: ShareRecord = ShareSnapshot(spk, snap, state, leader, start, created, written, dcc, batches)
        else:
            snap, leader, start = struct.unpack_from(">iiq", value, pos)
            batches, dcc, pos = _read_tail(value, pos + 16)
            record = ShareUpdate(spk, snap, leader, start, dcc, batches)
        if pos != len(value):
            raise ShareRecordDecodeError(
                f"{len(value) - pos} trailing bytes after the value of record type {record_type}"
            )
        return record
    except ShareRecordDecodeError:
        raise
    except (DecodeError, struct.error, UnicodeDecodeError, ValueError) as exc:
        raise ShareRecordDecodeError(str(exc)) from None


def _read_batch(data: bytes | bytearray | memoryview, pos: int) -> tuple[StateBatch, int]:
    first, last, state, count = struct.unpack_from(">qqbh", data, pos)
    return StateBatch(first, last, state, count), p.skip_tagged_fields(data, pos + 19)


def _read_tail(data: bytes, pos: int) -> tuple[tuple[StateBatch, ...], int, int]:
    batches, pos = p.read_compact_array(data, pos, _read_batch)
    tags, pos = p.read_tagged_fields(data, pos)
    dcc = UNINITIALIZED_DELIVERY_COMPLETE_COUNT
    if _DCC_TAG in tags:
        if len(tags[_DCC_TAG]) != 4:
            raise ShareRecordDecodeError("DeliveryCompleteCount tag is not 4 bytes")
        dcc = p.read_int32(tags[_DCC_TAG], 0)[0]
    return tuple(batches), dcc, pos
