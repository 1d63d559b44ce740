"""Run one blocking call (an fdatasync) in a long-lived worker thread, for a trio task.

`trio.to_thread.run_sync` adds ~110 us of CPU to a 0.1 ms fdatasync (a context copy, thread
renames, a limiter, a report back through the run loop's wakeup socket, a system task hop, GIL
ping-pong); a durable reply pays it on every group commit. Here a worker waits on its own
eventfd, the caller hands it (fn, arg) and waits (trio.lowlevel.wait_readable) on the worker's
second eventfd: ~30 us over an fdatasync on the loop itself. Invariants: a worker runs one call
at a time and goes back to the idle pool only after its caller has read its result; the caller's
wait cannot be abandoned (the call runs to its end, as to_thread.run_sync does by default).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

import trio

__all__ = ["run_in_worker"]

# Beyond this many calls at once, calls go through trio.to_thread.run_sync and its limiter
# instead of growing the pool. Each log has at most one sync in flight in group_commit mode, and
# 64 groups' commits spread over ~36 of the 50 offsets partitions: 32 sent some to to_thread.
MAX_WORKERS = 64

_ONE = (1).to_bytes(8, sys.byteorder)  # what an eventfd is written; a pipe takes it as well
_idle: list[_Worker] = []  # list.pop/append are atomic: trio runs in several threads share it
_started = 0


async def run_in_worker(fn: Callable[[int], None], arg: int) -> None:
    """`fn(arg)` in a worker thread; raises what it raised. Not a cancel point (a schedule
    point): `fn` always runs, so it may own `arg` (close it); the caller checkpoints first."""
    worker: _Worker | None
    try:
        worker = _idle.pop()
    except IndexError:
        worker = _new_worker()
        if worker is None:  # at the cap, or out of threads/fds: trio's pool and its limiter
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(fn, arg)
            return
    worker.fn, worker.arg = fn, arg
    os.write(worker.job_w, _ONE)
    try:
        await trio.lowlevel.wait_readable(worker.done_r)
    except BaseException:  # cancelled: the call cannot be abandoned, so wait for its end first
        with trio.CancelScope(shield=True):  # (not on the fast path: a scope costs ~10 us)
            await trio.lowlevel.wait_readable(worker.done_r)
        _finish(worker)
        raise
    error = _finish(worker)
    if error is not None:
        raise error


def _finish(worker: _Worker) -> BaseException | None:
    """Consume the worker's done signal, return it to the pool, and give its call's error."""
    os.read(worker.done_r, 8)
    error, worker.error, worker.fn = worker.error, None, None
    _idle.append(worker)
    return error


def _forget_workers() -> None:
    """In a forked child: the workers' threads did not come along but their eventfds did (shared
    with the parent), so a child's call would wake a parent's worker and never run: start afresh
    (`kgc verify` forks multiprocessing pools)."""
    global _started
    for worker in _idle:
        for fd in {worker.job_r, worker.job_w, worker.done_r, worker.done_w}:
            os.close(fd)
    _idle.clear()  # busy workers' fds stay open in the child: their callers were not copied
    _started = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def _eventfd(nonblocking: bool) -> tuple[int, int]:
    """(read end, write end): one eventfd where there is one (Linux), else a pipe."""
    if hasattr(os, "eventfd"):
        fd = os.eventfd(0, os.EFD_CLOEXEC | (os.EFD_NONBLOCK if nonblocking else 0))
        return fd, fd
    r, w = os.pipe()
    os.set_blocking(r, not nonblocking)
    return r, w


def _new_worker() -> _Worker | None:
    global _started
    if _started >= MAX_WORKERS:
        return None
    fds: list[int] = []
    try:
        job = _eventfd(nonblocking=False)  # the worker blocks reading it
        fds += set(job)
        done = _eventfd(nonblocking=True)  # the caller waits for it in trio
        fds += set(done)
        worker = _Worker(job, done)
        threading.Thread(target=worker.run, name=f"kgc-fsync-{_started + 1}", daemon=True).start()
    except (OSError, RuntimeError):  # EMFILE, or "can't start new thread"
        for fd in fds:
            os.close(fd)
        return None
    _started += 1
    return worker


class _Worker:
    def __init__(self, job: tuple[int, int], done: tuple[int, int]) -> None:
        self.fn: Callable[[int], None] | None = None
        self.arg = -1
        self.error: BaseException | None = None
        self.job_r, self.job_w = job
        self.done_r, self.done_w = done

    def run(self) -> None:
        while True:
            os.read(self.job_r, 8)
            fn = self.fn
            try:
                if fn is not None:
                    fn(self.arg)
            except BaseException as exc:  # handed to the caller, raised there
                self.error = exc
            os.write(self.done_w, _ONE)
