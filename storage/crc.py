"""CRC-32C (Castagnoli): the checksum of record batches, producer snapshots and telemetry payloads.

`crc32c` is the `crc32c` package's C function. Importing that package runs its __init__, which
reads the package's own version with importlib.metadata and imports its command line (email,
zipfile, argparse: ~17 ms of every `kgc serve` start-up, none of it used here), so the C extension
is loaded on its own, and registered as `crc32c._crc32c` so that a later `import crc32c` reuses
it. If the package is laid out otherwise, it is imported as usual: same function, slower start.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

__all__ = ["crc32c"]

_EXTENSION = "crc32c._crc32c"


def _extension() -> Any:
    module = sys.modules.get(_EXTENSION)
    if module is not None:
        return module
    package = importlib.util.find_spec("crc32c")  # a top-level spec: found, not executed
    locations = package.submodule_search_locations if package is not None else None
    if locations:
        loader = (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)
        for location in locations:
            spec = importlib.machinery.FileFinder(location, loader).find_spec(_EXTENSION)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                sys.modules[_EXTENSION] = module
                return module
    import crc32c as whole  # not the layout above: the package's own way

    return whole


if TYPE_CHECKING:
    from crc32c import crc32c
else:
    crc32c = _extension().crc32c
