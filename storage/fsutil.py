"""The few system calls storage makes to change files, in one place.

Every write and fsync of log data goes through here so that tests can simulate a full disk
(ENOSPC) or a failing fsync by monkeypatching `os.write`/`os.fsync` as seen by this module
(`monkeypatch.setattr(storage.fsutil.os, "write", ...)`) or the functions below.
Invariant: `write_all` either writes every byte or raises; it never returns a short count.
"""

from __future__ import annotations

import os

__all__ = ["write_all", "fsync", "fsync_and_close", "fdatasync", "fsync_dir", "atomic_write", "truncate", "preallocate"]


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write all of `data` at the fd's current position (a short write is retried)."""
    written = os.write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - os.write raises rather than returning 0
            raise OSError("os.write wrote no bytes")
        view = view[written:]


def fsync(fd: int) -> None:
    os.fsync(fd)


def fsync_and_close(fds: list[int]) -> None:
    """fsync each descriptor, then close them all (descriptors dup'ed for a worker thread)."""
    try:
        for fd in fds:
            fsync(fd)
    finally:
        for fd in fds:
            os.close(fd)


def fdatasync(fd: int) -> None:
    # fdatasync skips the mtime update; the file size is still made durable (POSIX), which is
    # all an append-only file needs.
    getattr(os, "fdatasync", os.fsync)(fd)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make renames/creations/deletions inside `path` durable (Kafka's Utils.flushDir)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def truncate(fd: int, size: int) -> None:
    os.ftruncate(fd, size)


def preallocate(fd: int, offset: int, length: int) -> None:
    """Reserve blocks for [offset, offset + length) and extend the file over them (fallocate)."""
    os.posix_fallocate(fd, offset, length)


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `<path>.tmp`, fsync it, rename it over `path`, fsync the directory
    (the write protocol of Kafka's CheckpointFile)."""
    path = os.fspath(path)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            write_all(fd, data)
            fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        os.unlink(tmp)  # (a full disk): leave no partial file behind
        raise
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path) or ".")
