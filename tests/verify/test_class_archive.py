"""The driver JVM's class-data-sharing archive: a run without one records one, only a clean
exit publishes it (never a torn file), later runs map it, and the switch turns it off. The
archives here are written by a bare `java -version` (a second each), not by Spark."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

pytest.importorskip("pyspark")

from coordinator.verify.class_archive import class_archive  # noqa: E402

JAVA = shutil.which("java")
pytestmark = pytest.mark.skipif(JAVA is None, reason="needs Java")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KGC_VERIFY_CLASS_ARCHIVE", raising=False)
    return tmp_path


def _record(options: str) -> int:
    """A JVM run with the archive's options, as the Spark driver gets them."""
    assert JAVA is not None
    return subprocess.run([JAVA, *options.split(), "-version"], capture_output=True, timeout=120).returncode


def test_a_clean_exit_publishes_the_archive_and_later_runs_map_it(cache):
    first = class_archive()
    assert first is not None and first.writing is not None
    assert f"-XX:ArchiveClassesAtExit={first.writing}" in first.options.split()
    first.publish(_record(first.options))
    assert os.path.exists(first.path) and not os.path.exists(first.writing)
    later = class_archive()
    assert later is not None and later.writing is None and later.path == first.path
    assert f"-XX:SharedArchiveFile={first.path}" in later.options.split()
    assert _record(later.options) == 0


def test_a_failed_run_or_a_torn_archive_is_not_published(cache, tmp_path, monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    failed = class_archive()
    assert failed is not None and failed.writing is not None
    _record(failed.options)
    failed.publish(1)  # the JVM exited with an error: its archive may be incomplete
    assert not os.path.exists(failed.path) and not os.path.exists(failed.writing)

    torn = class_archive()
    assert torn is not None and torn.writing is not None
    assert _record(torn.options) == 0
    size = os.path.getsize(torn.writing)
    with open(torn.writing, "r+b") as f:
        f.truncate(size // 2)
    torn.publish(0)  # a JVM that maps the half archive dies: it is dropped
    assert not os.path.exists(torn.path) and not os.path.exists(torn.writing)
    assert list(work.iterdir()) == []  # and leaves no crash report behind


def test_the_switch_turns_it_off(cache, monkeypatch):
    monkeypatch.setenv("KGC_VERIFY_CLASS_ARCHIVE", "0")
    assert class_archive() is None
