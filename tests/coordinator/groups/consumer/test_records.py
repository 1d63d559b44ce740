"""Consumer-group records: golden bytes built by hand from Kafka's ConsumerGroup*.json schemas,
round trips, malformed input, and the dump JSON."""

from __future__ import annotations

import struct
import uuid

import pytest

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.codec import (
    ConsumerRecordDecodeError,
    UnknownConsumerRecordVersion,
    decode_consumer_record,
    encode_consumer_record,
)
from coordinator.groups.consumer.record_json import kafka_uuid, to_json, to_json_text

T1 = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
T1_BYTES = bytes(range(16))


def s16(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def cs(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw) + 1]) + raw


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


GOLDEN = [
    (r.ConsumerGroupMetadataRecord("grp", 10), b"\x00\x03" + s16("grp"), b"\x00\x00" + i32(10) + b"\x00"),
    # MetadataHash is tag 0 (int64), written only when not 0.
    (
        r.ConsumerGroupMetadataRecord("grp", 10, 0x0102030405060708),
        b"\x00\x03" + s16("grp"),
        b"\x00\x00" + i32(10) + b"\x01\x00\x08" + i64(0x0102030405060708),
    ),
    (r.ConsumerGroupMetadataTombstone("grp"), b"\x00\x03" + s16("grp"), None),
    (
        r.ConsumerGroupPartitionMetadataRecord("g", (r.TopicMetadataEntry(T1, "foo", 3),)),
        b"\x00\x04" + s16("g"),
        b"\x00\x00" + b"\x02" + T1_BYTES + cs("foo") + i32(3) + b"\x01" + b"\x00" + b"\x00",
    ),
    (
        r.ConsumerGroupPartitionMetadataRecord(
            "g", (r.TopicMetadataEntry(T1, "foo", 1, (r.PartitionRacks(0, ("ra", "rb")),)),)
        ),
        b"\x00\x04" + s16("g"),
        b"\x00\x00\x02"
        + T1_BYTES
        + cs("foo")
        + i32(1)
        + b"\x02"
        + i32(0)
        + b"\x03"
        + cs("ra")
        + cs("rb")
        + b"\x00"
        + b"\x00"
        + b"\x00",
    ),
    (
        r.ConsumerGroupMemberMetadataRecord("g", "m", None, "r1", "c", "/h", ("a", "b"), None, 5000, "range"),
        b"\x00\x05" + s16("g") + s16("m"),
        b"\x00\x00"
        + b"\x00"
        + cs("r1")
        + cs("c")
        + cs("/h")
        + b"\x03"
        + cs("a")
        + cs("b")
        + b"\x00"
        + i32(5000)
        + cs("range")
        + b"\x00",
    ),
    (
        r.ConsumerGroupMemberMetadataRecord("g", "m", "i", None, "c", "/h", (), "t.*", -1, None),
        b"\x00\x05" + s16("g") + s16("m"),
        b"\x00\x00" + cs("i") + b"\x00" + cs("c") + cs("/h") + b"\x01" + cs("t.*") + i32(-1) + b"\x00" + b"\x00",
    ),
    # ClassicMemberMetadata: tag 0, a nullable struct (uvarint 1 marker, then the struct).
    (
        r.ConsumerGroupMemberMetadataRecord(
            "g",
            "m",
            None,
            None,
            "c",
            "/h",
            ("a",),
            "",
            300,
            None,
            r.ClassicMemberMetadata(45000, (r.ClassicProtocol("range", b"\x07\x08"),)),
        ),
        b"\x00\x05" + s16("g") + s16("m"),
        b"\x00\x00"
        + b"\x00"
        + b"\x00"
        + cs("c")
        + cs("/h")
        + b"\x02"
        + cs("a")
        + b"\x01"
        + i32(300)
        + b"\x00"
        + b"\x01\x00"
        + bytes([1 + 4 + 1 + 6 + 3 + 1 + 1])
        + b"\x01"
        + i32(45000)
        + b"\x02"
        + cs("range")
        + b"\x03\x07\x08"
        + b"\x00"
        + b"\x00",
    ),
    (r.ConsumerGroupMemberMetadataTombstone("g", "m"), b"\x00\x05" + s16("g") + s16("m"), None),
    (r.ConsumerGroupTargetAssignmentMetadataRecord("g", 7), b"\x00\x06" + s16("g"), b"\x00\x00" + i32(7) + b"\x00"),
    (r.ConsumerGroupTargetAssignmentMetadataTombstone("g"), b"\x00\x06" + s16("g"), None),
    (
        r.ConsumerGroupTargetAssignmentMemberRecord("g", "m", (r.TopicPartitions(T1, (0, 1)),)),
        b"\x00\x07" + s16("g") + s16("m"),
        b"\x00\x00" + b"\x02" + T1_BYTES + b"\x03" + i32(0) + i32(1) + b"\x00" + b"\x00",
    ),
    (r.ConsumerGroupTargetAssignmentMemberTombstone("g", "m"), b"\x00\x07" + s16("g") + s16("m"), None),
    (
        r.ConsumerGroupCurrentMemberAssignmentRecord(
            "g", "m", 11, 10, 1, (r.TopicPartitions(T1, (2,)),), (r.TopicPartitions(T1, (3, 4)),)
        ),
        b"\x00\x08" + s16("g") + s16("m"),
        b"\x00\x00"
        + i32(11)
        + i32(10)
        + b"\x01"
        + b"\x02"
        + T1_BYTES
        + b"\x02"
        + i32(2)
        + b"\x00"
        + b"\x02"
        + T1_BYTES
        + b"\x03"
        + i32(3)
        + i32(4)
        + b"\x00"
        + b"\x00",
    ),
    (r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m"), b"\x00\x08" + s16("g") + s16("m"), None),
    (
        r.ConsumerGroupRegularExpressionRecord("g", "t.*", ("t1", "t2"), 5, 1000),
        b"\x00\x10" + s16("g") + s16("t.*"),
        b"\x00\x00" + b"\x03" + cs("t1") + cs("t2") + i64(5) + i64(1000) + b"\x00",
    ),
    (r.ConsumerGroupRegularExpressionTombstone("g", "t.*"), b"\x00\x10" + s16("g") + s16("t.*"), None),
]


@pytest.mark.parametrize(
    "record,key,value", GOLDEN, ids=lambda x: None if isinstance(x, bytes) or x is None else type(x).__name__
)
def test_golden_bytes_and_round_trip(record: object, key: bytes, value: bytes | None) -> None:
    assert encode_consumer_record(record) == (key, value)
    assert decode_consumer_record(record.key_type, key, value) == record  # type: ignore[attr-defined]


def test_unknown_tagged_fields_are_skipped() -> None:
    # A Kafka 4.3 value: CreationTimeMs (tag 1) in the group metadata, KIP-1251 AssignmentEpochs
    # (tag 0) in a TopicPartitions entry.
    value = b"\x00\x00" + i32(3) + b"\x01\x01\x08" + i64(123)
    assert decode_consumer_record(3, b"\x00\x03" + s16("g"), value) == r.ConsumerGroupMetadataRecord("g", 3)
    tp_with_epochs = T1_BYTES + b"\x02" + i32(5) + b"\x01\x00\x06\x02" + i32(9) + b"\x00"
    value = b"\x00\x00" + b"\x02" + tp_with_epochs + b"\x00"
    decoded = decode_consumer_record(7, b"\x00\x07" + s16("g") + s16("m"), value)
    assert decoded == r.ConsumerGroupTargetAssignmentMemberRecord("g", "m", (r.TopicPartitions(T1, (5,)),))


@pytest.mark.parametrize(
    "key_type,key,value,error",
    [
        (3, b"\x00\x03" + s16("g"), b"\x00\x01" + i32(1) + b"\x00", UnknownConsumerRecordVersion),
        (3, b"\x00\x03" + s16("g"), b"\x00\x00" + i32(1) + b"\x00\x00", ConsumerRecordDecodeError),  # trailing
        (3, b"\x00\x03" + s16("g"), b"\x00\x00" + b"\x00\x01", ConsumerRecordDecodeError),  # truncated
        (3, b"\x00\x03" + s16("g") + b"x", None, ConsumerRecordDecodeError),  # key trailing bytes
        (5, b"\x00\x03" + s16("g"), None, ConsumerRecordDecodeError),  # type mismatch
        (5, b"\x00\x05" + s16("g"), None, ConsumerRecordDecodeError),  # member id missing
        (2, b"\x00\x02" + s16("g"), None, ConsumerRecordDecodeError),  # not a consumer-group type
        (7, b"\x00\x07" + s16("g") + s16("m"), b"\x00\x00\x7f", ConsumerRecordDecodeError),  # count past the end
        (3, b"\x00\x03" + s16("g"), b"\x00\x00" + i32(1) + b"\x01\x00\x04" + i32(1), ConsumerRecordDecodeError),
    ],
)
def test_malformed_bytes(key_type: int, key: bytes, value: bytes | None, error: type) -> None:
    with pytest.raises(error):
        decode_consumer_record(key_type, key, value)


def test_unknown_version_carries_type_and_version() -> None:
    with pytest.raises(UnknownConsumerRecordVersion) as info:
        decode_consumer_record(8, b"\x00\x08" + s16("g") + s16("m"), b"\x00\x04")
    assert (info.value.key_type, info.value.version) == (8, 4)


def test_encode_rejects_foreign_objects() -> None:
    with pytest.raises(TypeError):
        encode_consumer_record(object())


def test_kafka_uuid_text() -> None:
    assert kafka_uuid(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert kafka_uuid(T1) == "AAECAwQFBgcICQoLDA0ODw"


def test_dump_json_like_kafka() -> None:
    key, value = to_json_text(
        r.ConsumerGroupMemberMetadataRecord("g", "m", None, "r1", "c", "/h", ("a", "b"), None, 5000, "range")
    )
    assert key == '{"type":"5","data":{"groupId":"g","memberId":"m"}}'
    assert value == (
        '{"version":"0","data":{"instanceId":null,"rackId":"r1","clientId":"c","clientHost":"/h",'
        '"subscribedTopicNames":["a","b"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":5000,'
        '"serverAssignor":"range"}}'
    )
    assert to_json_text(r.ConsumerGroupMetadataRecord("g", 4)) == (
        '{"type":"3","data":{"groupId":"g"}}',
        '{"version":"0","data":{"epoch":4}}',
    )
    assert to_json_text(r.ConsumerGroupMetadataRecord("g", 4, -5))[1] == (
        '{"version":"0","data":{"epoch":4,"metadataHash":-5}}'
    )
    assert to_json_text(
        r.ConsumerGroupCurrentMemberAssignmentRecord("g", "m", 2, 1, 0, (r.TopicPartitions(T1, (0,)),), ())
    ) == (
        '{"type":"8","data":{"groupId":"g","memberId":"m"}}',
        '{"version":"0","data":{"memberEpoch":2,"previousMemberEpoch":1,"state":0,"assignedPartitions":'
        '[{"topicId":"AAECAwQFBgcICQoLDA0ODw","partitions":[0]}],"partitionsPendingRevocation":[]}}',
    )
    assert to_json_text(r.ConsumerGroupRegularExpressionTombstone("g", "x.*")) == (
        '{"type":"16","data":{"groupId":"g","regularExpression":"x.*"}}',
        "<DELETE>",
    )
    key_json, value_json = to_json(
        r.ConsumerGroupMemberMetadataRecord(
            "g",
            "m",
            None,
            None,
            "c",
            "/h",
            (),
            "",
            1,
            None,
            r.ClassicMemberMetadata(10, (r.ClassicProtocol("p", b"\x01"),)),
        )
    )
    assert value_json["data"]["classicMemberMetadata"] == {  # type: ignore[index]
        "sessionTimeoutMs": 10,
        "supportedProtocols": [{"name": "p", "metadata": "AQ=="}],
    }
    assert to_json(r.ConsumerGroupTargetAssignmentMetadataRecord("g", 3))[1] == {
        "version": "0",
        "data": {"assignmentEpoch": 3},
    }
