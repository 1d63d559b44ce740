"""__consumer_offsets key/value codecs against an independent encoder: kafka-python's
JSON-schema-driven `ApiData`, fed Kafka's own OffsetCommit*/GroupMetadata* JSON schemas (copied
below), for every version of every record type."""

from __future__ import annotations

import json
import sys

import pytest

from coordinator.groups.record_types import GroupMetadataRecord, MemberSnapshot
from coordinator.groups.records import OffsetCommitRecord, decode_record, encode_record

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python resources API

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
