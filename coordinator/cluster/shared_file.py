"""A data-dir file that the broker processes of one cluster share (cluster.processes): the ACLs,
the SCRAM credentials, the dynamic configs.

Kafka's brokers all replay one metadata log, so an ACL, a credential or a config changed through
one broker reaches every broker. With cluster.processes each broker process keeps the file's
content in memory, so: a change is made under an exclusive flock of `<file>.lock`, after
re-reading what the others wrote (no change of theirs is overwritten), and a process takes up the
others' changes when the file was replaced (every writer renames a new file over it, so its inode
changes): before a read off the request path (a describe, a SASL lookup) and every
FOLLOW_INTERVAL_S otherwise (`follow_every`), about as late as a Kafka broker replays the
metadata log. In one process (`shared=False`) there is no lock and no stat: the owner is the
file's only writer.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import trio

from storage.fsutil import fsync_dir

FOLLOW_INTERVAL_S = 0.1

_Identity = tuple[int, int, int] | None  # (inode, mtime ns, size); None: no file


class SharedFile:
    __slots__ = ("path", "shared", "_seen")

    def __init__(self, path: Path, *, shared: bool) -> None:
        self.path = path
        self.shared = shared
        self._seen: _Identity = None

    def changed(self) -> bool:
        """Another process replaced the file since this one last read or wrote it."""
        return self.shared and _identity(self.path) != self._seen

    def read(self) -> bytes | None:
        """The file's bytes (None: no file yet), remembered as seen; OSError if unreadable."""
        try:
            with open(self.path, "rb") as file:
                stat = os.fstat(file.fileno())  # the very file read, whatever replaces it next
                raw = file.read()
        except FileNotFoundError:
            self._seen = None
            return None
        self._seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        return raw

    def wrote(self) -> None:
        """The owner replaced the file (under `locked()` when shared: the identity is its own)."""
        self._seen = _identity(self.path)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive against the other processes' changes (nothing when not shared)."""
        if not self.shared:
            yield
            return
        if not self.path.parent.is_dir():  # (a directory made on first use, as its writer does)
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            fsync_dir(self.path.parent.parent)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # (releases the lock)


async def follow_every(
    steps: list[Callable[[], Any]], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """cluster.processes: run each `follow` step every FOLLOW_INTERVAL_S, until cancelled."""
    task_status.started()
    while True:
        await trio.sleep(FOLLOW_INTERVAL_S)
        for step in steps:
            step()


def _identity(path: Path) -> _Identity:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)
