"""The fold kernel, pure Python and (when `make native` built it) compiled by mypyc: both fold
every record shape as the record-by-record reference does and raise InvalidBatch alike on
records that run past their batch; a compiled build from another source is never used."""

from __future__ import annotations

import types

import pytest

from storage.batch import InvalidBatch, Record, encode_batch, native
from storage.batch import fold_kernel as pure
from storage.batch.layout import HEADER, LOG_OVERHEAD
from storage.batch.record_walk import records_region
from tests.storage.test_batch_fold import random_batches, reference

COMPILED = native.compiled_fold()
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


def test_the_loader_runs_the_compiled_kernel_only_when_built_from_this_source(monkeypatch):
    assert native.FOLD is (COMPILED or pure)
    stale = types.SimpleNamespace(SOURCE_SHA256="0" * 64, __file__="stale.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: stale)
    assert native.compiled_fold() is None
    fresh = types.SimpleNamespace(SOURCE_SHA256=native.source_digest(pure), __file__="fresh.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: fresh)
    assert native.compiled_fold() is fresh
