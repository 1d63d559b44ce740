"""__consumer_offsets record schemas: record objects <-> Kafka's exact key/value bytes.

key = int16 record type ++ key struct (always non-flexible); value = int16 version ++ value
struct, or None for a tombstone (Kafka's CoordinatorRecordSerde). We write OffsetCommitKey type 1
with OffsetCommitValue v3 (v1 when an expire timestamp is given; v4 with its tagged TopicId when
an OffsetCommit v10 named the topic by id — Kafka 4.1+ writes v4 for every commit, we keep v3
where there is no id to carry, so logs of older clients stay byte-identical), GroupMetadataKey type 2 with
GroupMetadataValue v3 (GroupCoordinatorRecordHelpers + MetadataVersion). We read every version
Kafka ever wrote: key type 0 (LegacyOffsetCommitKey) and 1, OffsetCommitValue 0-4, GroupMetadataValue
0-4 (v4 flexible). KIP-848 consumer-group records (key types 3-8 and 16) go to
consumer/codec.py, KIP-932 share-group records (key types 10-15) to share/codec.py; the
early-access ShareGroupPartitionMetadata (type 9, gone since Kafka 4.1) is an unknown type.
Unknown key types or value versions decode to `UnknownRecord`, which replay
skips (Kafka's UnknownRecordTypeException / UnknownRecordVersionException, ignored by its loader).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from coordinator.groups import offset_encoding
from coordinator.groups.consumer import codec as consumer_codec
from coordinator.groups.consumer.records import CONSUMER_KEY_TYPES, is_consumer_record
from coordinator.groups.record_types import (
    GroupMetadataRecord,
    GroupTombstone,
    MemberSnapshot,
    OffsetCommitRecord,
    OffsetTombstone,
    RecordDecodeError,
    UnknownRecord,
    offset_commit_record,
)
from coordinator.groups.share import codec as share_codec
from coordinator.groups.share.records import SHARE_KEY_TYPES, is_share_record
from protocol import primitives as p
from protocol.errors import DecodeError
from storage.batch import native

__all__ = [
    "OffsetCommitRecord",
    "OffsetTombstone",
    "UnknownRecord",
    "RecordDecodeError",
    "encode_record",
    "encode_records",
    "decode_record",
    "encode_key",
    "OFFSET_COMMIT_KEY_TYPE",
    "LEGACY_OFFSET_COMMIT_KEY_TYPE",
    "GROUP_METADATA_KEY_TYPE",
]

LEGACY_OFFSET_COMMIT_KEY_TYPE = 0
OFFSET_COMMIT_KEY_TYPE = offset_encoding.OFFSET_COMMIT_KEY_TYPE  # 1 (defined where the commit path encodes)
GROUP_METADATA_KEY_TYPE = 2
OFFSET_COMMIT_VALUE_WITH_EXPIRY = 1  # the only version that has expireTimestamp
OFFSET_COMMIT_VALUE_VERSION = offset_encoding.OFFSET_COMMIT_VALUE_VERSION  # 3
OFFSET_COMMIT_VALUE_WITH_TOPIC_ID = 4  # flexible: TopicId is tagged field 0 (KAFKA-19141)
GROUP_METADATA_VALUE_VERSION = 3
NO_TIMESTAMP = -1  # Kafka's sentinel for "absent" int64 timestamps and leader epochs


# -- encoding --------------------------------------------------------------------------------

_I16 = struct.Struct(">h")
_V3_HEAD = struct.Struct(">hqih").pack  # OffsetCommitValue v3: version, offset, leaderEpoch, metadata length
_I64_PACK = struct.Struct(">q").pack


# The commit path's encoding (offset_encoding.py), compiled when `make native` built it.
_ENCODING = native.preferred(offset_encoding)
_offset_key = _ENCODING.offset_key


def encode_key(obj: Any) -> bytes:
    """The key bytes of a record object (compaction identity: the same key for a record and its
    tombstone)."""
    if isinstance(obj, (OffsetCommitRecord, OffsetTombstone)):
        return _offset_key(obj.group_id, obj.topic, obj.partition)
    if isinstance(obj, (GroupMetadataRecord, GroupTombstone)):
        return p.write_int16(GROUP_METADATA_KEY_TYPE) + p.write_string(obj.group_id)
    if is_consumer_record(obj):
        return consumer_codec.encode_key(obj)
    if is_share_record(obj):
        return share_codec.encode_key(obj)
    raise TypeError(f"not a __consumer_offsets record: {type(obj).__name__}")


def encode_record(obj: Any) -> tuple[bytes, bytes | None]:
    """(key, value) bytes for a GroupMetadataRecord, GroupTombstone, OffsetCommitRecord or
    OffsetTombstone, or any consumer- or share-group record; value None is a tombstone."""
    if type(obj) is OffsetCommitRecord:  # nearly every record: the commit path, kept short
        key = _offset_key(obj.group_id, obj.topic, obj.partition)
        if obj.expire_timestamp_ms is None and obj.topic_id is None:
            meta = obj.metadata.encode()
            if len(meta) <= 0x7FFF:
                return key, b"".join(
                    (
                        _V3_HEAD(OFFSET_COMMIT_VALUE_VERSION, obj.offset, obj.leader_epoch, len(meta)),
                        meta,
                        _I64_PACK(obj.commit_timestamp_ms),
                    )
                )
        return key, _encode_offset_value(obj)
    if is_consumer_record(obj):
        return consumer_codec.encode_consumer_record(obj)
    if is_share_record(obj):
        return share_codec.encode_share_record(obj)
    key = encode_key(obj)
    if isinstance(obj, OffsetCommitRecord):
        return key, _encode_offset_value(obj)
    if isinstance(obj, GroupMetadataRecord):
        return key, _encode_group_value(obj)
    return key, None


def encode_records(records: Sequence[Any]) -> list[tuple[bytes, bytes | None]]:
    """`encode_record` of each record (an op's batch, PartitionWriter's encode_all): the same
    bytes, a commit's run of OffsetCommitRecords encoded by offset_encoding.encode_records."""
    pairs: list[tuple[bytes, bytes | None]] = _ENCODING.encode_records(records, encode_record)
    return pairs


