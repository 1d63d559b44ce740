"""Durability waits for one log: the trio group committer behind `Log.wait_durable`.

Group commit: one fdatasync of the active `.log`, in a worker thread, covers every batch appended
before it started; callers arriving while it runs share the next one (one leads, the rest follow),
so N concurrent appenders cost about N/k fsyncs. Invariants: `durable_offset` only moves forward,
after a successful sync (or a flush reported by `advance`); a failed sync fails the log and wakes
every waiter. The committer knows nothing of Log: it is given what to fsync, the end offset, and
how to check and fail the log.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Literal

import trio

from . import fsutil, fsync_worker

__all__ = ["GroupCommitter", "DurabilityMode"]

DurabilityMode = Literal["every_append", "group_commit", "interval"]


class GroupCommitter:
    def __init__(
        self,
        mode: DurabilityMode,
        flush_interval_ms: int,
        *,
        durable_offset: int,
        end_offset: Callable[[], int],
        sync_fd: Callable[[], int],
        check_writable: Callable[[], None],
        fail: Callable[[BaseException], None],
    ) -> None:
        """`end_offset()`: the log end offset now; `sync_fd()`: a new descriptor (the committer
        closes it) of the file whose fdatasync makes everything below `end_offset()` durable;
        `check_writable()`: raises if the log is failed or closed; `fail(exc)`: fails the log."""
        self.mode = mode
        self.flush_interval_ms = flush_interval_ms
        self._durable_offset = durable_offset
        self._end_offset = end_offset
        self._sync_fd = sync_fd
        self._check_writable = check_writable
        self._fail = fail
        self._sync_running: tuple[int, trio.Event] | None = None  # (target offset, done)
        self._next_sync: trio.Event | None = None  # the queued fsync's done event

    @property
    def durable_offset(self) -> int:
        """Every offset below this is on disk."""
        return self._durable_offset

    def advance(self, offset: int) -> None:
        """The log made everything below `offset` durable by itself (flush, roll)."""
        if offset > self._durable_offset:
            self._durable_offset = offset

    async def wait_durable(self, offset: int) -> None:
        """Return once `offset` is on disk, per the mode:
        'group_commit': one fsync covers everything appended before it started; callers that
        arrive while it runs share the next one. 'every_append': fsync now. 'interval':
        return at once (the owner runs `flush_on_interval`)."""
        if self.mode == "interval":
            self._check_writable()
            return
        end = self._end_offset()
        if offset >= end:
            raise ValueError(f"offset {offset} has not been appended (log end {end})")
        if self.mode == "every_append":
            await self._sync_once()
            return
        await self._group_sync(offset)

    async def sync(self) -> None:
        """Make everything appended so far durable now, whatever the mode (sharing a sync in
        flight, as group commit does): the interval flusher's step."""
        end = self._end_offset()
        if end > self._durable_offset:
            await self._group_sync(end - 1)

    async def _group_sync(self, offset: int) -> None:
        while self._durable_offset <= offset:
            self._check_writable()
            running = self._sync_running
            if running is None:
                if self._next_sync is not None:  # its leader is about to start it
                    await self._next_sync.wait()
                else:
                    await self._sync_once()
            elif offset < running[0]:
                await running[1].wait()  # the fsync in flight covers us
            elif self._next_sync is not None:
                await self._next_sync.wait()  # follow the leader of the next fsync
            else:
                await self._lead_next_sync(running[1])

    async def _lead_next_sync(self, in_flight: trio.Event) -> None:
        """Wait for the fsync in flight, then run the next one for everyone who queued behind
        it: each waiter is woken once per fsync it needs, not once per fsync that passes."""
        nxt = self._next_sync = trio.Event()
        try:
            await in_flight.wait()
        except BaseException:
            self._next_sync = None
            nxt.set()  # followers re-check and elect a new leader
            raise
        self._next_sync = None
        await self._sync_once(nxt)

    async def _sync_once(self, done: trio.Event | None = None) -> None:
        """fdatasync in a worker thread (fsync_worker: not trio.to_thread, ~85 us less CPU per
        sync); `done` is set when it ends (success or not)."""
        done = trio.Event() if done is None else done
        try:
            await trio.lowlevel.checkpoint_if_cancelled()  # before the dup: the worker closes it
            self._check_writable()
            target = self._end_offset()
            self._sync_running = (target, done)
            fd = self._sync_fd()  # our own descriptor: the log may close its file meanwhile
            await fsync_worker.run_in_worker(_fdatasync_and_close, fd)
            self.advance(target)
        except OSError as exc:
            self._fail(exc)
            raise
        finally:
            if self._sync_running is not None and self._sync_running[1] is done:
                self._sync_running = None
            done.set()

    async def flush_on_interval(self) -> None:
        """For mode 'interval': sync every `flush_interval_ms` until cancelled (or the log
        fails or closes: then it raises)."""
        while True:
            await trio.sleep(self.flush_interval_ms / 1000)
            await self.sync()


def _fdatasync_and_close(fd: int) -> None:
    try:
        fsutil.fdatasync(fd)
    finally:
        os.close(fd)
