"""The per-record kernels, pure Python and (when `make native` built them) compiled by mypyc:
both fold and map every record shape as the record-by-record reference does and raise
InvalidBatch alike on records that run past their batch, encode_kv_batch writes the bytes the
general encoder writes; a build from another source (or with KGC_NATIVE=0) is never used."""

from __future__ import annotations

import hashlib
import random
import types

import pytest

from storage.batch import InvalidBatch, Record, encode_batch, native
from storage.batch import kernels as pure
from storage.batch.layout import HEADER, LOG_OVERHEAD
from storage.batch.record_walk import records_region
from storage.batch.records import encode_batch_and_header
from tests.storage.test_batch_fold import random_batches, reference
from tests.storage.test_offset_map import reference as map_reference

COMPILED = native.compiled_kernels()
KERNELS = [
    pytest.param(pure, id="pure"),
    pytest.param(COMPILED, id="compiled", marks=pytest.mark.skipif(COMPILED is None, reason="not built (make native)")),
]


def fold_with(kernel, batches):
    latest: dict[bytes, bytes | None] = {}
    keyed = 0
    for batch in batches:
        fields = HEADER.unpack_from(batch)
        data, pos, end = records_region(batch, 0, fields[1] + LOG_OVERHEAD, fields[5])
        keyed += kernel.fold_records(bytes(data), pos, end, fields[12], latest)
    return list(latest.items()), keyed


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("seed", range(6))
def test_kernel_equals_the_record_by_record_reference(kernel, seed):
    batches = random_batches(seed)
    assert fold_with(kernel, batches) == reference(batches)


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_rejects_records_past_the_batch(kernel):
    batch = encode_batch(0, [Record(timestamp=1, key=b"a", value=b"xyz"), Record(timestamp=1, key=b"b", value=None)])
    count = HEADER.unpack_from(batch)[12]
    for end, n in ((len(batch) - 1, count), (len(batch), count - 1), (len(batch), count + 1)):
        with pytest.raises(InvalidBatch):
            kernel.fold_records(batch, HEADER.size, end, n, {})


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("seed", range(4))
def test_map_kernel_equals_the_record_by_record_reference(kernel, seed):
    batches = random_batches(seed)
    total = sum(HEADER.unpack_from(b)[6] + 1 for b in batches)
    start = random.Random(seed).randrange(total // 2)
    mapped: dict[bytes, int] = {}
    bits = bytearray(total // 8 + 1)
    tombs, latest = [], -1
    for batch in batches:
        fields = HEADER.unpack_from(batch)
        data, pos, end = records_region(batch, 0, fields[1] + LOG_OVERHEAD, fields[5])
        tomb, last = kernel.map_records(bytes(data), pos, end, fields[12], fields[0], start, bits, mapped, hashlib.md5)
        tombs.append(tomb)
        latest = max(latest, last)
    ref_mapped, keyless, ref_tombs, ref_latest = map_reference(batches, start)
    assert (mapped, tombs, latest) == (ref_mapped, ref_tombs, ref_latest)
    assert {i for i in range(len(bits) * 8) if bits[i >> 3] >> (i & 7) & 1} == keyless


@pytest.mark.parametrize("kernel", KERNELS)
def test_map_kernel_rejects_records_past_the_batch(kernel):
    batch = encode_batch(0, [Record(timestamp=1, key=b"a", value=b"xyz"), Record(timestamp=1, key=None, value=None)])
    count = HEADER.unpack_from(batch)[12]
    for end, n in ((len(batch) - 1, count), (len(batch), count - 1), (len(batch), count + 1)):
        with pytest.raises(InvalidBatch):
            kernel.map_records(batch, HEADER.size, end, n, 0, 0, bytearray(1), {}, hashlib.md5)


def test_the_loader_runs_the_compiled_kernel_only_when_built_from_this_source(monkeypatch):
    assert native.KERNELS is ((COMPILED if native.ENABLED else None) or pure)
    stale = types.SimpleNamespace(SOURCE_SHA256="0" * 64, __file__="stale.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: stale)
    assert native.compiled_kernels() is None
    fresh = types.SimpleNamespace(SOURCE_SHA256=native.source_digest(), __file__="fresh.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: fresh)
    assert native.compiled_kernels() is fresh


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("seed", range(4))
def test_encode_kv_batch_writes_what_the_general_encoder_writes(kernel, seed):
    rng = random.Random(seed)
    for count in (1, 3, 130):  # 130: offset deltas past one varint byte
        pairs = [
            (
                rng.randbytes(rng.choice((0, 5, 70, 200))),
                None if rng.random() < 0.2 else rng.randbytes(rng.choice((0, 9, 150))),
            )
            for _ in range(count)
        ]
        batch, header = kernel.encode_kv_batch(1000 + seed, pairs, 1_700_000_000_000)
        records = [Record(offset=None, timestamp=1_700_000_000_000, key=k, value=v) for k, v in pairs]
        assert (batch, header) == encode_batch_and_header(1000 + seed, records)
    with pytest.raises(ValueError):
        kernel.encode_kv_batch(0, [], 0)
