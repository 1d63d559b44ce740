"""__consumer_offsets key/value codecs: hand-computed golden bytes for every type and version,
and a cross-check against an independent encoder (kafka-python's JSON-schema-driven `ApiData`,
fed Kafka's own OffsetCommit*/GroupMetadata* JSON schemas, copied below)."""

from __future__ import annotations

import json
import sys

import pytest

from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone, MemberSnapshot
from coordinator.groups.records import (
    OffsetCommitRecord,
    OffsetTombstone,
    RecordDecodeError,
    UnknownRecord,
    decode_record,
    encode_key,
    encode_record,
    encode_records,
)

H = bytes.fromhex
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python resources API

# -- golden bytes, computed by hand from the JSON schemas ------------------------------------

OFFSET_KEY = H("000100016700017400000007")  # type 1, "g", "t", partition 7
GROUP_KEY = H("0002000167")  # type 2, "g"


def test_offset_commit_v3_golden():
    rec = OffsetCommitRecord(
        "g", "t", 7, offset=5, leader_epoch=9, metadata="md", commit_timestamp_ms=1000, expire_timestamp_ms=None
    )
    key, value = encode_record(rec)
    assert key == OFFSET_KEY
    assert value == H("000300000000000000050000000900026d6400000000000003e8")
    assert decode_record(key, value) == rec


def test_offset_commit_v1_when_expiry_given_drops_leader_epoch():
    rec = OffsetCommitRecord("g", "t", 7, 5, -1, "", 1000, 2000)
    key, value = encode_record(rec)
    assert value == H("00010000000000000005000000000000000003e800000000000007d0")
    assert decode_record(key, value) == rec


@pytest.mark.parametrize(
    "value, expected",
    [
        (H("0000000000000000000500026d6400000000000003e8"), OffsetCommitRecord("g", "t", 7, 5, -1, "md", 1000, None)),
        (
            H("0001000000000000000500026d6400000000000003e8ffffffffffffffff"),
            OffsetCommitRecord("g", "t", 7, 5, -1, "md", 1000, None),
        ),  # expire -1 = none
        (H("0002000000000000000500026d6400000000000003e8"), OffsetCommitRecord("g", "t", 7, 5, -1, "md", 1000, None)),
        (
            H("0004000000000000000500000009036d6400000000000003e800"),
            OffsetCommitRecord("g", "t", 7, 5, 9, "md", 1000, None),
        ),
        # v4 with an unknown tagged field (tag 5, 2 bytes) is skipped
        (
            H("0004000000000000000500000009036d6400000000000003e8010502abcd"),
            OffsetCommitRecord("g", "t", 7, 5, 9, "md", 1000, None),
        ),
    ],
)
def test_offset_commit_value_old_versions_golden(value, expected):
    assert decode_record(OFFSET_KEY, value) == expected


def test_legacy_key_type_0_reads_as_offset_commit():
    key = H("0000") + OFFSET_KEY[2:]
    assert decode_record(key, None) == OffsetTombstone("g", "t", 7)


def test_offset_tombstone():
    key, value = encode_record(OffsetTombstone("g", "t", 7))
    assert (key, value) == (OFFSET_KEY, None)
    assert decode_record(key, None) == OffsetTombstone("g", "t", 7)


MEMBER = MemberSnapshot(
    "m", "i", "c", "h", rebalance_timeout_ms=300, session_timeout_ms=100, subscription=b"\x01\x02", assignment=b"\x03"
)
GROUP = GroupMetadataRecord(
    "g",
    "consumer",
    generation_id=2,
    protocol_name="range",
    leader="m",
    current_state_timestamp_ms=1000,
    members=(MEMBER,),
)
GROUP_V3_MEMBER = H("00016d0001690001630001680000012c000000640000000201020000000103")
GROUP_V3 = (
    H("00030008")
    + b"consumer"
    + H("000000020005")
    + b"range"
    + H("00016d")
    + H("00000000000003e800000001")
    + GROUP_V3_MEMBER
)


def test_group_metadata_v3_golden():
    key, value = encode_record(GROUP)
    assert key == GROUP_KEY
    assert value == GROUP_V3
    assert decode_record(key, value) == GROUP


def test_empty_group_record_golden():
    """newEmptyGroupMetadataRecord: protocol and leader null, generation 0, no members."""
    rec = GroupMetadataRecord("g", "", 0, None, None, 1000, ())
    key, value = encode_record(rec)
    assert value == H("0003000000000000ffffffff00000000000003e800000000")
    assert decode_record(key, value) == rec


