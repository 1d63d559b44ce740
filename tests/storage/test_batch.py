"""RecordBatch v2 codec: our bytes against kafka-python's independent implementation."""

from __future__ import annotations

import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from storage.batch import (
    HEADER_SIZE,
    InvalidBatch,
    Record,
    assign_base_offset,
    batch_attributes,
    batch_next_offset,
    decode_header,
    encode_batch,
    iter_records,
    validate_batch,
    verify_crc,
)

CODECS = [0, 1, 2, 3, 4]


def needs_kafka_python_codec(codec: int) -> None:
    """kafka-python compresses with python-snappy / lz4 / zstandard (test-only dependencies)."""
    from kafka import codec as kcodec

    available = {2: kcodec.has_snappy, 3: kcodec.has_lz4, 4: kcodec.has_zstd}.get(codec, lambda: True)()
    if not available:
        pytest.skip(f"kafka-python has no codec {codec}: pip install python-snappy lz4 zstandard")


def sample_records() -> list[Record]:
    return [
        Record(None, 1000, b"k0", b"value-0", []),
        Record(None, 1001, b"k1", None, []),  # tombstone
        Record(None, 999, b"k2", b"", [("h", b"x"), ("null", None)]),  # empty, not a tombstone
        Record(None, 1005, None, b"no key", [("ü-key", b"")]),
    ]


def as_tuples(records) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in records]


def test_tombstone_empty_value_null_key_and_headers_round_trip():
    batch = encode_batch(40, sample_records())
    got = list(iter_records(batch))
    assert [r.offset for r in got] == [40, 41, 42, 43]
    assert got[1].value is None and got[2].value == b""
    assert got[3].key is None
    assert got[2].headers == [("h", b"x"), ("null", None)]
    assert got[3].headers == [("ü-key", b"")]
    assert [r.timestamp for r in got] == [1000, 1001, 999, 1005]
    h = decode_header(batch)
    assert (h.base_offset, h.last_offset, h.records_count, h.max_timestamp) == (40, 43, 4, 1005)
    assert h.base_timestamp == 1000 and h.size == len(batch)


def test_flags_and_producer_fields_are_preserved():
    batch = encode_batch(
        7,
        [Record(None, 5, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x09")],
        producer_id=1234,
        producer_epoch=3,
        base_sequence=17,
        transactional=True,
        control=True,
        timestamp_type=1,
        partition_leader_epoch=9,
    )
    h = validate_batch(batch)
    assert h.is_transactional and h.is_control and h.timestamp_type == 1
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.last_sequence) == (1234, 3, 17, 17)
    assert h.partition_leader_epoch == 9
    kb = DefaultRecordBatch(batch)
    assert kb.is_transactional and kb.is_control_batch and kb.producer_id == 1234
    assert kb.validate_crc()


def test_delete_horizon_rebases_timestamps_and_keeps_offsets():
    recs = [Record(10, 500, b"a", None), Record(13, 700, b"b", b"v")]
    batch = encode_batch(10, recs, last_offset_delta=5, delete_horizon_ms=90_000)
    h = validate_batch(batch)
    assert h.delete_horizon_ms == 90_000 and h.last_offset == 15
    assert [(r.offset, r.timestamp) for r in iter_records(batch)] == [(10, 500), (13, 700)]


def test_empty_batch_keeps_its_envelope():
    batch = encode_batch(100, [], last_offset_delta=4, producer_id=5)
    h = validate_batch(batch)
    assert (h.records_count, h.last_offset, h.base_timestamp, len(batch)) == (0, 104, -1, HEADER_SIZE)
    assert list(iter_records(batch)) == []


@pytest.mark.parametrize("codec", CODECS)
def test_we_read_kafka_python_batches(codec):
    needs_kafka_python_codec(codec)
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    recs = sample_records() * 50  # large enough that compression matters
    for i, r in enumerate(recs):
        builder.append(i, r.timestamp, r.key, r.value, r.headers)
    raw = bytes(builder.build())
    h = validate_batch(raw)
    assert h.compression == codec
    ours = as_tuples(iter_records(raw))
    theirs = as_tuples(DefaultRecordBatch(raw))
    assert ours == theirs and len(ours) == 200


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_reads_our_batches(codec):
    needs_kafka_python_codec(codec)
    recs = sample_records() * 50
    raw = encode_batch(1000, recs, compression=codec)
    kb = DefaultRecordBatch(raw)
    assert kb.validate_crc() and kb.compression_type == codec
    theirs = as_tuples(kb)  # kafka-python's batch is a one-shot iterator
    assert theirs == as_tuples(iter_records(raw))
    assert [t[0] for t in theirs] == list(range(1000, 1200))


def test_snappy_raw_and_framed_are_also_accepted():
    plain = encode_batch(0, sample_records())
    body = plain[HEADER_SIZE:]
    for blob in (bytes(cramjam.snappy.compress_raw(body)), bytes(cramjam.snappy.compress(body))):
        raw = bytearray(plain[:HEADER_SIZE] + blob)
        struct.pack_into(">i", raw, 8, len(raw) - 12)
        struct.pack_into(">h", raw, 21, 2)
        from crc32c import crc32c

        struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
        assert as_tuples(iter_records(bytes(raw))) == as_tuples(iter_records(plain))


def test_assign_base_offset_touches_only_bytes_outside_the_crc():
    raw = encode_batch(0, sample_records())
    moved = assign_base_offset(raw, 123_456, partition_leader_epoch=4)
    assert moved[16:] == raw[16:] and verify_crc(moved)
    assert decode_header(moved).base_offset == 123_456
    assert decode_header(moved).partition_leader_epoch == 4
    assert [r.offset for r in iter_records(moved)] == [123_456 + i for i in range(4)]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda b: b[:40], "shorter than"),
        (lambda b: b[:16] + b"\x01" + b[17:], "magic"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "CRC mismatch"),
        (lambda b: b + b"\x00", "batchLength"),
    ],
)
def test_validate_batch_rejects_damage_with_a_clear_message(damage, message):
    raw = encode_batch(0, sample_records())
    with pytest.raises(InvalidBatch, match=message):
        validate_batch(damage(raw))
    if len(damage(raw)) >= HEADER_SIZE:  # a header the caller decoded is checked all the same
        with pytest.raises(InvalidBatch, match=message):
            validate_batch(damage(raw), decode_header(damage(raw)))


