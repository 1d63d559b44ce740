"""Which copy of a generated codec module runs: the mypyc-compiled one or the Python source.

`codec_module(name)` is protocol/codecs/<name> (None for an API without a module): its compiled
copy `protocol/codecs/_<name>_native` when `make native` (scripts/build_native.py) built it from
the current source, otherwise the source module itself. A build records the SHA-256 of the
source (and of the runtime modules it calls) as SOURCE_SHA256; a stale or foreign build is
ignored. KGC_NATIVE=0 in the environment ignores every compiled module (storage/batch/native.py
reads the same switch). Both copies run the same source, so they give the same bytes.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from pathlib import Path
from types import ModuleType

__all__ = ["ENABLED", "RUNTIME", "codec_module", "compiled_codec", "source_digest"]

log = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("KGC_NATIVE", "1") != "0"
# What a codec module calls whose signatures the compiled copy relies on (its return types are
# checked by the compiled code): a change to one of them makes every build stale.
RUNTIME = ("codec_runtime.py", "ints.py", "errors.py")
_MODULES: dict[str, ModuleType | None] = {}


def source_digest(name: str) -> str:
    """SHA-256 of protocol/codecs/<name>.py and of the runtime modules it calls."""
    digest = hashlib.sha256()
    for path in (HERE / "codecs" / f"{name}.py", *(HERE / r for r in RUNTIME)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def compiled_codec(name: str) -> ModuleType | None:
    """The compiled copy of codec module `name` if it was built from the current source."""
    try:
        compiled = importlib.import_module(f"{__package__}.codecs._{name}_native")
    except ImportError:
        return None
    if getattr(compiled, "SOURCE_SHA256", None) != source_digest(name):
        log.info("%s was built from other sources: ignored (rebuild: make native)", compiled.__file__)
        return None
    return compiled


def codec_module(name: str) -> ModuleType | None:
    """The codec module of API module `name` that runs (compiled if enabled and current), or None."""
    try:
        return _MODULES[name]
    except KeyError:
        pass
    module = compiled_codec(name) if ENABLED else None
    if module is None and (HERE / "codecs" / f"{name}.py").exists():
        module = importlib.import_module(f"{__package__}.codecs.{name}")
    _MODULES[name] = module
    return module