def test_group_state_timestamp_none_is_minus_one():
    rec = GroupMetadataRecord("g", "", 0, None, None, None, ())
    _, value = encode_record(rec)
    assert value[-12:-4] == H("ffffffffffffffff")
    assert decode_record(GROUP_KEY, value) == rec


def _group_value(version: int) -> bytes:
    member = H("00016d")
    if version >= 3:
        member += H("000169")
    member += H("000163000168")
    if version >= 1:
        member += H("0000012c")
    member += H("000000640000000201020000000103")
    out = H(f"{version:04x}0008") + b"consumer" + H("000000020005") + b"range" + H("00016d")
    if version >= 2:
        out += H("00000000000003e8")
    return out + H("00000001") + member


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_group_metadata_old_versions_golden(version):
    got = decode_record(GROUP_KEY, _group_value(version))
    expected_member = MemberSnapshot(
        "m",
        "i" if version >= 3 else None,
        "c",
        "h",
        300 if version >= 1 else 100,  # v0: rebalance timeout = session timeout (old Kafka)
        100,
        b"\x01\x02",
        b"\x03",
    )
    assert got == GroupMetadataRecord(
        "g", "consumer", 2, "range", "m", 1000 if version >= 2 else None, (expected_member,)
    )


def test_group_metadata_v4_flexible_golden():
    member = H("026d0269026302680000012c00000064030102020300")
    value = (
        H("000409") + b"consumer" + H("0000000206") + b"range" + H("026d") + H("00000000000003e802") + member + H("00")
    )
    assert decode_record(GROUP_KEY, value) == GROUP


def test_group_tombstone():
    assert encode_record(GroupTombstone("g")) == (GROUP_KEY, None)
    assert decode_record(GROUP_KEY, None) == GroupTombstone("g")


def test_encode_key_is_shared_by_record_and_tombstone():
    rec = OffsetCommitRecord("g", "t", 7, 1, -1, "", 0, None)
    assert encode_key(rec) == encode_key(OffsetTombstone("g", "t", 7))
    assert encode_key(GROUP) == encode_key(GroupTombstone("g"))


def test_unicode_strings_are_utf8_with_byte_lengths():
    rec = OffsetCommitRecord("gé", "tø", 0, 1, -1, "€", 0, None)
    key, value = encode_record(rec)
    assert key == H("0001000367c3a9000374c3b800000000")
    assert decode_record(key, value) == rec


@pytest.mark.parametrize("key_type", [9, 15, 17, 255, -1])  # share and streams groups, future types
def test_unknown_key_types_decode_to_unknown_record(key_type):
    key = key_type.to_bytes(2, "big", signed=True) + H("000167")
    assert decode_record(key, H("000000000001")) == UnknownRecord(key_type)
    assert decode_record(key, None) == UnknownRecord(key_type)


@pytest.mark.parametrize("version", [5, -1])
def test_unknown_value_versions_decode_to_unknown_record(version):
    value = version.to_bytes(2, "big", signed=True) + H("00")
    assert decode_record(OFFSET_KEY, value) == UnknownRecord(1, version)
    assert decode_record(GROUP_KEY, value) == UnknownRecord(2, version)


def test_malformed_records_raise():
    _, value = encode_record(GROUP)
    for cut in range(2, len(value)):
        with pytest.raises(RecordDecodeError):
            decode_record(GROUP_KEY, value[:cut])
    with pytest.raises(RecordDecodeError):
        decode_record(GROUP_KEY, value + b"\x00")  # trailing bytes
    with pytest.raises(RecordDecodeError):
        decode_record(OFFSET_KEY[:-1], None)
    with pytest.raises(RecordDecodeError):
        decode_record(b"\x00", None)


def test_encode_rejects_other_objects():
    with pytest.raises(TypeError):
        encode_record(object())


# -- independent oracle: kafka-python's generic JSON-schema codec ----------------------------

