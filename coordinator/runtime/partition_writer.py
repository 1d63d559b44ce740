"""The durable Writer: group records -> __consumer_offsets-<n> logs, one batch per op and partition.

Each record goes to its group's partition (placement.partition_for); the records one operation
produces for one partition are encoded as ONE batch, so they are atomic, as Kafka's
CoordinatorRuntime appends them. `wait_durable(token)` waits on every partition the op touched
through storage's group commit (one fsync covers everything appended while the previous one ran).
Partition states follow Kafka's CoordinatorRuntime: LOADING -> ACTIVE -> FAILED -> LOADING...
A failed append or fsync raises `CoordinatorUnavailableError`, marks the partition FAILED (its
groups answer COORDINATOR_NOT_AVAILABLE) and calls `on_failure` so the loader reloads it from disk.
`run_cleaner` is the background task that compacts the ACTIVE partitions (storage.cleaner).
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import trio

from storage.batch import Record
from storage.cleaner import Cleaner, CleanerConfig
from storage.log import Log, LogConfig

from coordinator.groups.placement import partition_for
from coordinator.groups.records import encode_record

__all__ = ["OffsetsLog", "PartitionState", "CoordinatorUnavailableError", "TOPIC",
           "offsets_log_config"]

TOPIC = "__consumer_offsets"


class PartitionState(enum.Enum):
    LOADING = "loading"  # COORDINATOR_LOAD_IN_PROGRESS
    ACTIVE = "active"
    FAILED = "failed"  # COORDINATOR_NOT_AVAILABLE until reloaded


class CoordinatorUnavailableError(Exception):
    """The partition cannot take writes: it failed (I/O error) or is (re)loading.
    `error_code` is the Kafka error a handler should answer with."""

    def __init__(self, partition: int, state: PartitionState, reason: str) -> None:
        super().__init__(f"{TOPIC}-{partition} is {state.value}: {reason}")
        self.partition = partition
        self.state = state

    @property
    def error_code(self) -> int:
        return 14 if self.state is PartitionState.LOADING else 15


def offsets_log_config(config: Any) -> LogConfig:
    """LogConfig for __consumer_offsets (GroupCoordinatorService.groupMetadataTopicConfigs:
    cleanup.policy=compact, segment.bytes=offsets.topic.segment.bytes)."""
    return LogConfig(
        segment_bytes=config.offsets_topic_segment_bytes,
        cleanup_policy="compact",
        durability=config.log_flush_mode,
        flush_interval_ms=config.log_flush_interval_ms,
        min_cleanable_dirty_ratio=config.log_cleaner_min_cleanable_ratio,
        delete_retention_ms=config.log_cleaner_delete_retention_ms,
        min_compaction_lag_ms=config.log_cleaner_min_compaction_lag_ms,
        retention_ms=-1,
    )


class OffsetsLog:
    def __init__(self, data_dir: str | os.PathLike[str], num_partitions: int, log_config: LogConfig,
                 clock: Any) -> None:
        self.data_dir = Path(data_dir)
        self.num_partitions = num_partitions
        self.log_config = log_config
        self.clock = clock
        self._logs: dict[int, Log] = {}
        # Partitions without an entry have no log yet: ACTIVE (nothing to load).
        self._states: dict[int, PartitionState] = {}
        self._tokens: dict[int, list[tuple[int, Log, int]]] = {}
        # Partitions appended to since they were last seen durable: an empty op (a heartbeat)
        # waits for these only, instead of looking at all 50 logs on every request.
        self._undurable: dict[int, Log] = {}
        self._next_token = 1
        self._closed = False
        self.on_failure: Callable[[int], None] | None = None
        # (partition, base offset, records) per batch appended: the transcript/metrics tap.
        self.on_append: Callable[[int, int, list[Record]], None] | None = None
        self.on_cleaned: Callable[[int, Any], None] | None = None  # (partition, CleanStats)

    # -- partitions ---------------------------------------------------------------------------
    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def partition_dir(self, partition: int) -> Path:
        return self.data_dir / f"{TOPIC}-{partition}"

    def existing_partitions(self) -> list[int]:
        """Partitions that have a directory on disk (the others are empty by definition)."""
        return [n for n in range(self.num_partitions) if self.partition_dir(n).is_dir()]

    def open_partition(self, partition: int) -> Log:
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

    def state(self, partition: int) -> PartitionState:
        return self._states.get(partition, PartitionState.ACTIVE)

    def set_state(self, partition: int, state: PartitionState) -> None:
        self._states[partition] = state

    def is_available(self, group_id: str) -> bool:
        """False while the group's partition is loading or failed."""
        return self.state(self.partition_for(group_id)) is PartitionState.ACTIVE

    def is_loaded(self, group_id: str) -> bool:
        return self.state(self.partition_for(group_id)) is not PartitionState.LOADING

    def mark_failed(self, partition: int, exc: BaseException | None = None) -> None:
        if self.state(partition) is PartitionState.FAILED:
            return
        self._states[partition] = PartitionState.FAILED
        if self.on_failure is not None and not self._closed:
            self.on_failure(partition)

    # -- the Writer protocol ------------------------------------------------------------------
    def append(self, records: Sequence[object]) -> int:
        """Append the op's records, one batch per partition; returns a token for wait_durable.
        An empty op's token covers everything appended so far that is not yet durable."""
        by_partition: dict[int, list[Record]] = {}
        for obj in records:
            key, value = encode_record(obj)
            by_partition.setdefault(self.partition_for(obj.group_id), []).append(  # type: ignore[attr-defined]
                Record(key=key, value=value))
        waits: list[tuple[int, Log, int]] = []
        failure: CoordinatorUnavailableError | None = None
        if not by_partition:
            # Failed or loading partitions are skipped: their pending writes have no future.
            for n, log in list(self._undurable.items()):
                if log.durable_offset >= log.log_end_offset or self._logs.get(n) is not log:
                    del self._undurable[n]
                elif self.state(n) is PartitionState.ACTIVE:
                    waits.append((n, log, log.log_end_offset - 1))
        for partition, batch in by_partition.items():
            try:
                waits.append((partition, *self._append(partition, batch)))
            except CoordinatorUnavailableError as exc:
                failure = failure or exc
                continue
            if self.on_append is not None:
                self.on_append(partition, waits[-1][2] - len(batch) + 1, batch)
        if failure is not None:
            # The partitions that did append stay durable-bound; nobody answers this op anyway.
            raise failure
        token = self._next_token
        self._next_token += 1
        self._tokens[token] = waits
        return token

    def _append(self, partition: int, batch: list[Record]) -> tuple[Log, int]:
        if self._closed:
            raise CoordinatorUnavailableError(partition, PartitionState.FAILED, "closed")
        state = self.state(partition)
        if state is not PartitionState.ACTIVE:
            raise CoordinatorUnavailableError(partition, state, "not accepting writes")
        log = self._logs.get(partition)
        try:
            if log is None:
                log = self.open_partition(partition)
            base = log.append_records(batch, self.clock.time_ms())
            self._undurable[partition] = log
        except Exception as exc:  # OSError, LogFailedError, CorruptLogError on open
            self.mark_failed(partition, exc)
            raise CoordinatorUnavailableError(partition, PartitionState.FAILED,
                                              f"append failed: {exc!r}") from exc
        return log, base + len(batch) - 1

    async def wait_durable(self, token: int) -> None:
        """Return once every batch of the op is fsynced; raise CoordinatorUnavailableError if a
        partition failed before that (its outcome is then decided by recovery on reload)."""
        waits = self._tokens.pop(token, [])
        failure: CoordinatorUnavailableError | None = None
        for partition, log, offset in waits:
            try:
                await log.wait_durable(offset)
            except Exception as exc:  # OSError from fsync, LogFailedError from a failed/closed log
                if self._logs.get(partition) is log:
                    self.mark_failed(partition, exc)
                if failure is None:
                    failure = CoordinatorUnavailableError(partition, PartitionState.FAILED,
                                                          f"not durable: {exc!r}")
                    failure.__cause__ = exc
        if failure is not None:
            raise failure

    # -- compaction (Kafka's LogCleaner thread for this topic) ---------------------------------
    async def clean_once(self, cleaner: Cleaner | None = None) -> list[int]:
        """One pass: a cleaning round for each ACTIVE partition over the dirty ratio (map and
        recopy in a worker thread, swap here). Returns the partitions cleaned. A failed swap
        fails the log: the partition is marked FAILED and reloaded like after a failed append."""
        cleaner = cleaner or Cleaner()
        cleaned = []
        for partition, log in list(self._logs.items()):
            if self._closed or self.state(partition) is not PartitionState.ACTIVE:
                continue
            try:
                stats = await cleaner.clean_in_thread(log)
            except Exception as exc:  # OSError, LogFailedError, CorruptLogError
                if self._logs.get(partition) is log and log.failed:
                    self.mark_failed(partition, exc)
                continue
            if stats is not None:
                cleaned.append(partition)
                if self.on_cleaned is not None:  # the metrics tap
                    self.on_cleaned(partition, stats)
        return cleaned

    async def run_cleaner(self, backoff_ms: int = 15_000, dedupe_buffer_size: int = 128 << 20, *,
                          task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Background task: clean_once every `backoff_ms` (log.cleaner.backoff.ms) until
        cancelled or closed."""
        cleaner = Cleaner(CleanerConfig(dedupe_buffer_size=dedupe_buffer_size))
        task_status.started()
        while not self._closed:
            await trio.sleep(backoff_ms / 1000)
            await self.clean_once(cleaner)

    # -- lifecycle ----------------------------------------------------------------------------
    def flush(self) -> None:
        for log in self._logs.values():
            log.flush()

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
        self._tokens.clear()
