"""Share-group records in Kafka 4.2's exact bytes (golden bytes written out from the
ShareGroup*Key/Value.json schemas), round trips through the __consumer_offsets codec, tombstones,
versions and types Kafka's loader skips, malformed bytes, and the dump JSON."""

from __future__ import annotations

import uuid

import pytest

from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.record_json import decode
from coordinator.groups.records import RecordDecodeError, UnknownRecord, decode_record, encode_record
from coordinator.groups.share import records as r

U1, U2 = uuid.UUID(int=1), uuid.UUID(int=2)
UUID1 = "00000000000000000000000000000001"
UUID2 = "00000000000000000000000000000002"
GRP = "0003677270"  # "grp"
M = "00016d"  # "m"

GOLDEN = [
    (
        r.ShareGroupMemberMetadataRecord("grp", "m", "r", "cid", "/h", ("a", "b")),
        "000a" + GRP + M,
        "0000" + "0272" + "04636964" + "032f68" + "03" + "0261" + "0262" + "00",
    ),
    (
        r.ShareGroupMemberMetadataRecord("grp", "m", None, "", "", ()),
        "000a" + GRP + M,
        "0000" + "00" + "01" + "01" + "01" + "00",
    ),
    (r.ShareGroupMetadataRecord("grp", 7, -2), "000b" + GRP, "0000" + "00000007" + "fffffffffffffffe" + "00"),
    (r.ShareGroupTargetAssignmentMetadataRecord("grp", 3), "000c" + GRP, "0000" + "00000003" + "00"),
    (
        r.ShareGroupTargetAssignmentMemberRecord("grp", "m", (TopicPartitions(U1, (0, 2)),)),
        "000d" + GRP + M,
        "0000" + "02" + UUID1 + "03" + "00000000" + "00000002" + "00" + "00",
    ),
    (
        r.ShareGroupCurrentMemberAssignmentRecord("grp", "m", 5, 4, 0, (TopicPartitions(U1, (1,)),)),
        "000e" + GRP + M,
        "0000" + "00000005" + "00000004" + "00" + "02" + UUID1 + "02" + "00000001" + "00" + "00",
    ),
    (
        r.ShareGroupStatePartitionMetadataRecord(
            "grp", (r.TopicPartitionsInfo(U1, "t", (0,)),), (), (r.TopicInfo(U2, "d"),)
        ),
        "000f" + GRP,
        "0000" + "02" + UUID1 + "0274" + "02" + "00000000" + "00" + "01" + "02" + UUID2 + "0264" + "00" + "00",
    ),
]

TOMBSTONES = [
    (r.ShareGroupMemberMetadataTombstone("grp", "m"), "000a" + GRP + M),
    (r.ShareGroupMetadataTombstone("grp"), "000b" + GRP),
    (r.ShareGroupTargetAssignmentMetadataTombstone("grp"), "000c" + GRP),
    (r.ShareGroupTargetAssignmentMemberTombstone("grp", "m"), "000d" + GRP + M),
    (r.ShareGroupCurrentMemberAssignmentTombstone("grp", "m"), "000e" + GRP + M),
    (r.ShareGroupStatePartitionMetadataTombstone("grp"), "000f" + GRP),
]


@pytest.mark.parametrize(("record", "key", "value"), GOLDEN)
def test_records_encode_to_kafkas_bytes_and_back(record, key, value):
    assert encode_record(record) == (bytes.fromhex(key), bytes.fromhex(value))
    assert decode_record(bytes.fromhex(key), bytes.fromhex(value)) == record


@pytest.mark.parametrize(("record", "key"), TOMBSTONES)
def test_tombstones_share_their_records_key(record, key):
    assert encode_record(record) == (bytes.fromhex(key), None)
    assert decode_record(bytes.fromhex(key), None) == record


def test_unknown_tags_are_skipped_and_other_versions_and_old_types_are_skipped_records():
    key = bytes.fromhex("000c" + GRP)
    tagged = bytes.fromhex("0000" + "00000003" + "01" + "05" + "02" + "abcd")  # tag 5, two bytes
    assert decode_record(key, tagged) == r.ShareGroupTargetAssignmentMetadataRecord("grp", 3)
    assert decode_record(key, bytes.fromhex("0001" + "00000003" + "00")) == UnknownRecord(12, 1)
    # Kafka 4.0's early-access ShareGroupPartitionMetadata (type 9) is gone: skipped, like any unknown type.
    assert decode_record(bytes.fromhex("0009" + GRP), bytes.fromhex("000000")) == UnknownRecord(9)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("000b" + GRP, "0000" + "00000007"),  # truncated: no metadata hash (Kafka 4.0's v0 had none)
        ("000b" + GRP, "0000" + "00000007" + "0000000000000000" + "00" + "ff"),  # trailing byte
        ("000a" + GRP, "0000" + "00" + "01" + "01" + "01" + "00"),  # member key without its member id
        ("000d" + GRP + M, "0000" + "02" + UUID1[:10]),  # truncated uuid
    ],
)
def test_malformed_share_records_are_decode_errors(key, value):
    with pytest.raises(RecordDecodeError):
        decode_record(bytes.fromhex(key), bytes.fromhex(value))


def test_the_dump_json_uses_kafkas_field_names():
    (record, key, value) = GOLDEN[-1]
    assert decode(0, bytes.fromhex(key), bytes.fromhex(value)) == (
        '{"type":"15","data":{"groupId":"grp"}}',
        '{"version":"0","data":{"initializingTopics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","topicName":"t",'
        '"partitions":[0]}],"initializedTopics":[],"deletingTopics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAg",'
        '"topicName":"d"}]}}',
    )
    (record, key, value) = GOLDEN[0]
    assert decode(0, bytes.fromhex(key), bytes.fromhex(value)) == (
        '{"type":"10","data":{"groupId":"grp","memberId":"m"}}',
        '{"version":"0","data":{"rackId":"r","clientId":"cid","clientHost":"/h","subscribedTopicNames":["a","b"]}}',
    )
    assert decode(0, bytes.fromhex("000e" + GRP + M), None) == (
        '{"type":"14","data":{"groupId":"grp","memberId":"m"}}',
        "<DELETE>",
    )
