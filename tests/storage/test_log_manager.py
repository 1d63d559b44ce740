"""storage.log_manager.LogManager: one owner for opening/recovering, flushing, checkpointing,
cleaning, retention and closing every log of a data dir. Trio tests run on MockClock (the
manager's timers are trio sleeps); the retention clock reads trio's virtual time."""

from __future__ import annotations

import errno
import os

import pytest
import trio

from storage import fsutil, fsync_worker
from storage.batch import Record
from storage.cleaner_policy import CleanStats
from storage.log import Log, LogConfig, LogFailedError
from storage.log_manager import LogKey, LogManager, LogManagerConfig, NoObserver
from tests.storage.helpers import FakeClock
from tests.storage.test_cleaner_helpers import check_compacted, records


@pytest.fixture(autouse=True)
def inline_threads(monkeypatch):
    """Worker-thread steps (fsyncs, cleaner passes) run inline, so that MockClock's autojump
    cannot move virtual time while one runs: what happens at which virtual time is exact."""

    async def run_sync(fn, *args, **_):
        return fn(*args)

    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync)
    monkeypatch.setattr(fsync_worker, "run_in_worker", run_sync)


class TrioTime:
    def time_ms(self) -> int:
        return int(trio.current_time() * 1000)


class Events(NoObserver):
    def __init__(self) -> None:
        self.failed: list[tuple[LogKey, BaseException]] = []
        self.cleaned: list[tuple[LogKey, CleanStats]] = []
        self.deleted: list[tuple[LogKey, int]] = []

    def log_failed(self, key, log, error) -> None:
        self.failed.append((key, error))

    def log_cleaned(self, key, log, stats) -> None:
        self.cleaned.append((key, stats))

    def segments_deleted(self, key, log, count) -> None:
        self.deleted.append((key, count))


COMPACT = LogConfig(
    segment_bytes=1024,
    index_interval_bytes=128,
    segment_index_bytes=4096,
    cleanup_policy="compact",
    durability="interval",
)
DELETE = LogConfig(segment_bytes=1024, retention_ms=10_000, durability="interval")


def manager(tmp_path, events=None, **cfg) -> LogManager:
    return LogManager(tmp_path, TrioTime(), LogManagerConfig(**cfg), observer=events)


def put(log: Log, n: int, keys: int = 5, ts: int | None = None) -> None:
    for i in range(n):
        log.append_records([Record(key=b"k%d" % (i % keys), value=b"v%d" % i)], timestamp_ms=ts)


def test_logs_are_addressed_by_topic_and_partition_under_one_dir(tmp_path):
    logs = LogManager(tmp_path, FakeClock())
    a = logs.open("orders", 0, DELETE)
    b = logs.open("__consumer_offsets", 7, COMPACT)
    assert a.directory == str(tmp_path / "orders-0") and b.directory == str(tmp_path / "__consumer_offsets-7")
    assert logs.open("orders", 0, DELETE) is a and logs.get("__consumer_offsets", 7) is b
    with pytest.raises(ValueError):
        logs.open("orders", 0, COMPACT)
    logs.close()
    assert (tmp_path / "orders-0" / ".kafka_cleanshutdown").exists()
    assert a.closed and b.closed


def test_a_log_abandoned_like_kill_9_is_recovered_by_the_next_open(tmp_path):
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("t", 0, DELETE)
    put(log, 50)
    log.flush()
    log.abandon()  # no marker, untrimmed
    again = LogManager(tmp_path, FakeClock()).open("t", 0, DELETE)
    assert not again.load_result.clean_shutdown and again.log_end_offset == 50


async def test_run_flushes_checkpoints_and_closes_cleanly(tmp_path, autojump_clock):
    logs = manager(tmp_path, recovery_point_checkpoint_interval_ms=5_000)
    log = logs.open("t", 0, DELETE)  # interval durability: flushed by the manager's flusher
    async with trio.open_nursery() as nursery:
        await nursery.start(logs.run)
        put(log, 3)
        assert log.durable_offset == 0
        await trio.sleep(1.5)  # flush.interval.ms = 1000
        assert log.durable_offset == 3 and log.recovery_point == 0
        await trio.sleep(4)  # the checkpoint: data and indexes fsynced, recovery point written
        assert log.recovery_point == 3
        late = logs.open("t", 1, DELETE)  # opened while running: gets its own flusher
        put(late, 2)
        await trio.sleep(1.5)
        assert late.durable_offset == 2
        nursery.cancel_scope.cancel()
    assert log.closed and (tmp_path / "t-1" / ".kafka_cleanshutdown").exists()
    with pytest.raises(LogFailedError, match="closed"):
        logs.open("t", 2, DELETE)


