"""Optional compiled copies of the hot loops: which one runs.

`FOLD` is the module whose `fold_records` the loader runs: `_fold_native` (fold_kernel.py
compiled by mypyc: `python -m storage.batch.build_native`, i.e. `make native`) when it is
there and was built from the current fold_kernel.py (the build records the source's SHA-256;
a stale or foreign build is ignored), otherwise fold_kernel itself. Both run the same source,
so they give the same results; the tests run both when the compiled one is built.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from pathlib import Path
from types import ModuleType

from . import fold_kernel

__all__ = ["FOLD", "NATIVE_MODULE", "compiled_fold", "source_digest"]

log = logging.getLogger(__name__)
NATIVE_MODULE = "_fold_native"


def source_digest(module: ModuleType) -> str:
    assert module.__file__ is not None
    return hashlib.sha256(Path(module.__file__).read_bytes()).hexdigest()


def compiled_fold() -> ModuleType | None:
    """The compiled fold_kernel if it is built from the current source, else None."""
    try:
        native = importlib.import_module(f"{__package__}.{NATIVE_MODULE}")
    except ImportError:
        return None
    if getattr(native, "SOURCE_SHA256", None) != source_digest(fold_kernel):
        log.warning("%s was built from another fold_kernel.py: ignored (rebuild: make native)", native.__file__)
        return None
    return native


FOLD: ModuleType = compiled_fold() or fold_kernel
