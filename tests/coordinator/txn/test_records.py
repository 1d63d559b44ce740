"""__transaction_state bytes (TransactionLogKey v0, TransactionLogValue v0/v1) and the state table."""

from __future__ import annotations

import struct

import pytest

from coordinator.txn.placement import partition_for
from coordinator.txn.record_json import decode as decode_json
from coordinator.txn.records import (
    TransactionRecord,
    TransactionTombstone,
    TxnRecordDecodeError,
    UnknownTxnRecord,
    decode_record,
    encode_record,
)
from coordinator.txn.state import VALID_PREVIOUS, IllegalTransition, TransactionState, check_transition

S = TransactionState


def _string(s: str) -> bytes:
    return struct.pack(">h", len(s)) + s.encode()


def test_key_and_value_are_kafkas_v0_bytes():
    rec = TransactionRecord("app-1", 4000, 3, 60_000, S.ONGOING, (("b", 1), ("a", 2), ("a", 0)), 1_700, 1_600)
    key, value = encode_record(rec)
    assert key == struct.pack(">h", 0) + _string("app-1")
    assert value == (
        struct.pack(">hqhib", 0, 4000, 3, 60_000, 1)
        + struct.pack(">i", 2)
        + _string("a")
        + struct.pack(">iii", 2, 0, 2)
        + _string("b")
        + struct.pack(">ii", 1, 1)
        + struct.pack(">qq", 1_700, 1_600)
    )
    assert decode_record(key, value) == rec.__class__(**{**rec.__dict__, "partitions": (("a", 0), ("a", 2), ("b", 1))})


def test_an_empty_transaction_writes_null_partitions_and_a_tombstone_a_null_value():
    rec = TransactionRecord("x", 1, 0, 1000, S.EMPTY, (), 5, -1)
    _, value = encode_record(rec)
    assert value[17:21] == struct.pack(">i", -1)
    assert decode_record(*encode_record(rec)) == rec
    assert encode_record(TransactionTombstone("x")) == (struct.pack(">h", 0) + _string("x"), None)
    assert decode_record(struct.pack(">h", 0) + _string("x"), None) == TransactionTombstone("x")
    with pytest.raises(ValueError):
        encode_record(TransactionRecord("x", 1, 0, 1000, S.EMPTY, (("t", 0),), 5, -1))


def test_value_v1_is_read_with_its_tagged_fields():
    value = (
        struct.pack(">hqhib", 1, 77, 2, 1000, 4)
        + bytes([2])
        + bytes([2])
        + b"t"
        + bytes([2])
        + struct.pack(">i", 5)
        + bytes([0])  # [t: [5]]
        + struct.pack(">qq", 9, 8)
        + bytes([2, 0, 8])
        + struct.pack(">q", 70)
        + bytes([1, 8])
        + struct.pack(">q", 78)
    )  # tags 0, 1
    rec = decode_record(struct.pack(">h", 0) + _string("y"), value)
    assert rec == TransactionRecord("y", 77, 2, 1000, S.COMPLETE_COMMIT, (("t", 5),), 9, 8, 70, 78)


def test_unknown_and_broken_records():
    assert decode_record(struct.pack(">h", 3) + _string("z"), b"") == UnknownTxnRecord(3)
    with pytest.raises(TxnRecordDecodeError):
        decode_record(struct.pack(">h", 0) + _string("z"), struct.pack(">hq", 0, 1))  # truncated
    with pytest.raises(TxnRecordDecodeError):
        decode_record(struct.pack(">h", 0) + _string("z"), struct.pack(">h", 9))  # unknown version


def test_the_dump_decoder_prints_kafkas_json():
    key, value = encode_record(TransactionRecord("app", 4, 1, 100, S.PREPARE_ABORT, (("t", 0),), 7, 6))
    assert decode_json(0, key, value) == (
        '{"type":"0","data":{"transactionalId":"app"}}',
        '{"version":"0","data":{"producerId":4,"producerEpoch":1,"transactionTimeoutMs":100,'
        '"transactionStatus":3,"transactionPartitions":[{"topic":"t","partitionIds":[0]}],'
        '"transactionLastUpdateTimestampMs":7,"transactionStartTimestampMs":6}}',
    )
    assert decode_json(0, key, None)[1] == "<DELETE>"


def test_value_v1_is_written_flexible_with_only_the_tags_that_differ_from_their_defaults():
    # TransactionLogValue v1 as Kafka's generated writer lays it out (transaction.version >= 1).
    rec = TransactionRecord("app", 77, 3, 1000, S.PREPARE_COMMIT, (("t", 0), ("t", 2)), 9, 8, 77, -1, client_version=2)
    _, value = encode_record(rec, value_version=1)
    assert value == (
        struct.pack(">hqhib", 1, 77, 3, 1000, 2)
        + bytes([2, 2])
        + b"t"
        + bytes([3])
        + struct.pack(">ii", 0, 2)
        + b"\x00"  # [{t, [0, 2]}]
        + struct.pack(">qq", 9, 8)
        + bytes([2, 0, 8])
        + struct.pack(">q", 77)
        + bytes([2, 2])
        + struct.pack(">h", 2)  # tags 0 and 2
    )
    assert decode_record(*encode_record(rec, value_version=1)) == rec
    empty = TransactionRecord("app", 77, 4, 1000, S.EMPTY, (), 9, -1, -1, -1)
    _, value = encode_record(empty, value_version=1)
    assert value == struct.pack(">hqhib", 1, 77, 4, 1000, 0) + b"\x00" + struct.pack(">qq", 9, -1) + b"\x00"
    assert decode_record(*encode_record(empty, value_version=1)) == empty
    assert '"clientTransactionVersion":2' in decode_json(0, *encode_record(rec, value_version=1))[1]


def test_the_state_table_is_kafkas():
    # Kafka 4.x TransactionState: a transaction.version 2 client may abort from Empty/Complete*.
    assert VALID_PREVIOUS[S.PREPARE_ABORT] == {
        S.ONGOING,
        S.PREPARE_EPOCH_FENCE,
        S.EMPTY,
        S.COMPLETE_COMMIT,
        S.COMPLETE_ABORT,
    }
    assert VALID_PREVIOUS[S.PREPARE_COMMIT] == {S.ONGOING}
    assert VALID_PREVIOUS[S.DEAD] == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert [s.id for s in S] == list(range(8)) and str(S.PREPARE_EPOCH_FENCE) == "PrepareEpochFence"
    check_transition("t", S.ONGOING, S.PREPARE_COMMIT)
    with pytest.raises(IllegalTransition):
        check_transition("t", S.EMPTY, S.PREPARE_COMMIT)


def test_placement_is_kafkas_hash():
    # Utils.abs("my-txn".hashCode()) % 50, as TransactionStateManager.partitionFor computes it.
    h = 0
    for ch in "my-txn":
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    assert partition_for("my-txn") == abs(h) % 50
