"""The durable side of a coordinator runtime: records -> the partition logs of an internal topic.

One `PartitionWriter` writes the N logs of one internal topic (`__consumer_offsets`, later
`__transaction_state`), which the data dir's LogManager (storage/log_manager.py) opens, recovers,
checkpoints, flushes (log.flush.mode=interval), compacts and closes like every other log.
`append(partition, records)` encodes an operation's records for its partition as ONE batch, so
they are atomic, as Kafka's CoordinatorRuntime appends them (a transactional batch of the op's
producer, or the control batch of a transaction marker, when the op declared one); `wait_durable(partition, offset)`
waits through storage's group commit (one fsync covers everything appended while the previous
one ran). A failed append or fsync raises `LogWriteError`; the runtime then fails the partition
and reloads it from the log (the log is the truth). `reopen` gives a loading partition a freshly
opened (recovered) log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from coordinator.runtime.operation import EndMarker
from storage.batch import Record, encode_marker
from storage.cleaner import CleanStats
from storage.log import Log, LogConfig
from storage.log_manager import LogKey, LogManager

# How far ahead of its appends an internal topic's active segment file is extended (LogConfig.
# preallocate_bytes): about 450 32-partition commits, or 10,000 single ones, per extension.
INTERNAL_PREALLOCATE_BYTES = 1 << 20


class WriterObserver(Protocol):
    """What the transcript and metrics see of the writer (observe/tap.py)."""

    def records(self, partition: int, base_offset: int, records: list[Record]) -> None: ...
    def durable_wait(self, seconds: float) -> None: ...
    def cleaned(self, partition: int, stats: CleanStats) -> None: ...


class LogWriteError(Exception):
    """An append or fsync failed: the partition's log is no longer trustworthy in memory."""


Encode = Callable[[Any], tuple[bytes, bytes | None]]
# The (key, value) of each of an op's records, in order: what `encode` gives one by one, or a
# topic's batch encoder that shares work across a commit's many records.
EncodeAll = Callable[[Sequence[Any]], list[tuple[bytes, bytes | None]]]


