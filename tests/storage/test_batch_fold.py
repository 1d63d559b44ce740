"""storage.batch.fold: folding a segment file's batches into the latest value per key equals the
record-by-record reference (decode each batch, keep each key's last value in order of last
occurrence), whatever the chunk size; it stops exactly before a transactional or control batch
and before bytes that are not a whole valid batch; malformed records raise InvalidBatch."""

from __future__ import annotations

import os
import random

import pytest

from storage.batch import InvalidBatch, Record, encode_batch, iter_records
from storage.batch.fold import fold_region
from storage.batch.layout import COMPRESSION_GZIP, COMPRESSION_ZSTD, HEADER, LOG_OVERHEAD
from storage.batch.record_walk import fold_latest, records_region


def random_batches(seed: int, count: int = 60) -> list[bytes]:
    rng = random.Random(seed)
    out, offset = [], 0
    for _ in range(count):
        records = []
        # Every varint width the walk has a path for: record, key and value lengths of 1, 2 and
        # 3 bytes, timestamp deltas up to 5 bytes, offset deltas past 63 (a batch of 70).
        for _ in range(rng.choice((1, 2, 5, 8, 70))):
            key = None if rng.random() < 0.1 else b"k%d" % rng.randint(0, 15)
            if key is not None and rng.random() < 0.1:
                key = key.ljust(rng.choice((100, 9000)), b"-")
            value = None if rng.random() < 0.2 else os.urandom(rng.choice((0, 3, 40, 200, 9000)))
            headers = [("h", b"v")] if rng.random() < 0.1 else []
            ts = rng.choice((1, 1, 100, 10**10))
            records.append(Record(timestamp=ts, key=key, value=value, headers=headers))
        compression = rng.choice((0, 0, 0, COMPRESSION_GZIP, COMPRESSION_ZSTD))
        out.append(encode_batch(offset, records, compression=compression))
        offset += len(records)
    return out


def reference(batches: list[bytes]) -> tuple[list[tuple[bytes, bytes | None]], int]:
    latest: dict[bytes, bytes | None] = {}
    keyed = 0
    for batch in batches:
        for r in iter_records(batch):
            if r.key is not None:
                latest.pop(r.key, None)
                latest[r.key] = r.value
                keyed += 1
    return list(latest.items()), keyed


def write(tmp_path, data: bytes) -> int:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return os.open(path, os.O_RDONLY)


def fold_all(fd: int, end: int, chunk: int, start: int = 0):
    latest: dict[bytes, bytes | None] = {}
    pos, batches, keyed, next_offset = start, 0, 0, -1
    while True:
        folded = fold_region(fd, pos, end, latest, chunk)
        assert folded.position >= pos
        batches += folded.batches
        keyed += folded.records
        next_offset = folded.next_offset if folded.next_offset >= 0 else next_offset
        pos = folded.position
        if folded.stopped or pos >= end:
            return list(latest.items()), batches, keyed, pos, next_offset, folded.stopped


@pytest.mark.parametrize("chunk", [61, 100, 4096, 1 << 20])
@pytest.mark.parametrize("seed", range(4))
def test_fold_equals_the_record_by_record_reference(tmp_path, seed, chunk):
    batches = random_batches(seed)
    data = b"".join(batches)
    fd = write(tmp_path, data)
    try:
        items, n_batches, keyed, pos, next_offset, stopped = fold_all(fd, len(data), chunk)
    finally:
        os.close(fd)
    assert (items, keyed) == reference(batches)
    last = HEADER.unpack_from(batches[-1])
    assert (n_batches, pos, next_offset, stopped) == (len(batches), len(data), last[0] + last[6] + 1, False)


@pytest.mark.parametrize("kind", ["transactional", "control"])
def test_stops_before_a_transactional_or_control_batch(tmp_path, kind):
    batches = random_batches(1, 10)
    stop_at = sum(map(len, batches[:6]))
    base = HEADER.unpack_from(batches[6])[0]
    special = encode_batch(
        base, [Record(timestamp=1, key=b"k1", value=b"x")], producer_id=7, producer_epoch=0, **{kind: True}
    )
    data = b"".join(batches[:6]) + special + b"".join(batches[6:])
    fd = write(tmp_path, data)
    try:
        items, n_batches, keyed, pos, next_offset, stopped = fold_all(fd, len(data), 4096)
    finally:
        os.close(fd)
    assert (items, keyed) == reference(batches[:6])
    assert (n_batches, pos, next_offset, stopped) == (6, stop_at, base, True)


@pytest.mark.parametrize("damage", ["crc", "magic", "torn", "short_tail", "length"])
def test_stops_before_bytes_that_are_not_a_valid_batch(tmp_path, damage):
    batches = random_batches(2, 10)
    stop_at = sum(map(len, batches[:4]))
    data = bytearray(b"".join(batches))
    if damage == "crc":
        data[stop_at + len(batches[4]) - 1] ^= 0xFF
    elif damage == "magic":
        data[stop_at + 16] = 1
    elif damage == "length":
        data[stop_at + 8 : stop_at + 12] = (10).to_bytes(4, "big")  # shorter than a header
    else:
        del data[stop_at + (len(batches[4]) - 1 if damage == "torn" else 30) :]
    fd = write(tmp_path, bytes(data))
    try:
        for chunk in (61, 4096):
            items, n_batches, keyed, pos, _, stopped = fold_all(fd, len(data), chunk)
            assert (items, keyed) == reference(batches[:4])
            assert (n_batches, pos, stopped) == (4, stop_at, True)
    finally:
        os.close(fd)


def test_a_batch_bigger_than_the_chunk_is_read_whole(tmp_path):
    big = encode_batch(
        0, [Record(timestamp=1, key=b"a", value=bytes(50_000)), Record(timestamp=1, key=b"b", value=b"1")]
    )
    small = encode_batch(2, [Record(timestamp=1, key=b"a", value=b"2")])
    data = small + big + small
    fd = write(tmp_path, data)
    try:
        items, n_batches, _, pos, _, stopped = fold_all(fd, len(data), 1000)
    finally:
        os.close(fd)
    assert items == [(b"b", b"1"), (b"a", b"2")]
    assert (n_batches, pos, stopped) == (3, len(data), False)


def test_malformed_records_under_a_good_crc_raise(tmp_path):
    good = encode_batch(0, [Record(timestamp=1, key=b"a", value=b"12345")])
    fields = list(HEADER.unpack_from(good))
    fields[12] = 2  # two records claimed, one present
    bad = encode_batch(0, [Record(timestamp=1, key=b"a", value=b"12345")])
    bad = HEADER.pack(*fields) + bad[HEADER.size :]
    from storage.batch.layout import CRC, CRC_AT, batch_crc

    bad = bad[:CRC_AT] + CRC.pack(batch_crc(bad)) + bad[CRC_AT + 4 :]
    fd = write(tmp_path, good + bad)
    try:
        with pytest.raises(InvalidBatch):
            fold_region(fd, 0, len(good + bad), {})
    finally:
        os.close(fd)


def test_fold_latest_reads_any_buffer_alike():
    batch = random_batches(3, 1)[0]
    fields = HEADER.unpack_from(batch)
    results = []
    for buf in (batch, bytearray(batch), memoryview(batch)):
        latest: dict[bytes, bytes | None] = {}
        data, pos, end = records_region(buf, 0, fields[1] + LOG_OVERHEAD, fields[5])
        n = fold_latest(data, pos, end, fields[12], latest)
        assert all(type(k) is bytes and (v is None or type(v) is bytes) for k, v in latest.items())
        results.append((n, list(latest.items())))
    assert results[0] == results[1] == results[2]