def _encode_offset_value(r: OffsetCommitRecord) -> bytes:
    # MetadataVersion.offsetCommitValueVersion: v1 only to carry a client-given expiry.
    if r.expire_timestamp_ms is not None:
        return b"".join(
            (
                p.write_int16(OFFSET_COMMIT_VALUE_WITH_EXPIRY),
                p.write_int64(r.offset),
                p.write_string(r.metadata),
                p.write_int64(r.commit_timestamp_ms),
                p.write_int64(r.expire_timestamp_ms),
            )
        )
    if r.topic_id is not None:
        return b"".join(
            (
                p.write_int16(OFFSET_COMMIT_VALUE_WITH_TOPIC_ID),
                p.write_int64(r.offset),
                p.write_int32(r.leader_epoch),
                p.write_compact_string(r.metadata),
                p.write_int64(r.commit_timestamp_ms),
                p.write_tagged_fields({0: p.write_uuid(r.topic_id)}),
            )
        )
    return b"".join(
        (
            p.write_int16(OFFSET_COMMIT_VALUE_VERSION),
            p.write_int64(r.offset),
            p.write_int32(r.leader_epoch),
            p.write_string(r.metadata),
            p.write_int64(r.commit_timestamp_ms),
        )
    )


def _encode_member_v3(m: MemberSnapshot) -> bytes:
    return b"".join(
        (
            p.write_string(m.member_id),
            p.write_nullable_string(m.group_instance_id),
            p.write_string(m.client_id),
            p.write_string(m.client_host),
            p.write_int32(m.rebalance_timeout_ms),
            p.write_int32(m.session_timeout_ms),
            p.write_bytes(m.subscription),
            p.write_bytes(m.assignment),
        )
    )


