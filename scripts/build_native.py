"""Build the optional compiled modules (`make native`): mypyc (the `dev` extra; needs a C
compiler) compiles a copy of each module in `targets()` -- the storage kernels (load, cleaner,
append) and the commit path's record encoding -- into
`_<name>_native*.so` next to its source, each copy stamped with the SHA-256 its loader checks
(storage/batch/native.py), so a stale build is ignored, never run.

It builds in a temporary tree holding a copy of the packages, so that mypyc's setuptools run never
reads the project's pyproject.toml; every module is its own extension, compiled in parallel
(-j, default: the CPU count); a copy already built from the current sources is kept (--force
rebuilds it). KGC_NATIVE=0 ignores every build at run time; deleting the .so files goes back to
pure Python for good.

    python scripts/build_native.py [--only kernels,offset_encoding] [-j N] [-O 0-3] [--force]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PACKAGES = ("protocol", "storage", "coordinator")
IGNORE = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "node_modules")
SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
paths, jobs, opt = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
setup(name="kgc-native", ext_modules=mypycify(paths, separate=True, opt_level=opt),
      script_args=["build_ext", "--inplace", "-j", jobs])
"""


def targets(only: set[str] | None = None) -> list[tuple[str, Path, str]]:
    """(group, source file, stamp) of every compiled module."""
    from coordinator.groups import offset_encoding
    from storage.batch import kernels
    from storage.batch import native as storage_native

    found = [
        ("kernels", Path(kernels.__file__ or ""), storage_native.source_digest(kernels)),
        ("offset_encoding", Path(offset_encoding.__file__ or ""), storage_native.source_digest(offset_encoding)),
    ]
    return [t for t in found if only is None or t[0] in only]


def is_current(source: Path, stamp: str) -> bool:
    """An installed copy of `source` built from the sources `stamp` digests (rebuilding it would
    write the same thing)."""
    rel = source.resolve().relative_to(ROOT)
    name = ".".join((*rel.parent.parts, f"_{rel.stem}_native"))
    try:
        return getattr(importlib.import_module(name), "SOURCE_SHA256", None) == stamp
    except ImportError:
        return False


def build(
    only: set[str] | None = None, jobs: int = os.cpu_count() or 1, opt: str = "3", force: bool = False
) -> list[Path]:
    """Compile and install the copies that are missing or stale (all with `force`); returns the
    files written next to their sources."""
    chosen = [t for t in targets(only) if force or not is_current(t[1], t[2])]
    if not chosen:
        return []
    with tempfile.TemporaryDirectory(prefix="kgc-native-") as tmp:
        for package in PACKAGES:
            shutil.copytree(ROOT / package, Path(tmp, package), ignore=IGNORE)
        paths = []
        for _, source, stamp in chosen:
            rel = source.resolve().relative_to(ROOT)
            copy = Path(tmp, rel.parent, f"_{rel.stem}_native.py")
            copy.write_text(source.read_text() + f'\n\nSOURCE_SHA256 = "{stamp}"\n')
            paths.append(str(copy.relative_to(tmp)))
        subprocess.run([sys.executable, "-c", SETUP, ",".join(paths), str(jobs), opt], cwd=tmp, check=True)
        written = []
        for path in paths:
            built_dir, stem = Path(tmp, path).parent, Path(path).stem
            for built in sorted(built_dir.glob(f"{stem}*.so")):
                target = ROOT / built.relative_to(tmp)
                partial = target.with_name(target.name + ".partial")
                shutil.copy(built, partial)
                os.replace(partial, target)  # a new inode: running processes keep the one they mapped
                written.append(target)
            if not any(w.name.startswith(stem + ".") for w in written):
                raise RuntimeError(f"mypyc built no extension module for {path}")
        return written


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="groups: kernels, offset_encoding (default: both)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-O", "--opt", default="3", choices="0123")
    parser.add_argument("--force", action="store_true", help="rebuild copies that are current too")
    args = parser.parse_args()
    start = time.monotonic()
    files = build(set(args.only.split(",")) if args.only else None, args.jobs, args.opt, args.force)
    for path in files:
        print(f"built {path.relative_to(ROOT)}")
    print(f"{len(files)} files in {time.monotonic() - start:.0f} s")
