"""The per-record kernels, pure Python and (when `make native` built them) compiled by mypyc:
both fold and map every record shape as the record-by-record reference does and raise
InvalidBatch alike on records that run past their batch; a build from another source is never
used."""

from __future__ import annotations

import hashlib
import random
import types

import pytest

from storage.batch import InvalidBatch, Record, encode_batch, native
from storage.batch import kernels as pure
from storage.batch.layout import HEADER, LOG_OVERHEAD
from storage.batch.record_walk import records_region
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
    assert native.KERNELS is (COMPILED or pure)
    stale = types.SimpleNamespace(SOURCE_SHA256="0" * 64, __file__="stale.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: stale)
    assert native.compiled_kernels() is None
    fresh = types.SimpleNamespace(SOURCE_SHA256=native.source_digest(), __file__="fresh.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: fresh)
    assert native.compiled_kernels() is fresh
