"""Run a client as a subprocess with a hard deadline and parse the JSON it prints.

The child is killed when the deadline passes (subprocess.run's timeout), so a client that hangs
fails the test instead of stalling the suite. A client's own logging goes to its stderr, which
is captured and only shown in the failure message. A missing executable FAILS the test with a
pointer to scripts/install_test_deps.sh: CI installs every client, so a skip would hide a gap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL_HINT = "run scripts/install_test_deps.sh (CI does)"

# Upper bound for any one client run; the brief for interop tests is "bounded by <= 60 s".
MAX_TIMEOUT = 60.0
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class ClientRun:
    """What one subprocess did: enough to explain a failure without rerunning it."""

    argv: tuple[str, ...]
    returncode: int | None  # None: killed at the deadline
    stdout: str
    stderr: str

    def describe(self) -> str:
        status = "killed at deadline" if self.returncode is None else f"exit {self.returncode}"
        return (
            f"$ {' '.join(self.argv)}  ({status})\n"
            f"---- stdout ----\n{self.stdout.rstrip()}\n"
            f"---- stderr ----\n{self.stderr.rstrip()}"
        )


def require_executable(name: str) -> str:
    """Path of `name` on PATH, or fail the test (not skip) saying how to install it."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: {INSTALL_HINT}", pytrace=False)
    return path


def run_json(
    argv: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Any, ClientRun]:
    """Run `argv`, require exit 0, and parse the last non-empty stdout line as JSON.

    Only the last line is parsed so that a stray banner on stdout cannot break the protocol:
    each script prints its single result as its final line. Raises AssertionError carrying the
    captured output on timeout, non-zero exit or unparsable output.
    """
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be in (0, {MAX_TIMEOUT}] seconds, got {timeout}")
    full_env = {**os.environ, **(env or {})}
    argv = tuple(argv)
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:  # subprocess.run has already killed the child
        run = ClientRun(argv, None, _text(exc.stdout), _text(exc.stderr))
        raise AssertionError(f"client did not finish within {timeout:g}s\n{run.describe()}") from None
    run = ClientRun(argv, done.returncode, done.stdout, done.stderr)
    if done.returncode != 0:
        raise AssertionError(f"client failed\n{run.describe()}")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if not lines:
        raise AssertionError(f"client printed no JSON result\n{run.describe()}")
    try:
        return json.loads(lines[-1]), run
    except json.JSONDecodeError as exc:
        raise AssertionError(f"client's last stdout line is not JSON ({exc})\n{run.describe()}") from None


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data
