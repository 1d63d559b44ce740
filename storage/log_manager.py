"""Every log of one data directory (Kafka's LogManager + LogCleaner): opening (recovering after
an unclean stop), interval flushers, recovery-point checkpoints, compaction, retention, closing.
User and internal topics alike: a log is addressed by (topic, partition), lives in
`<data dir>/<topic>-<partition>` and is opened with its own LogConfig. Invariants: one open Log
per key; one cleaning round at a time (one dedupe buffer in memory); background work never
raises into its owner: a failure ends that piece of work, is logged, and reaches the log's
observer and `failed_logs()`. Only the owner reopens a failed log (`reopen`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import trio

from .cleaner import Cleaner
from .cleaner_policy import CleanerConfig, CleanStats
from .log import Log, LogFailedError
from .log_config import Clock, LogConfig

__all__ = ["LogManager", "LogManagerConfig", "LogObserver", "NoObserver", "LogKey"]

_log = logging.getLogger(__name__)

LogKey = tuple[str, int]  # (topic, partition)


class LogObserver(Protocol):
    """What the manager tells a log's owner about work it did in the background."""

    def log_failed(self, key: LogKey, log: Log, error: BaseException) -> None:
        """An I/O error failed `log` (a flush, checkpoint, retention or swap): reopen it."""

    def log_cleaned(self, key: LogKey, log: Log, stats: CleanStats) -> None:
        """A cleaning round finished and swapped its output in."""

    def segments_deleted(self, key: LogKey, log: Log, count: int) -> None:
        """Retention deleted the `count` oldest segments: the log start offset moved."""


class NoObserver:
    """An observer that ignores everything (the default); subclass it to hear some events."""

    def log_failed(self, key: LogKey, log: Log, error: BaseException) -> None:
        pass

    def log_cleaned(self, key: LogKey, log: Log, stats: CleanStats) -> None:
        pass

    def segments_deleted(self, key: LogKey, log: Log, count: int) -> None:
        pass


@dataclass(frozen=True)
class LogManagerConfig:
    """Broker settings of the background work, by their Kafka names."""

    retention_check_interval_ms: int = 300_000  # log.retention.check.interval.ms
    recovery_point_checkpoint_interval_ms: int = 60_000  # log.flush.offset.checkpoint.interval.ms
    cleaner_enable: bool = True  # log.cleaner.enable
    cleaner_backoff_ms: int = 15_000  # log.cleaner.backoff.ms
    cleaner: CleanerConfig = field(default_factory=CleanerConfig)  # log.cleaner.dedupe.buffer.size


@dataclass
class _Entry:
    log: Log
    config: LogConfig
    observer: LogObserver
    error: BaseException | None = None  # the last reopen failed: unusable until one succeeds


