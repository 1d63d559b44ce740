"""A class-data-sharing archive of the Spark driver's classes, kept between runs.

Spark's driver JVM loads thousands of classes by searching ~280 jars one after another; a
profile of a 1 GiB `kgc verify` put a fifth of its Java samples there. The JVM (JDK 13+) can
record the classes a run loaded (-XX:ArchiveClassesAtExit) and map them in later runs
(-XX:SharedArchiveFile). Invariants: an archive is published (atomically, under a name keyed
by the Java binary and the pyspark jars) only after the JVM that wrote it exited cleanly and
a JVM mapped it; a run never writes the archive other runs read. A stale archive (another
classpath) is refused by the JVM itself, quietly, and the run only loses the speed-up.
KGC_VERIFY_CLASS_ARCHIVE=0 turns it off.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass

__all__ = ["ClassArchive", "class_archive"]

_QUIET = "-Xlog:cds=off,cds+dynamic=off"  # a refused archive is not an error worth printing


@dataclass(frozen=True)
class ClassArchive:
    options: str  # for spark.driver.extraJavaOptions
    path: str  # the published archive
    writing: str | None  # where this run's JVM writes one (no archive yet), else None

    def publish(self, exit_code: int | None) -> None:
        """After this run's JVM exited: make its archive the published one if the JVM exited
        cleanly and a JVM maps it (a torn archive crashes the JVM that maps it)."""
        if self.writing is None or not os.path.exists(self.writing):
            return
        try:
            java = _java()
            if exit_code == 0 and java is not None:
                # A torn archive crashes this JVM: no crash report in the caller's directory.
                crash = ["-XX:ErrorFile=/dev/null", "-XX:-CreateCoredumpOnCrash"]
                check = [java, f"-XX:SharedArchiveFile={self.writing}", *crash, _QUIET, "-version"]
                if subprocess.run(check, capture_output=True, timeout=60).returncode == 0:
                    os.replace(self.writing, self.path)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if os.path.exists(self.writing):
                os.unlink(self.writing)


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else shutil.which("java")


def _key() -> str | None:
    """What the archive depends on: the Java binary and the jars Spark puts on its classpath."""
    import pyspark

    java = _java()
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if java is None or not os.path.isdir(jars):
        return None
    h = hashlib.sha256(os.path.realpath(java).encode())
    h.update(str(os.stat(os.path.realpath(java)).st_mtime_ns).encode())
    for name in sorted(os.listdir(jars)):
        st = os.stat(os.path.join(jars, name))
        h.update(f"{name} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:24]


def _remove_orphans(where: str) -> None:
    """Archives being written by runs that died before publishing them."""
    for name in os.listdir(where):
        parts = name.split(".")
        if len(parts) == 4 and parts[1] == "jsa" and parts[3] == "tmp" and parts[2].isdigit():
            try:
                os.kill(int(parts[2]), 0)
            except ProcessLookupError:
                os.unlink(os.path.join(where, name))
            except OSError:
                pass


def class_archive() -> ClassArchive | None:
    """The options that map the published archive or, when there is none, record one; None
    when turned off or when the cache directory cannot be made."""
    if os.environ.get("KGC_VERIFY_CLASS_ARCHIVE", "1") == "0":
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    where = os.path.join(cache, "kgc", "spark-classes")
    key = _key()
    try:
        os.makedirs(where, exist_ok=True)
    except OSError:
        return None
    if key is None:
        return None
    _remove_orphans(where)
    path = os.path.join(where, f"{key}.jsa")
    if os.path.exists(path):
        return ClassArchive(f"-XX:SharedArchiveFile={path} {_QUIET}", path, None)
    writing = f"{path}.{os.getpid()}.tmp"
    return ClassArchive(f"-XX:ArchiveClassesAtExit={writing} {_QUIET}", path, writing)