class PartitionWriter:
    def __init__(
        self,
        topic: str,
        logs: LogManager,
        num_partitions: int,
        log_config: LogConfig,
        clock: Any,
        encode: Encode,
        observer: WriterObserver | None = None,
        *,
        encode_all: EncodeAll | None = None,
    ) -> None:
        self.topic = topic
        self.logs = logs
        self.num_partitions = num_partitions
        self.log_config = log_config
        self.clock = clock
        self._encode_all: EncodeAll = encode_all or (lambda records: list(map(encode, records)))
        self._observer = observer
        self._opened: set[int] = set()
        self._closed = False

    # -- logs ---------------------------------------------------------------------------------
    def partition_dir(self, partition: int) -> Path:
        return self.logs.partition_dir(self.topic, partition)

    def existing_partitions(self) -> list[int]:
        """Partitions that have a directory on disk (the others are empty by definition)."""
        return [n for n in range(self.num_partitions) if self.partition_dir(n).is_dir()]

    def reopen(self, partition: int) -> Log:
        """A freshly opened log for the partition, recovered if the last stop was unclean; a
        previous log of the partition is closed (or, failed, abandoned to recovery)."""
        if self.logs.get(self.topic, partition) is None:
            log = self.logs.open(self.topic, partition, self.log_config, observer=self)
        else:
            log = self.logs.reopen(self.topic, partition)
        self._opened.add(partition)
        return log

    def log(self, partition: int) -> Log | None:
        return self.logs.get(self.topic, partition)

    def iter_batches(self, partition: int) -> Iterator[tuple[Any, bytes]]:
        """Every batch of a freshly reopened log (the loader's read)."""
        return self.reopen(partition).iter_batches()

    def pause_cleaning(self, partition: int) -> None:
        """No compaction while the partition loads (its batches are being read)."""
        self.logs.pause_cleaning(self.topic, partition)

    def resume_cleaning(self, partition: int) -> None:
        self.logs.resume_cleaning(self.topic, partition)

    # -- writing ------------------------------------------------------------------------------
    def append(
        self,
        partition: int,
        records: Sequence[Any],
        *,
        producer: tuple[int, int] | None = None,
        marker: EndMarker | None = None,
    ) -> int:
        """Append the records as one batch (transactional if `producer` = (id, epoch) is given),
        or the `marker`'s control batch; returns the offset to wait for. With neither, the
        partition's last appended offset, so an empty op is answered after every earlier write
        of its partition (-1: nothing to wait for)."""
        if self._closed:
            raise LogWriteError(f"{self.topic}-{partition}: writer closed")
        log = self.logs.get(self.topic, partition)
        if not records and marker is None:
            return -1 if log is None else log.log_end_offset - 1
        pairs = self._encode_all(records)
        try:
            if log is None:
                log = self.reopen(partition)
            now = self.clock.time_ms()
            if marker is not None:
                base, _ = log.append_batch(
                    encode_marker(
                        marker.producer_id, marker.producer_epoch, marker.commit, marker.coordinator_epoch, now
                    )
                )
                return base
            if producer is not None:  # Kafka's coordinator writes transactional batches at sequence 0
                base = log.append_records(
                    [Record(key=key, value=value) for key, value in pairs],
                    now,
                    producer_id=producer[0],
                    producer_epoch=producer[1],
                    base_sequence=0,
                    transactional=True,
                )
            else:
                base = log.append_kv(pairs, now)
        except Exception as exc:  # OSError, LogFailedError, CorruptLogError on open
            raise LogWriteError(f"{self.topic}-{partition}: append failed: {exc!r}") from exc
        if self._observer is not None:
            self._observer.records(partition, base, [Record(key=key, value=value) for key, value in pairs])
        return base + len(pairs) - 1

    async def wait_durable(self, partition: int, offset: int) -> None:
        if offset < 0:
            return
        log = self.logs.get(self.topic, partition)
        if log is None:
            raise LogWriteError(f"{self.topic}-{partition}: log was closed before it was durable")
        start = time.perf_counter() if self._observer is not None else 0.0
        try:
            await log.wait_durable(offset)
        except Exception as exc:  # OSError from fsync, LogFailedError from a failed/closed log
            raise LogWriteError(f"{self.topic}-{partition}: not durable: {exc!r}") from exc
        if self._observer is not None:
            self._observer.durable_wait(time.perf_counter() - start)

    # -- what the LogManager tells its observers ------------------------------------------------
    def log_failed(self, key: LogKey, log: Log, error: BaseException) -> None:
        """The runtime learns it from the partition's next append or durability wait."""

    def log_cleaned(self, key: LogKey, log: Log, stats: CleanStats) -> None:
        if self._observer is not None:
            self._observer.cleaned(key[1], stats)

    def segments_deleted(self, key: LogKey, log: Log, count: int) -> None:
        """Compacted logs lose no segments to retention."""

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close this topic's logs cleanly (flush, recovery point, clean-shutdown marker); a
        failed log is left for the next open to recover."""
        self._closed = True
        for partition in sorted(self._opened):
            self.logs.close_log(self.topic, partition)
        self._opened.clear()


def internal_topic_log_config(config: Any, segment_bytes: int) -> LogConfig:
    """LogConfig of a coordinator's internal topic (__consumer_offsets, __transaction_state):
    compacted, never deleted by time, flushed and cleaned by the broker's settings, with the
    topic's own segment size (Kafka's groupMetadataTopicConfigs / transactionTopicConfigs)."""
    return LogConfig(
        segment_bytes=segment_bytes,
        cleanup_policy="compact",
        durability=config.log_flush_mode,
        flush_interval_ms=config.log_flush_interval_ms,
        min_cleanable_dirty_ratio=config.log_cleaner_min_cleanable_ratio,
        delete_retention_ms=config.log_cleaner_delete_retention_ms,
        min_compaction_lag_ms=config.log_cleaner_min_compaction_lag_ms,
        retention_ms=-1,
        # Every coordinator reply waits for an fsync of these logs: no file-size commit in it.
        preallocate_bytes=min(INTERNAL_PREALLOCATE_BYTES, segment_bytes),
    )
