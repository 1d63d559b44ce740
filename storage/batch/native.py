"""Optional compiled copies of the per-record loops: which module runs them.

`KERNELS` is the module whose `fold_records` (the loader) and `map_records` (the cleaner's offset
map) run: `_kernels_native` (kernels.py compiled by mypyc: `python -m storage.batch.build_native`,
i.e. `make native`) when it is there and was built from the current kernels.py (the build
records the sources' SHA-256; a stale or foreign build is ignored), otherwise kernels itself.
Both run the same source, so they give the same results; the tests run both when it is built.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from pathlib import Path
from types import ModuleType

from . import kernels, layout

__all__ = ["KERNELS", "NATIVE_MODULE", "compiled_kernels", "source_digest"]

log = logging.getLogger(__name__)
NATIVE_MODULE = "_kernels_native"


def source_digest() -> str:
    """SHA-256 of kernels.py and of layout.py, the one module it imports (its signatures are
    compiled into the build)."""
    digest = hashlib.sha256()
    for module in (kernels, layout):
        assert module.__file__ is not None
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def compiled_kernels() -> ModuleType | None:
    """The compiled kernels if they were built from the current source, else None."""
    try:
        native = importlib.import_module(f"{__package__}.{NATIVE_MODULE}")
    except ImportError:
        return None
    if getattr(native, "SOURCE_SHA256", None) != source_digest():
        log.info("%s was built from other sources: ignored (rebuild: make native)", native.__file__)
        return None
    return native


KERNELS: ModuleType = compiled_kernels() or kernels
