"""latest.decoded_columns (the K rows' decoded columns, with a fast path for OffsetCommitKey +
v3 value) equals scan.decode_latest, the reference, row by row: on well-formed records of every
kind, and on every way the fast path's checks can reject an offset commit."""

from __future__ import annotations

import struct

from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone, OffsetCommitRecord, OffsetTombstone
from coordinator.groups.records import encode_record
from coordinator.verify.latest import DECODED, decoded_columns
from coordinator.verify.scan import decode_latest


def _commit(group: str = "g", topic: str = "t", partition: int = 3, metadata: str = "", expire: int | None = None):
    return encode_record(OffsetCommitRecord(group, topic, partition, 42, 7, metadata, 1_700_000_000_000, expire))


def _cases() -> list[tuple[bytes | None, bytes | None]]:
    key, value = _commit(metadata="meta")
    gm = GroupMetadataRecord("g", "consumer", 3, "range", None, 5, ())
    cases = [
        _commit(),
        (key, value),
        _commit(group="ünï", topic="côdé", partition=2**31 - 1, metadata="ß" * 50),
        _commit(expire=1_800_000_000_000),  # written as an older value version
        encode_record(OffsetTombstone("g", "t", 1)),
        encode_record(gm),
        encode_record(GroupTombstone("g")),
        (None, value),
        (b"\x00", value),
        (key, None),
        (key, value[:-1]),  # one byte short of the commit timestamp
        (key, value + b"\x00"),  # a trailing byte
        (key, value[:10]),  # truncated inside the fixed fields
        (key, value[:14] + struct.pack(">h", -1) + value[16:]),  # negative metadata length
        (key, value[:16] + b"\xff\xfe\xfd\xfc" + value[20:]),  # metadata is not UTF-8
        (key[:-1], value),  # key one byte short
        (key + b"\x00", value),  # key one byte long
        (key[:4] + b"\xff" + key[5:], value),  # group name not UTF-8
        (key[:2] + struct.pack(">h", -2) + key[4:], value),  # negative group length
        (b"\x00\x01\x00", value),  # key too short for its lengths
        (b"\x00\x00" + key[2:], value),  # legacy key type 0
        (b"\x00\x63" + key[2:], value),  # unknown key type
        (key, b"\x00\x09" + value[2:]),  # unknown value version
    ]
    # The same (group, topic) prefix first well-formed, then broken: the names cache must not
    # let a bad key through.
    cases += [(key, value), (key[:-4] + b"\x00\x00\x00", value), (key[:-4] + b"\x00\x00\x00", None)]
    cases += [(key[:-1], None), (key + b"\x00", None), (key[:4] + b"\xff" + key[5:], None), (b"\x00\x01\x00", None)]
    return cases


def test_decoded_columns_equal_decode_latest():
    cases = _cases()
    keys, values = [k for k, _ in cases], [v for _, v in cases]
    which = [True] * len(cases)
    which[1] = False
    got = decoded_columns(keys, values, which)
    assert set(got) == set(DECODED)
    for i, (k, v) in enumerate(cases):
        want = dict.fromkeys(DECODED) if not which[i] else {n: decode_latest(k, v)[n] for n in DECODED}
        assert {n: got[n][i] for n in DECODED} == want, (i, k, v)
    # the fast path ran: a well-formed commit decodes to its fields
    assert (got["group"][0], got["topic"][0], got["partition"][0], got["committed_offset"][0]) == ("g", "t", 3, 42)
    assert decoded_columns([], [], []) == {n: [] for n in DECODED}
