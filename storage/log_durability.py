"""Durability of a Log (mixin of log.Log): `flush`, `checkpoint` (the fsyncs in a worker
thread, then the recovery point and a producer snapshot), `wait_durable` and `sync` through the
log's GroupCommitter. Invariant: the recovery point only moves to an offset whose data and
indexes were fsynced first; a failed fsync fails the log (LogFailedError until reopened).
"""

from __future__ import annotations

import os

import trio

from . import fsutil
from .durability import GroupCommitter
from .log_txn import LogTransactions
from .producer_snapshot import write_snapshot_bytes
from .recovery import RecoveryPoint
from .segment import LogSegment

__all__ = ["LogDurability"]


class LogDurability:
    directory: str
    txns: LogTransactions
    _segments: list[LogSegment]
    _next_offset: int
    _recovery_point: RecoveryPoint
    _committer: GroupCommitter

    # Provided by Log (log.py); declared here so this mixin type-checks on its own.
    def _begin_write(self) -> None:
        raise NotImplementedError

    def _fail(self, exc: BaseException) -> None:
        raise NotImplementedError

    # -- durability ---------------------------------------------------------------------------
    def flush(self) -> None:
        """fsync the active segment's data and indexes now (earlier segments were fsynced on
        roll) and record the log end as the recovery point."""
        self._begin_write()
        target = self._next_offset
        try:
            self._segments[-1].flush()
            self._recovery_point.record(target)
        except OSError as exc:
            self._fail(exc)
            raise
        self._committer.advance(target)

    async def checkpoint(self) -> None:
        """`flush` in a worker thread: make everything appended so far durable, indexes
        included, and record it as the recovery point, so that recovery after a crash rescans
        only what comes after it (Kafka's periodic flush + checkpointLogRecoveryOffsets).
        Does nothing if the recovery point is already the log end."""
        self._begin_write()
        target = self._next_offset
        if target <= self._recovery_point.offset:
            return
        seg = self._segments[-1]  # the thread syncs its own descriptors: a roll may close these
        fds = [os.dup(fd) for fd in (seg.fd, seg.offset_index.fd, seg.time_index.fd, seg.txn_index.fd) if fd >= 0]
        snapshot = self.txns.encode()  # the producer state at `target`, so a crash replays from here
        try:
            await trio.to_thread.run_sync(
                _sync_and_record, fds, self._recovery_point, target, (self.directory, snapshot)
            )
        except OSError as exc:
            self._fail(exc)
            raise
        self._committer.advance(target)
        self.txns.prune()

    @property
    def recovery_point(self) -> int:
        """The offset recovery after a crash would rescan from (see `checkpoint`)."""
        return self._recovery_point.offset

    async def wait_durable(self, offset: int) -> None:
        """Return once `offset` is on disk, per `config.durability` (durability.GroupCommitter):
        'group_commit' shares one fsync between concurrent callers, 'every_append' fsyncs now,
        'interval' returns at once (the owner calls `sync` on a timer). Raises OSError or
        LogFailedError if the log failed before `offset` was durable."""
        await self._committer.wait_durable(offset)

    async def sync(self) -> None:
        """fdatasync everything appended so far now (one step of an interval flusher)."""
        await self._committer.sync()


def _sync_and_record(
    fds: list[int], point: RecoveryPoint, offset: int, snapshot: tuple[str, bytes] | None = None
) -> None:
    fsutil.fsync_and_close(fds)
    point.record(offset)
    if snapshot is not None:
        try:
            write_snapshot_bytes(snapshot[0], offset, snapshot[1])
        except OSError:  # a cache: without it a crash replays more of the log
            pass
