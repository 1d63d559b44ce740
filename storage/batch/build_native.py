"""Build the optional compiled kernels (`make native`): mypyc (the `dev` extra) compiles a
copy of kernels.py, stamped with native.source_digest() (kernels.py and layout.py), into
storage/batch/_kernels_native*.so.
It builds in a temporary tree holding only the modules the kernel imports, so that mypyc's
setuptools run never reads the project's pyproject.toml. Delete the .so files to go back to
pure Python; native.py ignores a build whose stamp no longer matches the source.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .native import NATIVE_MODULE, source_digest

HERE = Path(__file__).resolve().parent


def build() -> list[Path]:
    """Compile and install the kernels; returns the files written next to this module."""
    with tempfile.TemporaryDirectory(prefix="kgc-native-") as tmp:
        package = Path(tmp, "storage", "batch")
        package.mkdir(parents=True)
        Path(tmp, "storage", "__init__.py").write_text("")
        (package / "__init__.py").write_text("")
        shutil.copy(HERE / "layout.py", package / "layout.py")  # what kernels imports
        source = (HERE / "kernels.py").read_text()
        stamp = f'\n\nSOURCE_SHA256 = "{source_digest()}"\n'
        (package / f"{NATIVE_MODULE}.py").write_text(source + stamp)
        mypyc = shutil.which("mypyc", path=os.path.dirname(sys.executable)) or "mypyc"
        subprocess.run([mypyc, f"storage/batch/{NATIVE_MODULE}.py"], cwd=tmp, check=True)
        written = []
        for built in package.glob(f"{NATIVE_MODULE}*.so"):
            target = HERE / built.name
            partial = target.with_name(target.name + ".partial")
            shutil.copy(built, partial)
            os.replace(partial, target)  # a new inode: running processes keep the one they mapped
            written.append(target)
        if not written:
            raise RuntimeError("mypyc built no extension module")
        return written


if __name__ == "__main__":
    for path in build():
        print(f"built {path}")
