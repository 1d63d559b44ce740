"""The data-path service: every served user-topic partition, its Log kept by storage's LogManager.

`DataPath` lives in `broker.services["data"]`. It opens every user topic's partitions at start
(recovering them after an unclean stop) and those of topics created later on first use; the
LogManager (its own, or the data dir's shared one) does the background work (flushers,
checkpoints, retention, compaction) and tells DataPath what happened (it is each log's
observer). `run()` reopens partitions whose log failed, with backoff, so a full disk that clears
heals by itself; when cancelled, every log is closed with its clean-shutdown marker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import trio

from coordinator.broker.partition import Partition
from coordinator.broker.producer_ids import ProducerIdManager
from coordinator.broker.topic_config import log_config
from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.observe.logs import get_logger, log_event
from storage.cleaner import CleanerConfig, CleanStats
from storage.log import Log
from storage.log_manager import LogKey, LogManager, LogManagerConfig

_log = get_logger("data")
_REOPEN_BACKOFF_MS = (1_000, 30_000)  # first and longest wait before reopening a failed log


class DataPath:
    def __init__(
        self,
        config: Any,
        topics: TopicRegistry,
        clock: Any,
        logs: LogManager | None = None,
        owns: Callable[[str, int], bool] | None = None,
        producer_ids: ProducerIdManager | None = None,
    ) -> None:
        """`logs`: the data dir's LogManager when the composition root shares one with
        `__consumer_offsets`; by default DataPath makes its own. Its logs report to this
        DataPath (the observer given to each open) either way. `owns(topic, partition)`: when
        brokers run as separate processes (cluster.processes), only the partitions this process
        leads are opened; the others' logs belong to another process and are never touched."""
        self.config, self.topics, self.clock = config, topics, clock
        self._owns = owns
        self.producer_ids = producer_ids if producer_ids is not None else ProducerIdManager(topics.data_dir)
        self._partitions: dict[tuple[str, int], Partition] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}  # which incarnation of a name the open logs belong to
        self._reopen_waits: dict[LogKey, list[int]] = {}  # failed: [ms until the next try, wait]
        self._closed = False
        self._owns_logs = logs is None  # then run() and close() are the manager's too
        self.logs = (
            logs
            if logs is not None
            else LogManager(
                topics.data_dir,
                clock,
                LogManagerConfig(
                    retention_check_interval_ms=config.log_retention_check_interval_ms,
                    cleaner_backoff_ms=config.log_cleaner_backoff_ms,
                    cleaner=CleanerConfig(dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size),
                ),
            )
        )

    # -- partitions ----------------------------------------------------------------------------
    def open_all(self) -> None:
        for topic in self.topics.all():
            if not topic.internal:
                for index in range(topic.partitions):
                    if self._owns is None or self._owns(topic.name, index):
                        self.partition(topic.name, index)

    def may_serve(self, topic_name: str, index: int) -> bool:
        """Whether this process may hold the partition's log now (always in one process; with
        cluster.processes, not while another process may still hold it)."""
        return self._owns is None or self._owns(topic_name, index)

    def partition(self, topic_name: str, index: int) -> Partition | None:
        """The served partition, opening its log on first use; None if it does not exist."""
        part = self._partitions.get((topic_name, index))
        topic = self.topics.get(topic_name)
        if topic is None or topic.internal or not 0 <= index < topic.partitions:
            return None
        if self._owns is not None and not self._owns(topic_name, index):
            return None  # another process's log
        if part is not None and self._topic_ids.get(topic_name) == topic.topic_id:
            return part
        if self._closed:
            return None
        if self._topic_ids.get(topic_name) not in (None, topic.topic_id):
            self._close_topic(topic_name)  # deleted and re-created behind our back
        self._topic_ids[topic_name] = topic.topic_id
        return self._open(topic, index)

    def _open(self, topic: Topic, index: int) -> Partition:
        log = self.logs.open(topic.name, index, log_config(dict(topic.configs), self.config), observer=self)
        part = Partition(topic.name, index, log)
        self._partitions[(topic.name, index)] = part
        return part

    def served(self) -> list[Partition]:
        """The partitions open now (the producer-id expiry walks them)."""
        return list(self._partitions.values())

    def max_message_bytes(self, part: Partition) -> int:
        return part.log.config.max_message_bytes

    # -- topics --------------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, configs: dict[str, str], replication_factor: int = 1) -> Topic:
        topic = self.topics.create(name, partitions, configs, replication_factor)
        for index in range(partitions):
            self.partition(name, index)
        return topic

    def grow_topic(self, name: str, partitions: int) -> Topic:
        """CreatePartitions: the topic's new partitions exist (and are opened) from here on."""
        topic = self.topics.grow(name, partitions)
        for index in range(partitions):
            self.partition(name, index)
        return topic

    def set_topic_configs(self, name: str, overrides: dict[str, str]) -> Topic:
        """AlterConfigs on a topic: persisted, then applied to every open log of it."""
        topic = self.topics.set_configs(name, overrides)
        self._reconfigure(topic)
        return topic

    def reconfigure_logs(self) -> None:
        """A dynamic broker default changed (log.retention.ms, ...): every open log takes its
        effective configs again."""
        for topic in self.topics.all():
            if not topic.internal:
                self._reconfigure(topic)

    def reconfigure_topic(self, name: str) -> None:
        """cluster.processes: another process changed the topic's overrides."""
        topic = self.topics.get(name)
        if topic is not None and not topic.internal:
            self._reconfigure(topic)

    def _reconfigure(self, topic: Topic) -> None:
        config = log_config(dict(topic.configs), self.config)
        for name, index in list(self._partitions):
            if name == topic.name:
                self.logs.reconfigure(name, index, config)

    def delete_topic(self, name: str) -> Topic:
        self._close_topic(name)
        self._topic_ids.pop(name, None)
        return self.topics.delete(name)

    def close_topic(self, name: str, topic_id: uuid.UUID) -> None:
        """Another process deleted the topic (cluster.processes): this one's logs of that
        incarnation close (a newer one's, opened meanwhile, stay)."""
        if self._topic_ids.get(name) == topic_id:
            self._close_topic(name)
            self._topic_ids.pop(name, None)

    def close_partition(self, topic_name: str, index: int) -> None:
        """This process stopped leading the partition (cluster.processes): its log closes, its
        waiters wake (and find it gone); the new leader's process opens it next."""
        part = self._partitions.pop((topic_name, index), None)
        if part is not None:
            part.wake_waiters()
            self._reopen_waits.pop((topic_name, index), None)
            self.logs.close_log(topic_name, index)

    def _close_topic(self, name: str) -> None:
        for key in [k for k in self._partitions if k[0] == name]:
            self._partitions.pop(key).wake_waiters()
            self._reopen_waits.pop(key, None)
            self.logs.close_log(*key)

    # -- background work -----------------------------------------------------------------------
    def apply_retention(self) -> int:
        """One retention pass over every delete-policy partition (UnifiedLog.deleteOldSegments);
        returns the segments deleted. Compacted topics are cleaned by the LogManager's cleaner."""
        return self.logs.apply_retention()

    # LogObserver: what the LogManager did in the background.
    def log_failed(self, key: LogKey, log: Log, error: BaseException) -> None:
        log_event(_log, "data.log_failed", topic=key[0], partition=key[1], reason=repr(error))

    def log_cleaned(self, key: LogKey, log: Log, stats: CleanStats) -> None:
        log_event(
            _log,
            "data.cleaned",
            topic=key[0],
            partition=key[1],
            bytes_in=stats.bytes_in,
            bytes_out=stats.bytes_out,
            end_offset=stats.end_offset,
        )

    def segments_deleted(self, key: LogKey, log: Log, count: int) -> None:
        log_event(_log, "data.retention", topic=key[0], partition=key[1], segments_deleted=count)

    def reopen_failed(self, elapsed_ms: int) -> list[LogKey]:
        """Reopen (recover) the failed logs whose wait ran out after `elapsed_ms` more; a
        failed try doubles the wait, up to the longest. Returns the partitions serving again."""
        healed = []
        for key in self.logs.failed_logs():
            if key not in self._partitions:
                continue
            state = self._reopen_waits.setdefault(key, [_REOPEN_BACKOFF_MS[0]] * 2)  # [left, wait]
            state[0] -= elapsed_ms
            if state[0] > 0:
                continue
            try:
                log = self.logs.reopen(*key)
            except Exception as exc:
                state[1] = min(2 * state[1], _REOPEN_BACKOFF_MS[1])
                state[0] = state[1]
                log_event(_log, "data.reopen_failed", topic=key[0], partition=key[1], reason=repr(exc))
                continue
            del self._reopen_waits[key]
            old, self._partitions[key] = self._partitions[key], Partition(key[0], key[1], log)
            old.wake_waiters()  # parked fetches look the partition up again
            log_event(_log, "data.reopened", topic=key[0], partition=key[1])
            healed.append(key)
        return healed

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with trio.open_nursery() as nursery:
                if self._owns_logs:
                    await nursery.start(self.logs.run)
                nursery.start_soon(self._reopen_loop)
                task_status.started()
        finally:
            self.close()

    async def _reopen_loop(self) -> None:
        step = _REOPEN_BACKOFF_MS[0]
        while True:
            await trio.sleep(step / 1000)
            self.reopen_failed(step)

    def close(self) -> None:
        """Closes every log (flush, trim indexes, clean-shutdown marker)."""
        self._closed = True
        for key, part in list(self._partitions.items()):
            part.wake_waiters()
            if not self._owns_logs:
                self.logs.close_log(*key)
        self._partitions.clear()
        if self._owns_logs:
            self.logs.close()
