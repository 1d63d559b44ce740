"""__consumer_offsets key/value codecs: hand-computed golden bytes for every type and version
(the cross-check against an independent encoder is test_records_oracle.py)."""

from __future__ import annotations

import uuid

import pytest

from coordinator.groups import offset_encoding
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
from storage.batch import native

H = bytes.fromhex
COMPILED_ENCODING = native.compiled_copy(offset_encoding)
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


@pytest.mark.parametrize("key_type", [9, 17, 255, -1])  # early-access share, streams groups, future types
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


ENCODINGS = [
    pytest.param(offset_encoding, id="pure"),
    pytest.param(
        COMPILED_ENCODING,
        id="compiled",
        marks=pytest.mark.skipif(COMPILED_ENCODING is None, reason="not built (make native)"),
    ),
]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_offset_encoding_is_encode_record_of_each(encoding):
    """offset_encoding (as Python and compiled) writes encode_record's bytes, from a first
    record with empty metadata, group and topic on."""
    records = [
        OffsetCommitRecord("", "", 0, 5, 9, "", 1000, None),
        OffsetCommitRecord("", "t", 1, 6, -1, "", 1000, None),
        OffsetCommitRecord("g", "t", 2, 7, -1, "m\u00e9ta", 1000, None),
        OffsetCommitRecord("g", "t", 3, 8, -1, "m", 1000, None, uuid.UUID(int=7)),
        OffsetTombstone("g", "t", 0),
        OffsetCommitRecord("g", "t", 4, 2**40, 0, "m", 2**41, None),
    ]
    assert encoding.encode_records(records, encode_record) == [encode_record(r) for r in records]
    assert encoding.offset_key("g", "t", 7) == OFFSET_KEY


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


def test_kgc_native_0_runs_every_module_as_python():
    """KGC_NATIVE=0 (CI's pure run): the kernels and the commit encoding run their Python source
    even when `make native` built them."""
    import os
    import subprocess
    import sys

    code = (
        "from storage.batch import native; from coordinator.groups import records;"
        "print(native.KERNELS.__name__, records._ENCODING.__name__)"
    )
    env = {**os.environ, "KGC_NATIVE": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    expected = ["storage.batch.kernels", "coordinator.groups.offset_encoding"]
    assert out.split() == expected
