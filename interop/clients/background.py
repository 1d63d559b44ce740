"""Long-running client subprocesses (kcat -G, node group members, a python consumer to SIGKILL).

`run_json` suits clients that finish by themselves; a group member runs until it is told to stop,
so a test must watch its output while it runs and then stop it (SIGTERM: close and leave) or kill
it (SIGKILL: no LeaveGroup). `BackgroundClient` collects stdout/stderr lines on reader threads and
kills the child at a hard deadline (<= MAX_TIMEOUT) whatever the test does, and on context exit.
Stdout lines that are JSON objects are the client's events (`events()`); the rest is log text
shown only in failure messages (`describe()`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from interop.clients.process import MAX_TIMEOUT
from tests.support.waiting import wait_until

_TAIL = 60  # lines of each stream kept in a failure message


class BackgroundClient:
    """One child process; use as a context manager so it never outlives the test."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        deadline: float = MAX_TIMEOUT,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not 0 < deadline <= MAX_TIMEOUT:
            raise ValueError(f"deadline must be in (0, {MAX_TIMEOUT}] seconds, got {deadline}")
        self.argv = tuple(str(a) for a in argv)
        self.name = name or Path(self.argv[0]).name
        self._deadline = deadline
        self._cwd, self._env = cwd, {**os.environ, **(env or {})}
        self._lock = threading.Lock()
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.killed_at_deadline = False
        self._proc: subprocess.Popen[str] | None = None
        self._threads: list[threading.Thread] = []
        self._timer: threading.Timer | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> BackgroundClient:
        self._proc = subprocess.Popen(
            self.argv,
            cwd=self._cwd,
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        for stream, sink in ((self._proc.stdout, self.stdout), (self._proc.stderr, self.stderr)):
            thread = threading.Thread(target=self._pump, args=(stream, sink), daemon=True, name=f"{self.name}-reader")
            thread.start()
            self._threads.append(thread)
        self._timer = threading.Timer(self._deadline, self._deadline_kill)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __enter__(self) -> BackgroundClient:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def _pump(self, stream: Any, sink: list[str]) -> None:
        for line in stream:
            with self._lock:
                sink.append(line.rstrip("\n"))

    def _deadline_kill(self) -> None:
        if self.returncode is None:
            self.killed_at_deadline = True
            self._send(signal.SIGKILL)

    def _send(self, sig: int) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._proc.send_signal(sig)
            except ProcessLookupError:
                pass

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def close_stdin(self) -> None:
        """Tell a script that stops on stdin EOF (the node/python members here) to stop."""
        if self._proc is not None and self._proc.stdin is not None and not self._proc.stdin.closed:
            try:
                self._proc.stdin.close()
            except OSError:
                pass

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Ask the client to stop (it closes and leaves its group), wait for its exit code.

        Fails with the client's output if it does not exit within `timeout` (it is then killed).
        """
        self._send(sig)
        self.close_stdin()
        return self.wait(timeout)

    def wait(self, timeout: float) -> int:
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"{self.name} did not exit within {timeout:g}s\n{self.describe()}") from None
        self._join_readers()
        return code

    def kill(self) -> None:
        """SIGKILL (no goodbye to the coordinator) and reap. Idempotent."""
        if self._proc is None:
            return
        self._send(signal.SIGKILL)
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
            pass
        if self._timer is not None:
            self._timer.cancel()
        self._join_readers()
        for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def _join_readers(self) -> None:
        for thread in self._threads:
            thread.join(5)

    # -- output ------------------------------------------------------------------------------------
    def lines(self, stream: str = "stdout") -> list[str]:
        with self._lock:
            return list(self.stdout if stream == "stdout" else self.stderr)

    def events(self) -> list[dict[str, Any]]:
        """Stdout lines that parse as JSON objects, in order."""
        out = []
        for line in self.lines("stdout"):
            if line.startswith("{"):
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(value, dict):
                    out.append(value)
        return out

    def wait_for(self, predicate: Callable[[BackgroundClient], Any], timeout: float, what: str) -> Any:
        """Poll `predicate(self)` until truthy; fail with `what` and the output. Fails fast if the
        child exits first (unless the predicate already holds)."""

        def check() -> Any:
            found = predicate(self)
            if not found and self.returncode is not None:
                raise AssertionError(f"{self.name} exited ({self.returncode}) before: {what}\n{self.describe()}")
            return found

        return wait_until(check, timeout, message=lambda: f"{what}\n{self.describe()}")

    def describe(self) -> str:
        code = self.returncode
        status = "killed at its deadline" if self.killed_at_deadline else "running" if code is None else f"exit {code}"
        out, err = self.lines("stdout"), self.lines("stderr")
        return (
            f"$ {' '.join(self.argv)}  ({status})\n"
            f"---- stdout (last {_TAIL} of {len(out)}) ----\n" + "\n".join(out[-_TAIL:]) + "\n"
            f"---- stderr (last {_TAIL} of {len(err)}) ----\n" + "\n".join(err[-_TAIL:])
        )