class LogManager:
    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        clock: Clock,
        config: LogManagerConfig | None = None,
        observer: LogObserver | None = None,
    ) -> None:
        """`observer` hears about every log opened without one of its own (see `open`)."""
        self.data_dir = Path(data_dir)
        self.clock = clock
        self.config = config or LogManagerConfig()
        self._observer: LogObserver = observer or NoObserver()
        self._cleaner = Cleaner(self.config.cleaner)
        self._entries: dict[LogKey, _Entry] = {}
        self._cleaning: set[LogKey] = set()  # a round is running
        self._paused: set[LogKey] = set()  # no new rounds (Kafka's abortAndPauseCleaning)
        self._last_report: dict[LogKey, str] = {}
        self._nursery: trio.Nursery | None = None
        self._closed = False

    # -- logs ---------------------------------------------------------------------------------
    def partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"

    def open(self, topic: str, partition: int, config: LogConfig, *, observer: LogObserver | None = None) -> Log:
        """The open log of (topic, partition), opening (and, after an unclean stop, recovering)
        it first if needed. Raises CorruptLogError for damage recovery must not repair, OSError
        (e.g. a full disk while rebuilding indexes: nothing is registered, call again later),
        ValueError if it is already open with another config."""
        key = (topic, partition)
        entry = self._entries.get(key)
        if entry is not None:
            if entry.config != config:
                raise ValueError(f"{topic}-{partition} is already open with another config")
            return entry.log
        self._check_open()
        log = Log.open(self.partition_dir(topic, partition), config, self.clock)
        self._entries[key] = _Entry(log, config, observer or self._observer)
        self._start_flusher(key, log)
        return log

    def reopen(self, topic: str, partition: int) -> Log:
        """Replace the log of (topic, partition) by a freshly opened one: a failed log is
        abandoned and recovery decides its tail; a healthy one is closed cleanly first. If the
        open fails the key stays registered as failed (`failed_logs`) and the error is raised:
        call again later."""
        key = (topic, partition)
        entry = self._entries[key]
        self._check_open()
        old = entry.log
        if old.failed or entry.error is not None:
            old.abandon()
        else:
            try:
                old.close()
            except Exception:  # closing failed: the open below recovers what it left
                old.abandon()
        try:
            log = Log.open(self.partition_dir(topic, partition), entry.config, self.clock)
        except BaseException as exc:
            entry.error = exc
            raise
        entry.log, entry.error = log, None
        self._start_flusher(key, log)
        return log

    def reconfigure(self, topic: str, partition: int, config: LogConfig) -> None:
        """New topic configs for an open log (AlterConfigs, Kafka's LogManager.updateTopicConfig):
        appends, reads, retention and the cleaner use them from now on. Durability is a broker
        setting the log's committer was built with: changing it raises ValueError."""
        entry = self._entries.get((topic, partition))
        if entry is None:
            return
        old = entry.config
        if (config.durability, config.flush_interval_ms) != (old.durability, old.flush_interval_ms):
            raise ValueError(f"{topic}-{partition}: durability cannot change while the log is open")
        entry.config = config
        entry.log.config = config

    def get(self, topic: str, partition: int) -> Log | None:
        entry = self._entries.get((topic, partition))
        return None if entry is None else entry.log

    def logs(self) -> dict[LogKey, Log]:
        """Every registered log (a snapshot), failed ones included."""
        return {key: entry.log for key, entry in self._entries.items()}

    def failed_logs(self) -> dict[LogKey, BaseException]:
        """Logs that refuse work until reopened, with why: an I/O error failed them, or their
        last reopen failed."""
        out: dict[LogKey, BaseException] = {}
        for key, entry in self._entries.items():
            error = entry.error or entry.log.failure
            if error is not None:
                out[key] = error
        return out

    def close_log(self, topic: str, partition: int) -> None:
        """Close one log cleanly (a failed one without its marker) and forget it."""
        entry = self._entries.pop((topic, partition), None)
        if entry is not None:
            self._close_entry(entry)

    def pause_cleaning(self, topic: str, partition: int) -> None:
        """No new cleaning round for this log until `resume_cleaning` (a round already running
        finishes; its swap is safe for readers)."""
        self._paused.add((topic, partition))

    def resume_cleaning(self, topic: str, partition: int) -> None:
        self._paused.discard((topic, partition))

    def flush(self) -> None:
        """fsync every healthy log now (Log.flush), on this thread."""
        for entry in list(self._entries.values()):
            if not entry.log.failed and not entry.log.closed:
                entry.log.flush()

    # -- background work, one pass each (run() repeats them) ------------------------------------
    def apply_retention(self) -> int:
        """Time and size retention of every delete-policy log; returns the segments deleted."""
        now, deleted = self.clock.time_ms(), 0
        for key, entry in list(self._entries.items()):
            log = entry.log
            if log.config.cleanup_policy != "delete" or not self._usable(entry):
                continue
            try:
                count = log.apply_retention(now)
            except Exception as exc:  # a failed rename or fsync failed the log
                self._report(key, entry, exc, "retention")
                continue
            if count:
                deleted += count
                entry.observer.segments_deleted(key, log, count)
        return deleted

    async def checkpoint_all(self) -> None:
        """Log.checkpoint of every healthy log with data past its recovery point, so that a
        crash rescans little (fsyncs in worker threads, one log at a time)."""
        for key, entry in list(self._entries.items()):
            log = entry.log
            if self._usable(entry) and log.log_end_offset > log.recovery_point:
                try:
                    await log.checkpoint()
                except Exception as exc:
                    self._report(key, entry, exc, "checkpoint")

    async def clean_pass(self) -> list[LogKey]:
        """One cleaner pass: a round for each compacted log over its dirty ratio (or past
        max.compaction.lag.ms), dirtiest first, one at a time. A failed round ends only itself
        (a failed swap fails its log: reported). Returns the keys cleaned."""
        todo = []
        for key, entry in list(self._entries.items()):
            if self._cleanable(key, entry) and self._cleaner.needs_cleaning(entry.log):
                todo.append((self._cleaner.cleanable(entry.log).ratio, key))
        cleaned = []
        for _, key in sorted(todo, key=lambda item: -item[0]):
            try:
                if await self.clean(*key) is not None:
                    cleaned.append(key)
            except Exception as exc:
                current = self._entries.get(key)
                if current is not None:
                    self._report(key, current, exc, "cleaning round")
        return cleaned

    async def clean(self, topic: str, partition: int, *, force: bool = False) -> CleanStats | None:
        """One cleaning round of this log now (map and recopy in worker threads, swaps here);
        None if it needs none (unless `force`), is not compacted, or a round is running.
        Errors are raised (a failed swap has also failed the log)."""
        key = (topic, partition)
        entry = self._entries.get(key)
        if entry is None or key in self._cleaning or key in self._paused or not self._usable(entry):
            return None
        self._cleaning.add(key)
        try:
            stats = await self._cleaner.clean_in_thread(entry.log, force=force)
        finally:
            self._cleaning.discard(key)
        if stats is not None:
            entry.observer.log_cleaned(key, entry.log, stats)
        return stats

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the background work (flushers of interval logs, checkpoints, retention, cleaner)
        until cancelled; then close every log cleanly."""
        cfg = self.config
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for key, entry in list(self._entries.items()):
                    self._start_flusher(key, entry.log)
                nursery.start_soon(self._every, cfg.retention_check_interval_ms, self._retention_pass)
                nursery.start_soon(self._every, cfg.recovery_point_checkpoint_interval_ms, self.checkpoint_all)
                if cfg.cleaner_enable:
                    nursery.start_soon(self._every, cfg.cleaner_backoff_ms, self.clean_pass)
                task_status.started()
        finally:
            self._nursery = None
            self.close()

    def close(self) -> None:
        """Close every log: flush, trim, recovery point and clean-shutdown marker (a failed log
        without them, so that its next open recovers). Idempotent; nothing opens afterwards."""
        self._closed = True
        entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            self._close_entry(entry)

    # -- internals ----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise LogFailedError(f"the log manager of {self.data_dir} is closed")

    def _usable(self, entry: _Entry) -> bool:
        return entry.error is None and not entry.log.failed and not entry.log.closed

    def _cleanable(self, key: LogKey, entry: _Entry) -> bool:
        return (
            entry.log.config.cleanup_policy == "compact"
            and key not in self._paused
            and key not in self._cleaning
            and self._usable(entry)
        )

    def _report(self, key: LogKey, entry: _Entry, exc: BaseException, what: str) -> None:
        text = f"{what} failed: {exc!r}"
        if self._last_report.get(key) != text:  # once per change, not once per retry
            self._last_report[key] = text
            _log.warning("%s-%s: %s", key[0], key[1], text)
        if entry.log.failed and self._entries.get(key) is entry:
            entry.observer.log_failed(key, entry.log, exc)

    def _close_entry(self, entry: _Entry) -> None:
        try:
            entry.log.close()
        except Exception:  # one bad log must not keep the others from closing cleanly
            _log.exception("closing %s failed", entry.log.directory)
            entry.log.abandon()

    async def _retention_pass(self) -> None:
        self.apply_retention()

    async def _every(self, interval_ms: int, step: Callable[[], Awaitable[object]]) -> None:
        while True:
            await trio.sleep(interval_ms / 1000)
            await step()

    def _start_flusher(self, key: LogKey, log: Log) -> None:
        if self._nursery is not None and log.config.durability == "interval":
            self._nursery.start_soon(self._flusher, key, log)

    async def _flusher(self, key: LogKey, log: Log) -> None:
        """fdatasync `log` every flush.interval.ms while it is the open log of `key`."""
        while True:
            await trio.sleep(log.config.flush_interval_ms / 1000)
            entry = self._entries.get(key)
            if entry is None or entry.log is not log or log.closed:
                return
            if log.failed:
                return
            try:
                await log.sync()
            except Exception as exc:
                self._report(key, entry, exc, "interval flush")
                return
