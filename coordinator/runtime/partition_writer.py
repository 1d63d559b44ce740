"""The durable side of a coordinator runtime: records -> the partition logs of an internal topic.

One `PartitionWriter` owns the N logs of one internal topic (`__consumer_offsets`, later
`__transaction_state`) under the data dir. `append(partition, records)` encodes an operation's
records for its partition as ONE batch, so they are atomic, as Kafka's CoordinatorRuntime
appends them; `wait_durable(partition, offset)` waits through storage's group commit (one fsync
covers everything appended while the previous one ran). A failed append or fsync raises
`LogWriteError`; the runtime then fails the partition and reloads it from the log (the log is
the truth). Logs are opened lazily and reopened (recovered) by `reopen` when a partition loads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import trio

from storage.batch import Record
from storage.cleaner import Cleaner, CleanStats
from storage.log import Log, LogConfig


class WriterObserver(Protocol):
    """What the transcript and metrics see of the writer (observe/tap.py)."""

    def records(self, partition: int, base_offset: int, records: list[Record]) -> None: ...
    def durable_wait(self, seconds: float) -> None: ...
    def cleaned(self, partition: int, stats: CleanStats) -> None: ...


class LogWriteError(Exception):
    """An append or fsync failed: the partition's log is no longer trustworthy in memory."""


Encode = Callable[[Any], tuple[bytes, bytes | None]]


class PartitionWriter:
    def __init__(self, topic: str, data_dir: str | os.PathLike[str], num_partitions: int,
                 log_config: LogConfig, clock: Any, encode: Encode,
                 observer: WriterObserver | None = None) -> None:
        self.topic = topic
        self.data_dir = Path(data_dir)
        self.num_partitions = num_partitions
        self.log_config = log_config
        self.clock = clock
        self._encode = encode
        self._observer = observer
        self._logs: dict[int, Log] = {}
        self._closed = False

    # -- logs ---------------------------------------------------------------------------------
    def partition_dir(self, partition: int) -> Path:
        return self.data_dir / f"{self.topic}-{partition}"

    def existing_partitions(self) -> list[int]:
        """Partitions that have a directory on disk (the others are empty by definition)."""
        return [n for n in range(self.num_partitions) if self.partition_dir(n).is_dir()]

    def reopen(self, partition: int) -> Log:
        """(Re)open the partition's log, recovering it if it was not closed cleanly. A previous
        Log object of the partition is abandoned (its file tail is decided by recovery)."""
        old = self._logs.pop(partition, None)
        if old is not None:
            old.abandon()
        log = Log.open(self.partition_dir(partition), self.log_config, self.clock)
        self._logs[partition] = log
        return log

    def log(self, partition: int) -> Log | None:
        return self._logs.get(partition)

    def iter_batches(self, partition: int) -> Iterator[tuple[Any, bytes]]:
        """Every batch of a freshly reopened log (the loader's read)."""
        return self.reopen(partition).iter_batches()

    # -- writing ------------------------------------------------------------------------------
    def append(self, partition: int, records: Sequence[Any]) -> int:
        """Append the records as one batch; returns the offset to wait for. With no records,
        the partition's last appended offset, so an empty op is answered after every earlier
        write of its partition (-1: nothing to wait for)."""
        if self._closed:
            raise LogWriteError(f"{self.topic}-{partition}: writer closed")
        log = self._logs.get(partition)
        if not records:
            return -1 if log is None else log.log_end_offset - 1
        batch = [Record(key=key, value=value) for key, value in map(self._encode, records)]
        try:
            if log is None:
                log = self.reopen(partition)
            base = log.append_records(batch, self.clock.time_ms())
        except Exception as exc:  # OSError, LogFailedError, CorruptLogError on open
            raise LogWriteError(f"{self.topic}-{partition}: append failed: {exc!r}") from exc
        if self._observer is not None:
            self._observer.records(partition, base, batch)
        return base + len(batch) - 1

    async def wait_durable(self, partition: int, offset: int) -> None:
        if offset < 0:
            return
        log = self._logs.get(partition)
        if log is None:
            raise LogWriteError(f"{self.topic}-{partition}: log was reopened before it was durable")
        start = time.perf_counter() if self._observer is not None else 0.0
        try:
            await log.wait_durable(offset)
        except Exception as exc:  # OSError from fsync, LogFailedError from a failed/closed log
            raise LogWriteError(f"{self.topic}-{partition}: not durable: {exc!r}") from exc
        if self._observer is not None:
            self._observer.durable_wait(time.perf_counter() - start)

    async def flush_on_interval(self) -> None:
        """log.flush.mode=interval: fsync every dirty log each flush interval."""
        while not self._closed:
            await trio.sleep(self.log_config.flush_interval_ms / 1000)
            for log in list(self._logs.values()):
                if log.durable_offset < log.log_end_offset and not log.failed:
                    try:
                        log.flush()
                    except OSError:
                        pass  # the log failed; its next append fails its partition

    # -- compaction (Kafka's LogCleaner thread for this topic) ---------------------------------
    async def clean_once(self, cleaner: Cleaner, partitions: Sequence[int]) -> list[int]:
        """One cleaning round for each of `partitions` over the dirty ratio (map and recopy in a
        worker thread, swap here). A failed round fails its log, whose next append then fails
        the partition so it reloads. Returns the partitions cleaned."""
        cleaned = []
        for partition in partitions:
            log = self._logs.get(partition)
            if self._closed or log is None:
                continue
            try:
                stats = await cleaner.clean_in_thread(log)
            except Exception:  # OSError, LogFailedError, CorruptLogError
                continue
            if stats is not None:
                cleaned.append(partition)
                if self._observer is not None:
                    self._observer.cleaned(partition, stats)
        return cleaned

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close every log cleanly (flush, recovery point, clean-shutdown marker); a failed log is
        closed uncleanly so the next open recovers it."""
        self._closed = True
        for log in self._logs.values():
            try:
                log.close()
            except OSError:
                log.abandon()
        self._logs.clear()
