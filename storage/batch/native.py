"""Optional compiled copies of hot modules: which copy runs (the kernels here, and any module that
asks through `preferred`, e.g. coordinator/groups/offset_encoding.py).

`KERNELS` is the module whose `fold_records` (the loader), `map_records` (the cleaner's offset
map) and `encode_kv_batch` (a coordinator's append) run: `_kernels_native` (kernels.py compiled
by mypyc: `make native`, scripts/build_native.py) when it is there and was built from the
current kernels.py (the build records the sources' SHA-256; a stale or foreign build is
ignored), otherwise kernels itself; `preferred(module)` does the same for `_<name>_native` next
to any module, whose COMPILED_WITH names the modules its stamp also covers. KGC_NATIVE=0 in the
environment ignores every build. Both run the same source,
so they give the same results; the tests run both when it is built.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from pathlib import Path
from types import ModuleType

from . import kernels

__all__ = ["ENABLED", "KERNELS", "compiled_copy", "compiled_kernels", "native_name", "preferred", "source_digest"]

log = logging.getLogger(__name__)
ENABLED = os.environ.get("KGC_NATIVE", "1") != "0"


def source_digest(module: ModuleType = kernels) -> str:
    """SHA-256 of `module`'s source and of the modules in its COMPILED_WITH (those it calls whose
    signatures are compiled into the build: kernels.py's are layout.py and crc.py)."""
    digest = hashlib.sha256()
    for source in (module, *getattr(module, "COMPILED_WITH", ())):
        assert source.__file__ is not None
        digest.update(Path(source.__file__).read_bytes())
    return digest.hexdigest()


def native_name(module: ModuleType) -> str:
    """The compiled copy's module name: `_<name>_native` next to the source module."""
    package, _, name = module.__name__.rpartition(".")
    return f"{package}._{name}_native"


def compiled_copy(module: ModuleType) -> ModuleType | None:
    """The compiled copy of `module` if it was built from the current sources, else None."""
    try:
        native = importlib.import_module(native_name(module))
    except ImportError:
        return None
    if getattr(native, "SOURCE_SHA256", None) != source_digest(module):
        log.info("%s was built from other sources: ignored (rebuild: make native)", native.__file__)
        return None
    return native


def preferred(module: ModuleType) -> ModuleType:
    """What runs `module`'s functions: its compiled copy if built, current and enabled, else it."""
    return (compiled_copy(module) if ENABLED else None) or module


def compiled_kernels() -> ModuleType | None:
    """The compiled kernels if they were built from the current source, else None."""
    return compiled_copy(kernels)


KERNELS: ModuleType = preferred(kernels)
