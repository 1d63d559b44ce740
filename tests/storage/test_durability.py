"""wait_durable: group commit, every_append, interval, and fsync failure (trio, MockClock)."""

from __future__ import annotations

import errno
import os

import pytest
import trio

from storage import fsutil
from storage.batch import Record
from storage.durability import GroupCommitter
from storage.log import LogFailedError
from tests.storage.helpers import open_log


class CountingSync:
    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail
        self.real = fsutil.fdatasync

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if self.fail:
            raise OSError(errno.EIO, "Input/output error")
        self.real(fd)


async def append_and_wait(log, i, results):
    offset = log.append_records([Record(key=b"k%d" % i, value=b"v")])
    await log.wait_durable(offset)
    results.append((offset, log.durable_offset))


async def test_group_commit_shares_fsyncs_between_concurrent_appenders(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    log = open_log(tmp_path, durability="group_commit")
    results: list[tuple[int, int]] = []
    async with trio.open_nursery() as nursery:
        for i in range(100):
            nursery.start_soon(append_and_wait, log, i, results)
    assert len(results) == 100
    assert all(durable > offset for offset, durable in results)  # nobody returned early
    assert 1 <= sync.calls <= 5  # 100 appends, a handful of fsyncs
    assert log.durable_offset == log.log_end_offset == 100


async def test_already_durable_offsets_do_not_fsync_again(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    log = open_log(tmp_path)
    off = log.append_records([Record(key=b"a", value=b"1")])
    await log.wait_durable(off)
    await log.wait_durable(off)
    assert sync.calls == 1
    with pytest.raises(ValueError):
        await log.wait_durable(log.log_end_offset)


async def test_every_append_fsyncs_on_each_wait(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    log = open_log(tmp_path, durability="every_append")
    for i in range(5):
        await log.wait_durable(log.append_records([Record(key=b"k", value=b"%d" % i)]))
    assert sync.calls == 5 and log.durable_offset == 5


async def test_interval_returns_at_once_and_sync_flushes(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    log = open_log(tmp_path, durability="interval", flush_interval_ms=500)
    await log.wait_durable(log.append_records([Record(key=b"k", value=b"v")]))
    assert sync.calls == 0 and log.durable_offset == 0
    await log.sync()
    assert sync.calls == 1 and log.durable_offset == 1
    await log.sync()  # nothing new: no fsync
    assert sync.calls == 1


async def test_failed_group_fsync_fails_every_waiter_and_the_log(tmp_path, monkeypatch, autojump_clock):
    monkeypatch.setattr(fsutil, "fdatasync", CountingSync(fail=True))
    log = open_log(tmp_path)
    assert not log.failed
    errors: list[BaseException] = []

    async def one(i):
        try:
            await log.wait_durable(log.append_records([Record(key=b"k", value=b"%d" % i)]))
        except (OSError, LogFailedError) as exc:
            errors.append(exc)

    async with trio.open_nursery() as nursery:
        for i in range(10):
            nursery.start_soon(one, i)
    assert len(errors) == 10
    assert any(isinstance(e, OSError) for e in errors)
    assert log.failed
    with pytest.raises(LogFailedError):
        log.append_records([Record(key=b"k", value=b"v")])


class FakeLog:
    """Just what a GroupCommitter is given: an end offset, a file to sync, check and fail."""

    def __init__(self, path) -> None:
        self.end = 0
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self.failure: BaseException | None = None
        self.opened = 0  # descriptors handed to the committer (it closes each)

    def sync_fd(self) -> int:
        self.opened += 1
        return os.dup(self.fd)

    def check(self) -> None:
        if self.failure is not None:
            raise LogFailedError(str(self.failure))

    def fail(self, exc: BaseException) -> None:
        self.failure = self.failure or exc

    def committer(self, mode="group_commit") -> GroupCommitter:
        return GroupCommitter(
            mode,
            100,
            durable_offset=0,
            end_offset=lambda: self.end,
            sync_fd=self.sync_fd,
            check_writable=self.check,
            fail=self.fail,
        )


async def test_the_committer_needs_only_what_it_is_given(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    log = FakeLog(tmp_path / "f")
    committer = log.committer()
    done: list[int] = []

    async def append_and_wait(i: int) -> None:
        log.end += 1
        await committer.wait_durable(log.end - 1)
        done.append(i)

    async with trio.open_nursery() as nursery:
        for i in range(50):
            nursery.start_soon(append_and_wait, i)
    assert sorted(done) == list(range(50)) and committer.durable_offset == 50
    assert 1 <= sync.calls <= 3
    committer.advance(40)  # never moves back
    assert committer.durable_offset == 50


async def test_a_failed_sync_fails_the_given_log_once_and_wakes_everyone(tmp_path, monkeypatch, autojump_clock):
    monkeypatch.setattr(fsutil, "fdatasync", CountingSync(fail=True))
    log = FakeLog(tmp_path / "f")
    committer = log.committer()
    errors: list[BaseException] = []

    async def one() -> None:
        log.end += 1
        try:
            await committer.wait_durable(log.end - 1)
        except (OSError, LogFailedError) as exc:
            errors.append(exc)

    async with trio.open_nursery() as nursery:
        for _ in range(20):
            nursery.start_soon(one)
    assert len(errors) == 20 and isinstance(log.failure, OSError)
    assert committer.durable_offset == 0


async def test_a_waiter_cancelled_before_its_sync_opens_no_descriptor(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    log = FakeLog(tmp_path / "f")
    committer = log.committer()
    log.end = 1
    with trio.CancelScope() as scope:
        scope.cancel()
        await committer.wait_durable(0)
    assert scope.cancelled_caught
    assert log.opened == 0 and sync.calls == 0 and committer.durable_offset == 0  # no fd to leak
    await committer.wait_durable(0)  # the next waiter leads a sync of its own
    assert log.opened == 1 and sync.calls == 1 and committer.durable_offset == 1
