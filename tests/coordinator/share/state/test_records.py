"""__share_group_state bytes, written out by hand from the schemas (ShareSnapshotKey/Value,
ShareUpdateKey/Value, Kafka 4.2), round trips, bad input, and the JSON Kafka's
DumpLogSegmentsTest.testShareGroupStateMessageParser expects."""

from __future__ import annotations

import base64
import uuid

import pytest

from coordinator.share.persister import SharePartitionKey, StateBatch
from coordinator.share.state import record_json
from coordinator.share.state.placement import topic_id_text
from coordinator.share.state.records import (
    ShareRecordDecodeError,
    ShareSnapshot,
    ShareTombstone,
    ShareUpdate,
    UnknownShareRecord,
    decode_record,
    encode_record,
)

TOPIC = uuid.UUID(bytes=bytes(range(16)))
KEY = SharePartitionKey("gs1", TOPIC, 7)
KEY_STRUCT = bytes.fromhex("0003") + b"gs1" + bytes(range(16)) + bytes.fromhex("00000007")
BATCH = bytes.fromhex(
    "0000000000000005"  # FirstOffset
    "0000000000000009"  # LastOffset
    "02"  # DeliveryState (Acknowledged)
    "0003"  # DeliveryCount
    "00"  # the batch's tagged fields
)


def test_snapshot_golden_bytes() -> None:
    record = ShareSnapshot(KEY, 1, 2, 3, 5, 1000, 2000, -1, (StateBatch(5, 9, 2, 3),))
    key, value = encode_record(record)
    assert key == bytes.fromhex("0000") + KEY_STRUCT
    assert value == (
        bytes.fromhex(
            "0000"  # value version 0
            "00000001"  # SnapshotEpoch
            "00000002"  # StateEpoch
            "00000003"  # LeaderEpoch
            "0000000000000005"  # StartOffset
            "00000000000003e8"  # CreateTimestamp
            "00000000000007d0"  # WriteTimestamp
            "02"  # StateBatches: compact array of 1
        )
        + BATCH
        + bytes.fromhex("00")  # no tagged fields: DeliveryCompleteCount is its default -1
    )
    assert decode_record(key, value) == record


def test_update_golden_bytes_with_delivery_complete_count() -> None:
    record = ShareUpdate(KEY, 4, 6, -1, 11, (StateBatch(5, 9, 2, 3),))
    key, value = encode_record(record)
    assert key == bytes.fromhex("0001") + KEY_STRUCT
    assert value == (
        bytes.fromhex(
            "0000"  # value version 0
            "00000004"  # SnapshotEpoch
            "00000006"  # LeaderEpoch
            "ffffffffffffffff"  # StartOffset -1: unchanged
            "02"
        )
        + BATCH
        + bytes.fromhex("0100040000000b")  # 1 tagged field: tag 0, 4 bytes, DeliveryCompleteCount 11
    )
    assert decode_record(key, value) == record


def test_tombstone_and_empty_batches() -> None:
    key, value = encode_record(ShareTombstone(KEY))
    assert (key, value) == (bytes.fromhex("0000") + KEY_STRUCT, None)
    assert decode_record(key, None) == ShareTombstone(KEY)
    empty = ShareSnapshot(KEY, 0, 0, -1, -1, 0, 0, 0, ())
    assert decode_record(*encode_record(empty)) == empty
    assert encode_record(empty)[1].endswith(bytes.fromhex("0101000400000000"))  # [] and count 0


def test_unknown_types_versions_and_tags() -> None:
    assert decode_record(bytes.fromhex("7fff"), b"") == UnknownShareRecord(32767)
    assert decode_record(bytes.fromhex("0001") + KEY_STRUCT, bytes.fromhex("0001")) == UnknownShareRecord(1, 1)
    _, value = encode_record(ShareUpdate(KEY, 0, 0, 0, -1, ()))
    with_unknown_tag = value[:-1] + bytes.fromhex("010502abcd")  # tag 5: kept aside, as Kafka skips it
    assert decode_record(bytes.fromhex("0001") + KEY_STRUCT, with_unknown_tag) == ShareUpdate(KEY, 0, 0, 0, -1, ())


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (bytes.fromhex("0000") + KEY_STRUCT + b"x", None),  # trailing key bytes
        (bytes.fromhex("0000") + KEY_STRUCT[:-1], None),  # short key
        (bytes.fromhex("0001") + KEY_STRUCT, bytes.fromhex("0000000000000000000000000000000000000000")),
        (bytes.fromhex("0001") + KEY_STRUCT, encode_record(ShareUpdate(KEY, 0, 0, 0, -1, ()))[1] + b"\x00"),
        (bytes.fromhex("0000") + KEY_STRUCT, bytes.fromhex("000000")),  # truncated value
    ],
)
def test_bad_bytes_raise_a_decode_error(key: bytes, value: bytes | None) -> None:
    with pytest.raises(ShareRecordDecodeError):
        decode_record(key, value)


@pytest.mark.parametrize(
    "record",
    [
        ShareSnapshot(KEY, 2**31 - 1, -5, 0, 2**63 - 1, -1, 0, 2**31 - 1, (StateBatch(-1, 2**63 - 1, -128, -(2**15)),)),
        ShareUpdate(
            SharePartitionKey("é" * 10, TOPIC, 0), 0, -1, -1, 0, tuple(StateBatch(i, i, 0, 1) for i in range(300))
        ),
    ],
)
def test_round_trips_at_the_edges(record: ShareSnapshot | ShareUpdate) -> None:
    assert decode_record(*encode_record(record)) == record


# -- kgc dump --share-group-state-decoder (Kafka's DumpLogSegmentsTest) -----------------------------

GS1 = SharePartitionKey("gs1", uuid.UUID(bytes=base64.urlsafe_b64decode("Uj5wn_FqTXirEASvVZRY1w==")), 0)


def test_dump_json_matches_kafka() -> None:
    assert topic_id_text(GS1.topic_id) == "Uj5wn_FqTXirEASvVZRY1w"
    key_text = '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}'
    snap = ShareSnapshot(GS1, 0, 0, 0, 0, 1234, 1234, -1, (StateBatch(0, 4, 2, 1),))
    assert record_json.decode(0, *encode_record(snap)) == (
        key_text,
        '{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"createTimestamp":1234,"writeTimestamp":1234,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    update = ShareUpdate(GS1, 0, 0, 0, -1, (StateBatch(0, 4, 2, 1),))
    assert record_json.decode(0, *encode_record(update)) == (
        key_text.replace('"type":"0"', '"type":"1"'),
        '{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    assert record_json.decode(0, *encode_record(ShareTombstone(GS1))) == (key_text, "<DELETE>")
    assert record_json.decode(0, bytes.fromhex("7fff"), b"") == (
        "Unknown record type 32767 at offset 0, skipping.",
        None,
    )
    text, payload = record_json.decode(3, bytes.fromhex("0000") + KEY_STRUCT, b"\x00")
    assert text.startswith("Error at offset 3, skipping.") and payload is None
    with pytest.raises(ValueError, match="message had a missing key"):
        record_json.decode(0, None, None)


def test_dump_json_shows_delivery_complete_count_when_known() -> None:
    _, payload = record_json.decode(0, *encode_record(ShareUpdate(GS1, 1, 2, 3, 9, ())))
    assert payload == (
        '{"version":"0","data":{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":3,'
        '"deliveryCompleteCount":9,"stateBatches":[]}}'
    )