def _encode_group_value(g: GroupMetadataRecord) -> bytes:
    ts = NO_TIMESTAMP if g.current_state_timestamp_ms is None else g.current_state_timestamp_ms
    return b"".join(
        (
            p.write_int16(GROUP_METADATA_VALUE_VERSION),
            p.write_string(g.protocol_type),
            p.write_int32(g.generation_id),
            p.write_nullable_string(g.protocol_name),
            p.write_nullable_string(g.leader),
            p.write_int64(ts),
            p.write_array(g.members, _encode_member_v3),
        )
    )


# -- decoding --------------------------------------------------------------------------------


_FAST_V3 = struct.Struct(">qih")  # OffsetCommitValue v3: offset, leaderEpoch, metadata length
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_V3_PREFIX = b"\x00\x03"


def decode_record(key: bytes, value: bytes | None) -> Any:
    """Record object for (key, value) bytes as any Kafka version wrote them.
    Raises RecordDecodeError for malformed bytes of a known type."""
    if value is not None and key[:2] == b"\x00\x01" and value[:2] == _V3_PREFIX:
        fast = _decode_offset_commit_v3(key, value)
        if fast is not None:
            return fast
    try:
        key_type, pos = p.read_int16(key, 0)
        if key_type in (LEGACY_OFFSET_COMMIT_KEY_TYPE, OFFSET_COMMIT_KEY_TYPE):
            group, pos = p.read_string(key, pos)
            topic, pos = p.read_string(key, pos)
            partition, pos = p.read_int32(key, pos)
            _end(key, pos, "OffsetCommitKey")
            if value is None:
                return OffsetTombstone(group, topic, partition)
            return _decode_offset_value(group, topic, partition, value)
        if key_type == GROUP_METADATA_KEY_TYPE:
            group, pos = p.read_string(key, pos)
            _end(key, pos, "GroupMetadataKey")
            if value is None:
                return GroupTombstone(group)
            return _decode_group_value(group, value)
        if key_type in CONSUMER_KEY_TYPES:
            return consumer_codec.decode_consumer_record(key_type, key, value)
        if key_type in SHARE_KEY_TYPES:
            return share_codec.decode_share_record(key_type, key, value)
    except consumer_codec.UnknownConsumerRecordVersion as exc:
        return UnknownRecord(exc.key_type, exc.version)
    except consumer_codec.ConsumerRecordDecodeError as exc:
        raise RecordDecodeError(str(exc)) from exc
    except DecodeError as exc:
        raise RecordDecodeError(str(exc)) from exc
    return UnknownRecord(key_type)


_KEY_NAMES: dict[bytes, tuple[str, str]] = {}  # key minus its partition -> (group, topic)


def _decode_offset_commit_v3(key: bytes, value: bytes) -> OffsetCommitRecord | None:
    """The load hot path (what we write for nearly every record), on `struct` directly; same
    checks as the primitives. None means "take the general path", which reports the error.
    A log repeats each (group, topic) for many partitions and commits: their decoded names are
    cached by the key bytes before the partition (validated when first seen)."""
    try:
        names = _KEY_NAMES.get(key[:-4])
        if names is None:
            (glen,) = _I16.unpack_from(key, 2)
            pos = 4 + glen
            (tlen,) = _I16.unpack_from(key, pos)
            if glen < 0 or tlen < 0 or pos + 2 + tlen + 4 != len(key):
                return None
            names = (key[4:pos].decode(), key[pos + 2 : pos + 2 + tlen].decode())
            if len(_KEY_NAMES) >= 65536:
                _KEY_NAMES.clear()
            _KEY_NAMES[key[:-4]] = names
        (partition,) = _I32.unpack_from(key, len(key) - 4)
        offset, epoch, mlen = _FAST_V3.unpack_from(value, 2)
        end = 16 + mlen
        if mlen < 0 or end + 8 != len(value):
            return None
        metadata = value[16:end].decode() if mlen else ""
        (commit_ts,) = _I64.unpack_from(value, end)
    except (struct.error, UnicodeDecodeError):
        return None
    return offset_commit_record(names[0], names[1], partition, offset, epoch, metadata, commit_ts, None)