# Kafka's schemas (group-coordinator/src/main/resources/common/message), keys patched to
# "type": "data" so kafka-python's ApiData accepts them.
SCHEMAS = {
    "OffsetCommitKey": {
        "type": "data",
        "name": "OffsetCommitKey",
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [
            {"name": "group", "type": "string", "versions": "0"},
            {"name": "topic", "type": "string", "versions": "0"},
            {"name": "partition", "type": "int32", "versions": "0"},
        ],
    },
    "GroupMetadataKey": {
        "type": "data",
        "name": "GroupMetadataKey",
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [{"name": "group", "type": "string", "versions": "0"}],
    },
    "OffsetCommitValue": {
        "type": "data",
        "name": "OffsetCommitValue",
        "validVersions": "0-4",
        "flexibleVersions": "4+",
        "fields": [
            {"name": "offset", "type": "int64", "versions": "0+"},
            {"name": "leaderEpoch", "type": "int32", "versions": "3+", "default": -1},
            {"name": "metadata", "type": "string", "versions": "0+"},
            {"name": "commitTimestamp", "type": "int64", "versions": "0+"},
            {"name": "expireTimestamp", "type": "int64", "versions": "1", "default": -1},
        ],
    },
    "GroupMetadataValue": {
        "type": "data",
        "name": "GroupMetadataValue",
        "validVersions": "0-4",
        "flexibleVersions": "4+",
        "fields": [
            {"name": "protocolType", "versions": "0+", "type": "string"},
            {"name": "generation", "versions": "0+", "type": "int32"},
            {"name": "protocol", "versions": "0+", "type": "string", "nullableVersions": "0+"},
            {"name": "leader", "versions": "0+", "type": "string", "nullableVersions": "0+"},
            {"name": "currentStateTimestamp", "versions": "2+", "type": "int64", "default": -1},
            {"name": "members", "versions": "0+", "type": "[]MemberMetadata"},
        ],
        "commonStructs": [
            {
                "name": "MemberMetadata",
                "versions": "0+",
                "fields": [
                    {"name": "memberId", "versions": "0+", "type": "string"},
                    {
                        "name": "groupInstanceId",
                        "versions": "3+",
                        "type": "string",
                        "default": "null",
                        "nullableVersions": "3+",
                    },
                    {"name": "clientId", "versions": "0+", "type": "string"},
                    {"name": "clientHost", "versions": "0+", "type": "string"},
                    {"name": "rebalanceTimeout", "versions": "1+", "type": "int32"},
                    {"name": "sessionTimeout", "versions": "0+", "type": "int32"},
                    {"name": "subscription", "versions": "0+", "type": "bytes"},
                    {"name": "assignment", "versions": "0+", "type": "bytes"},
                ],
            }
        ],
    },
}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    root = tmp_path_factory.mktemp("oracle")
    pkg = root / "kgc_offsets_schemas"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, schema in SCHEMAS.items():
        (pkg / f"{name}.json").write_text(json.dumps(schema))
    sys.path.insert(0, str(root))
    try:
        import kgc_offsets_schemas as schemas_pkg
        from kafka.protocol.api_data import ApiData

        classes = {name: type(name, (ApiData,), {}, load_json=schemas_pkg) for name in SCHEMAS}
    finally:
        sys.path.remove(str(root))
    return classes


def test_oracle_offset_commit_all_versions(oracle):
    key_cls, value_cls = oracle["OffsetCommitKey"], oracle["OffsetCommitValue"]
    key = b"\x00\x01" + key_cls(group="grp", topic="tópic", partition=42).encode(version=0, header=False)
    for version in range(5):
        value = value_cls(
            offset=123456789,
            leader_epoch=4,
            metadata="meta",
            commit_timestamp=1700000000000,
            expire_timestamp=1800000000000,
        ).encode(version=version)
        got = decode_record(key, value)
        assert got == OffsetCommitRecord(
            "grp",
            "tópic",
            42,
            123456789,
            4 if version >= 3 else -1,
            "meta",
            1700000000000,
            1800000000000 if version == 1 else None,
        )
    # and ours decodes with theirs: written versions 3 and 1
    for rec, version in [
        (OffsetCommitRecord("grp", "tópic", 42, 9, 3, "x", 5, None), 3),
        (OffsetCommitRecord("grp", "tópic", 42, 9, -1, "x", 5, 77), 1),
    ]:
        our_key, our_value = encode_record(rec)
        assert our_key == key
        theirs = value_cls.decode(our_value)
        assert theirs.version == version and theirs.offset == 9 and theirs.metadata == "x"
        assert theirs.encode(version=version) == our_value


