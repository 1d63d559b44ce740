"""`kgc serve` as a child process, for tests that need a real process (kill -9 and restart on the
same data dir): started on port 0, its bootstrap address read from the line it prints once it
serves ("kgc: serving bootstrap=HOST:PORT ..."). Waits only for that line, bounded by a deadline.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]


def start_serve(
    data_dir: str, *args: str, stderr: IO[Any] | int | None = None, timeout: float = 30.0
) -> tuple[subprocess.Popen[str], str]:
    """`python -m coordinator serve --port 0 --data-dir DATA_DIR --log-level WARNING *ARGS` from
    the checkout; (the process, its bootstrap address) once it serves. A server that exits or
    does not serve within `timeout` fails the test (and is killed)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coordinator", "serve", "--port", "0", "--data-dir", data_dir, "--log-level", "WARNING"]
        + list(args),
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while True:
        line = proc.stdout.readline()  # the server prints it once, at start
        if not line:
            raise AssertionError(f"the server exited ({proc.wait()}) before serving")
        if "bootstrap=" in line:
            return proc, line.split("bootstrap=", 1)[1].split()[0]
        if time.monotonic() > deadline:
            proc.kill()  # never leave a server behind
            proc.wait(30)
            raise AssertionError("the server did not start in time")
