"""Issue 27: `kgc serve` refuses before it binds any port (coordinator/preflight.py).

Each case runs the real command on a port this test holds listening. A server that bound its port
before refusing would fail there first ("port N is in use"); the data dir's (or the setting's)
one-line error shows that the refusal came before any bind, so a harness waiting for the port
never sees it accept. The last case is the control: with nothing to refuse, the same held port
is what stops the start.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

KGC = Path(sys.executable).with_name("kgc")
DEADLINE = 30  # seconds: a safety net against hangs


@pytest.fixture
def held_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as held:
        yield held.getsockname()[1]


def serve(port: int, data_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [str(KGC)] if KGC.exists() else [sys.executable, "-m", "coordinator"]
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data_dir), *extra]
    return subprocess.run(command + args, capture_output=True, text=True, timeout=DEADLINE)


def refused(result: subprocess.CompletedProcess[str], port: int, *words: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgc: "), result.stderr
    assert f"port {port}" not in lines[0], "the port was bound before the refusal: " + lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert result.stdout == ""  # never "serving"
    return lines[0]


def test_a_file_as_data_dir_is_refused_before_the_port(tmp_path, held_port):
    (tmp_path / "f").write_text("x")
    refused(serve(held_port, tmp_path / "f"), held_port, "is a file, not a directory")


def test_a_foreign_non_empty_dir_is_refused_before_the_port(tmp_path, held_port):
    (tmp_path / "notes.txt").write_text("mine")
    refused(serve(held_port, tmp_path), held_port, "not empty (notes.txt)", "--adopt-data-dir")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing written into it


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty directory nobody can create files in: immutable for root (who ignores modes),
    mode 0500 for anyone else."""
    path = tmp_path / "ro"
    path.mkdir()
    root = os.getuid() == 0
    if root:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
            pytest.skip("root, and no chattr +i on this file system: no directory root cannot write")
    else:
        path.chmod(0o500)
    try:
        yield path
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o700)


def test_an_unwritable_dir_is_refused_before_the_port(unwritable_dir, held_port):
    refused(serve(held_port, unwritable_dir), held_port, str(unwritable_dir), "choose a directory you can write")


def test_settings_that_fail_later_are_refused_before_the_port(tmp_path, held_port):
    refused(
        serve(held_port, tmp_path / "a", "--transcript", str(tmp_path / "no" / "t.jsonl")), held_port, "does not exist"
    )
    refused(
        serve(held_port, tmp_path / "b", "--set", "control.host=10.1.2.3", "--control-port", "0"),
        held_port,
        "control.token",
    )
    with socket.create_server(("127.0.0.1", 0)) as metrics:
        port = metrics.getsockname()[1]
        refused(
            serve(held_port, tmp_path / "c", "--metrics-port", str(port)), held_port, "metrics.port", f"port {port}"
        )


def test_with_nothing_to_refuse_the_held_port_is_what_stops_the_start(tmp_path, held_port):
    result = serve(held_port, tmp_path / "d")
    assert result.returncode == 2 and f"port {held_port} is in use" in result.stderr, result.stderr