def _end(buf: bytes, pos: int, what: str) -> None:
    if pos != len(buf):
        raise RecordDecodeError(f"{what}: {len(buf) - pos} trailing bytes")


def _decode_offset_value(group: str, topic: str, partition: int, value: bytes) -> Any:
    version, pos = p.read_int16(value, 0)
    if not 0 <= version <= 4:
        return UnknownRecord(OFFSET_COMMIT_KEY_TYPE, version)
    offset, pos = p.read_int64(value, pos)
    leader_epoch = NO_TIMESTAMP
    if version >= 3:
        leader_epoch, pos = p.read_int32(value, pos)
    if version >= 4:
        metadata, pos = p.read_compact_string(value, pos)
    else:
        metadata, pos = p.read_string(value, pos)
    commit_ts, pos = p.read_int64(value, pos)
    expire_ts: int | None = None
    if version == 1:
        expire_ts, pos = p.read_int64(value, pos)
        if expire_ts == NO_TIMESTAMP:
            expire_ts = None
    topic_id = None
    if version >= 4:
        tags, pos = p.read_tagged_fields(value, pos)
        if 0 in tags:  # TopicId; ZERO_UUID (Kafka's default) means none
            if len(tags[0]) != 16:
                raise RecordDecodeError("OffsetCommitValue TopicId tag is not 16 bytes")
            found = p.read_uuid(tags[0], 0)[0]
            topic_id = found if found.int else None
    _end(value, pos, f"OffsetCommitValue v{version}")
    return OffsetCommitRecord(group, topic, partition, offset, leader_epoch, metadata, commit_ts, expire_ts, topic_id)


def _decode_group_value(group: str, value: bytes) -> Any:
    version, pos = p.read_int16(value, 0)
    if not 0 <= version <= 4:
        return UnknownRecord(GROUP_METADATA_KEY_TYPE, version)
    flexible = version >= 4
    rd_str = p.read_compact_string if flexible else p.read_string
    rd_nstr = p.read_compact_nullable_string if flexible else p.read_nullable_string
    rd_bytes = p.read_compact_bytes if flexible else p.read_bytes

    def read_member(data: bytes | bytearray | memoryview, at: int) -> tuple[MemberSnapshot, int]:
        member_id, at = rd_str(data, at)
        instance_id = None
        if version >= 3:
            instance_id, at = rd_nstr(data, at)
        client_id, at = rd_str(data, at)
        client_host, at = rd_str(data, at)
        rebalance_ms = None
        if version >= 1:
            rebalance_ms, at = p.read_int32(data, at)
        session_ms, at = p.read_int32(data, at)
        subscription, at = rd_bytes(data, at)
        assignment, at = rd_bytes(data, at)
        if flexible:
            at = p.skip_tagged_fields(data, at)
        # v0 had no rebalance timeout; Kafka's old GroupMetadataManager used the session timeout.
        return MemberSnapshot(
            member_id,
            instance_id,
            client_id,
            client_host,
            session_ms if rebalance_ms is None else rebalance_ms,
            session_ms,
            subscription,
            assignment,
        ), at

    protocol_type, pos = rd_str(value, pos)
    generation, pos = p.read_int32(value, pos)
    protocol, pos = rd_nstr(value, pos)
    leader, pos = rd_nstr(value, pos)
    state_ts: int | None = None
    if version >= 2:
        state_ts, pos = p.read_int64(value, pos)
        if state_ts == NO_TIMESTAMP:
            state_ts = None
    read_array = p.read_compact_array if flexible else p.read_array
    members, pos = read_array(value, pos, read_member)
    if flexible:
        pos = p.skip_tagged_fields(value, pos)
    _end(value, pos, f"GroupMetadataValue v{version}")
    return GroupMetadataRecord(group, protocol_type, generation, protocol, leader, state_ts, tuple(members))