def test_single_field_readers_agree_with_the_header():
    plain = encode_batch(40, sample_records())
    txn = encode_batch(7, [Record(None, 5, None, b"v")] * 3, producer_id=9, producer_epoch=0, transactional=True)
    for raw in (plain, txn, b"\xff" * 5 + plain):
        pos = 5 if raw[0] == 0xFF else 0
        h = decode_header(raw, pos)
        assert batch_attributes(raw, pos) == h.attributes
        assert batch_next_offset(raw, pos) == h.next_offset
    assert batch_next_offset(plain) == 44 and batch_next_offset(txn) == 10


def test_malformed_record_lengths_raise_invalid_batch():
    raw = bytearray(encode_batch(0, [Record(None, 1, b"k", b"v")]))
    raw[HEADER_SIZE] = 0x7E  # record length varint now claims 63 bytes
    with pytest.raises(InvalidBatch):
        list(iter_records(bytes(raw)))
    truncated = bytearray(encode_batch(0, [Record(None, 1, b"k", b"value")]))
    del truncated[-3:]
    with pytest.raises(InvalidBatch):
        list(iter_records(bytes(truncated)))


def test_kafka_python_reads_a_whole_segment_file(tmp_path):
    from tests.storage.helpers import open_log

    log = open_log(tmp_path, segment_bytes=1 << 20)
    expected = []
    for i in range(30):
        recs = [Record(key=b"k%d" % i, value=None if i % 7 == 0 else b"v%d" % i, headers=[("n", b"%d" % i)])]
        base = log.append_records(recs, compression=i % 2)  # none/gzip: no extra codec needed
        expected.append((base, b"k%d" % i, recs[0].value, [("n", b"%d" % i)]))
    log.close()
    data = (tmp_path / "00000000000000000000.log").read_bytes()
    records = MemoryRecords(data)
    got = []
    while True:
        batch = records.next_batch()
        if batch is None:
            break
        assert batch.validate_crc()
        got.extend((r.offset, r.key, r.value, r.headers) for r in batch)
    assert got == expected


header_values = st.one_of(st.none(), st.binary(max_size=8))
records_strategy = st.lists(
    st.builds(
        lambda ts, k, v, h: Record(None, ts, k, v, h),
        st.integers(-1, 2**40),
        st.one_of(st.none(), st.binary(max_size=20)),
        st.one_of(st.none(), st.binary(max_size=40)),
        st.lists(st.tuples(st.text(max_size=5), header_values), max_size=3),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(records_strategy, st.integers(0, 2**40), st.sampled_from(CODECS))
def test_round_trip_property_against_kafka_python(records, base, codec):
    needs_kafka_python_codec(codec)
    raw = encode_batch(base, records, compression=codec)
    expected = [(base + i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(records)]
    assert as_tuples(iter_records(raw)) == expected
    assert as_tuples(DefaultRecordBatch(raw)) == expected
