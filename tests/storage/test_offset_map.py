"""storage.offset_map: digests are MD5 (Kafka's SkimpyOffsetMap), and put_records' own record
walk maps exactly what the record-by-record reference (iter_records) says: each keyed record at
or after `start` by its key's digest, keyless ones as bits, tombstones seen, the latest offset."""

from __future__ import annotations

import hashlib
import random

import pytest

from storage.batch import InvalidBatch, Record, encode_batch, iter_records
from storage.batch.layout import HEADER, LOG_OVERHEAD
from storage.batch.record_walk import records_region
from storage.offset_map import OffsetMap, key_digest
from tests.storage.test_batch_fold import random_batches


def test_key_digest_is_md5():
    rng = random.Random(1)
    for n in (0, 1, 16, 55, 56, 64, 1000):
        key = rng.randbytes(n)
        assert key_digest(key) == hashlib.md5(key).digest()
        assert key_digest(memoryview(key)) == hashlib.md5(key).digest()


def reference(batches: list[bytes], start: int):
    mapped: dict[bytes, int] = {}
    keyless: set[int] = set()
    tombs: list[bool] = []
    latest = -1
    for batch in batches:
        tomb = False
        for r in iter_records(batch):
            assert r.offset is not None
            if r.offset < start:
                continue
            tomb = tomb or r.value is None
            if r.key is None:
                keyless.add(r.offset - start)
            else:
                mapped[hashlib.md5(r.key).digest()] = r.offset
                latest = r.offset
        tombs.append(tomb)
    return mapped, keyless, tombs, latest


@pytest.mark.parametrize("seed", range(4))
def test_put_records_maps_what_the_records_say(seed):
    batches = random_batches(seed)
    total = sum(HEADER.unpack_from(b)[6] + 1 for b in batches)
    start = random.Random(seed).randrange(total // 2)  # some batches straddle or precede it
    omap = OffsetMap(1 << 24)
    bits = bytearray(total // 8 + 1)
    tombs = []
    for batch in batches:
        fields = HEADER.unpack_from(batch)
        data, pos, end = records_region(batch, 0, fields[1] + LOG_OVERHEAD, fields[5])
        tombs.append(omap.put_records(data, pos, end, fields[12], fields[0], start, bits))
    mapped, keyless, ref_tombs, latest = reference(batches, start)
    assert omap._map == mapped
    assert {i for i in range(len(bits) * 8) if bits[i >> 3] >> (i & 7) & 1} == keyless
    assert tombs == ref_tombs
    assert omap.latest_offset == latest


def test_put_records_rejects_records_past_the_batch():
    batch = encode_batch(0, [Record(timestamp=1, key=b"a", value=b"x"), Record(timestamp=1, key=b"b", value=b"y")])
    fields = HEADER.unpack_from(batch)
    with pytest.raises(InvalidBatch):
        OffsetMap(1 << 20).put_records(batch, 61, len(batch) - 1, fields[12], 0, 0, bytearray(1))
    with pytest.raises(InvalidBatch):  # one record fewer than the bytes hold
        OffsetMap(1 << 20).put_records(batch, 61, len(batch), 1, 0, 0, bytearray(1))