async def test_retention_runs_on_its_interval_and_tells_the_owner(tmp_path, autojump_clock):
    events = Events()
    logs = manager(tmp_path, events, retention_check_interval_ms=60_000)
    log = logs.open("t", 0, DELETE)
    put(log, 3, ts=0)
    log.roll()
    put(log, 1, ts=0)
    async with trio.open_nursery() as nursery:
        await nursery.start(logs.run)
        await trio.sleep(59)
        assert log.log_start_offset == 0
        await trio.sleep(2)  # now 61 s: the first segment's records are older than 10 s
        assert log.log_start_offset == 3 and events.deleted == [(("t", 0), 1)]
        nursery.cancel_scope.cancel()


async def test_the_cleaner_compacts_dirty_compacted_logs_every_backoff(tmp_path, autojump_clock):
    events = Events()
    logs = manager(tmp_path, events, cleaner_backoff_ms=15_000)
    log = logs.open("__consumer_offsets", 3, COMPACT)
    other = logs.open("t", 0, DELETE)
    for _ in range(5):
        put(log, 10, keys=10)
        put(other, 10)
    log.roll()
    other.roll()
    pre = records(log)
    async with trio.open_nursery() as nursery:
        await nursery.start(logs.run)
        await trio.sleep(16)
        nursery.cancel_scope.cancel()
    assert [key for key, _ in events.cleaned] == [("__consumer_offsets", 3)]
    reopened = LogManager(tmp_path, TrioTime()).open("__consumer_offsets", 3, COMPACT)
    check_compacted(pre, records(reopened), reopened.active_segment.base_offset)


async def test_a_round_per_log_at_a_time_and_paused_logs_are_skipped(tmp_path, autojump_clock):
    logs = manager(tmp_path)
    log = logs.open("c", 0, COMPACT)
    put(log, 50, keys=5)
    log.roll()
    logs.pause_cleaning("c", 0)
    assert await logs.clean_pass() == [] and await logs.clean("c", 0) is None
    logs.resume_cleaning("c", 0)
    results = []

    async def one() -> None:
        results.append(await logs.clean("c", 0))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one)
        nursery.start_soon(one)
    assert sorted(r is None for r in results) == [False, True]  # the second found one running
    assert await logs.clean_pass() == []  # below the dirty ratio now
    logs.close()


async def test_a_failed_flush_reaches_the_owner_and_reopen_recovers(tmp_path, monkeypatch, autojump_clock):
    events = Events()
    logs = manager(tmp_path, events)
    log = logs.open("t", 0, DELETE)
    put(log, 4)
    await log.sync()  # 0..3 acknowledged

    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    async with trio.open_nursery() as nursery:
        await nursery.start(logs.run)
        put(log, 2)
        monkeypatch.setattr(fsutil, "fdatasync", broken)
        await trio.sleep(1.5)
        assert [key for key, _ in events.failed] == [("t", 0)] and log.failed
        assert list(logs.failed_logs()) == [("t", 0)]
        monkeypatch.setattr(fsutil, "fdatasync", fsutil.fsync)
        again = logs.reopen("t", 0)
        assert again is not log and logs.failed_logs() == {}
        assert again.log_end_offset >= 4 and [r.value for r in again.iter_records()][:4] == [b"v0", b"v1", b"v2", b"v3"]
        nursery.cancel_scope.cancel()


def test_a_reopen_that_fails_keeps_the_key_failed_until_one_succeeds(tmp_path, monkeypatch):
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("t", 0, LogConfig(index_interval_bytes=64))
    put(log, 30)
    log.abandon()

    def full(*args) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "pwrite", full)  # recovery cannot write the rebuilt index
        with pytest.raises(OSError):
            logs.reopen("t", 0)
    assert isinstance(logs.failed_logs()[("t", 0)], OSError)
    again = logs.reopen("t", 0)
    assert again.log_end_offset == 30 and logs.failed_logs() == {}
    assert len(again.active_segment.offset_index) > 0
    logs.close()


def test_close_log_forgets_one_log(tmp_path):
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("t", 0, DELETE)
    logs.close_log("t", 0)
    assert log.closed and logs.get("t", 0) is None and logs.logs() == {}