def _oracle_group(oracle, record: GroupMetadataRecord):
    value_cls = oracle["GroupMetadataValue"]
    member_cls = value_cls.MemberMetadata
    members = [
        member_cls(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout=m.rebalance_timeout_ms,
            session_timeout=m.session_timeout_ms,
            subscription=m.subscription,
            assignment=m.assignment,
        )
        for m in record.members
    ]
    return value_cls(
        protocol_type=record.protocol_type,
        generation=record.generation_id,
        protocol=record.protocol_name,
        leader=record.leader,
        current_state_timestamp=record.current_state_timestamp_ms or -1,
        members=members,
    )


def test_oracle_group_metadata_all_versions(oracle):
    two = GroupMetadataRecord(
        "grp",
        "consumer",
        7,
        "range",
        "m1",
        1700000000000,
        (
            MemberSnapshot("m1", "inst-1", "client", "/127.0.0.1", 60000, 45000, b"sub" * 50, b"asg" * 90),
            MemberSnapshot("m2", None, "client", "/10.0.0.1", 60000, 10000, b"", b""),
        ),
    )
    empty = GroupMetadataRecord("grp", "", 0, None, None, 1700000000000, ())
    key = b"\x00\x02" + oracle["GroupMetadataKey"](group="grp").encode(version=0, header=False)
    for record in (two, empty):
        our_key, our_value = encode_record(record)
        assert our_key == key
        theirs = _oracle_group(oracle, record)
        assert theirs.encode(version=3) == our_value
        for version in range(5):
            got = decode_record(key, theirs.encode(version=version))
            members = tuple(
                MemberSnapshot(
                    m.member_id,
                    m.group_instance_id if version >= 3 else None,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms if version >= 1 else m.session_timeout_ms,
                    m.session_timeout_ms,
                    m.subscription,
                    m.assignment,
                )
                for m in record.members
            )
            assert got == GroupMetadataRecord(
                record.group_id,
                record.protocol_type,
                record.generation_id,
                record.protocol_name,
                record.leader,
                record.current_state_timestamp_ms if version >= 2 else None,
                members,
            )


def test_offset_commit_v3_fast_path_rejects_what_the_general_path_rejects():
    key, value = encode_record(OffsetCommitRecord("g", "t", 7, 5, 9, "md", 1000, None))
    for cut in range(2, len(value)):
        with pytest.raises(RecordDecodeError):
            decode_record(key, value[:cut])
    for cut in range(2, len(key)):
        with pytest.raises(RecordDecodeError):
            decode_record(key[:cut], value)
    with pytest.raises(RecordDecodeError):
        decode_record(key, value + b"\x00")
    with pytest.raises(RecordDecodeError):
        decode_record(key + b"\x00", value)
    # Malformed UTF-8 in the metadata: the fast path steps aside and the general path decodes it
    # as Kafka's loader does (Java's String(bytes, UTF_8) replaces it), so the record loads.
    bad_utf8 = value[:16] + b"\xff\xfe" + value[18:]
    assert decode_record(key, bad_utf8).metadata == "\ufffd\ufffd"


def test_encode_records_is_encode_record_of_each():
    """The batch encoder (an op's records) writes exactly the bytes of the one-record encoder:
    runs of one group and topic, group/topic changes, expiry (value v1), non-ASCII and long
    metadata, tombstones and group records in between."""
    records = [
        OffsetCommitRecord("g", "t", 0, 5, 9, "md", 1000, None),
        OffsetCommitRecord("g", "t", 1, 6, -1, "", 1000, None),
        OffsetCommitRecord("g", "u", 1, 7, -1, "m\u00e9ta", 1000, None),
        OffsetCommitRecord("g\u00e9", "u", 1, 7, -1, "x" * 300, 1000, None),
        OffsetCommitRecord("g", "t", 2, 8, 3, "md", 1000, 5000),
        OffsetTombstone("g", "t", 0),
        GroupTombstone("g"),
        OffsetCommitRecord("g", "t", 3, 2**40, 0, "\U0001f600", 2**41, None),
    ]
    assert encode_records(records) == [encode_record(r) for r in records]
    assert encode_records([]) == []
    too_long = OffsetCommitRecord("g", "t", 0, 1, -1, "x" * 0x8000, 1000, None)
    for encode in (encode_record, lambda r: encode_records([records[0], r])):
        with pytest.raises(ValueError, match="too long"):
            encode(too_long)
