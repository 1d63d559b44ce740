"""Durability waits for a Log: the trio group committer behind `Log.wait_durable`.

Group commit: one fdatasync of the active `.log`, run in a worker thread, covers every batch
appended before it started; callers whose batch arrived while it ran share the next one (one
of them leads it, the rest follow), so N concurrent appenders cost about N/k fsyncs, not N.
Invariant: `_durable_offset` only moves forward and only after a successful sync; a failed
sync fails the Log (LogFailedError) and wakes every waiter. Mixed into `Log` (log.py), whose
fields it uses: `config`, `_next_offset`, `_durable_offset`, `_segments`, `_sync_running`,
`_next_sync`, `_check_writable`, `_fail`.
"""

from __future__ import annotations

import os

import trio

from . import fsutil

__all__ = ["GroupCommitMixin"]


class GroupCommitMixin:
    async def wait_durable(self, offset: int) -> None:
        """Return once `offset` is on disk, per `config.durability`:
        'group_commit': one fsync covers everything appended before it started; callers that
        arrive while it runs share the next one. 'every_append': fsync now. 'interval':
        return at once (the caller runs `flush_on_interval`)."""
        mode = self.config.durability
        if mode == "interval":
            self._check_writable()
            return
        if offset >= self._next_offset:
            raise ValueError(f"offset {offset} has not been appended (log end {self._next_offset})")
        if mode == "every_append":
            await self._sync_once()
            return
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
        """fdatasync the active segment in a worker thread; `done` is set when it ends
        (success or not)."""
        done = trio.Event() if done is None else done
        try:
            self._check_writable()
            target = self._next_offset
            self._sync_running = (target, done)
            fd = os.dup(self._segments[-1].fd)  # the segment may be closed while the thread runs
            await trio.to_thread.run_sync(_fdatasync_and_close, fd)
            self._durable_offset = max(self._durable_offset, target)
        except OSError as exc:
            self._fail(exc)
            raise
        finally:
            if self._sync_running is not None and self._sync_running[1] is done:
                self._sync_running = None
            done.set()

    async def flush_on_interval(self) -> None:
        """For durability='interval': flush every `flush_interval_ms` until cancelled."""
        while True:
            await trio.sleep(self.config.flush_interval_ms / 1000)
            if self._durable_offset < self._next_offset:
                await self._sync_once()


def _fdatasync_and_close(fd: int) -> None:
    try:
        fsutil.fdatasync(fd)
    finally:
        os.close(fd)
