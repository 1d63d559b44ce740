"""The data-path service: every served partition's Log, opened once, closed cleanly.

`DataPath` lives in `broker.services["data"]`. It opens every user topic's partitions at start
(recovering them if the last stop was unclean), opens partitions of topics created later
(CreateTopics, Metadata auto-creation) on first use, runs the periodic retention task and, for
log.flush.mode=interval, the flushers. `run()` owns those tasks; when it is cancelled every log is
closed with its clean-shutdown marker, so the next start needs no recovery. Compacted topics:
`compact_hook` is where storage's cleaner gets called: by default it starts one background
cleaning round (storage.cleaner.Cleaner.clean_in_thread) per compacted partition that needs one.
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
from storage.cleaner import Cleaner, CleanerConfig
from storage.log import Log

_log = get_logger("data")


class DataPath:
    def __init__(self, config: Any, topics: TopicRegistry, clock: Any) -> None:
        self.config, self.topics, self.clock = config, topics, clock
        self.producer_ids = ProducerIdManager(topics.data_dir)
        self._partitions: dict[tuple[str, int], Partition] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}  # which incarnation of a name the open logs belong to
        self._nursery: trio.Nursery | None = None
        self.compact_hook: Callable[[Partition], None] | None = self._schedule_clean
        self._cleaner = Cleaner(CleanerConfig(
            dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size))
        self._cleaning: set[tuple[str, int]] = set()  # partitions with a round running
        self._closed = False

    # -- partitions ----------------------------------------------------------------------------
    def open_all(self) -> None:
        for topic in self.topics.all():
            if not topic.internal:
                for index in range(topic.partitions):
                    self.partition(topic.name, index)

    def partition(self, topic_name: str, index: int) -> Partition | None:
        """The served partition, opening its log on first use; None if it does not exist."""
        part = self._partitions.get((topic_name, index))
        topic = self.topics.get(topic_name)
        if topic is None or topic.internal or not 0 <= index < topic.partitions:
            return None
        if part is not None and self._topic_ids.get(topic_name) == topic.topic_id:
            return part
        if self._closed:
            return None
        if self._topic_ids.get(topic_name) not in (None, topic.topic_id):
            self._close_topic(topic_name)  # deleted and re-created behind our back
        self._topic_ids[topic_name] = topic.topic_id
        return self._open(topic, index)

    def _open(self, topic: Topic, index: int) -> Partition:
        overrides = dict(topic.configs)
        log = Log.open(self.topics.partition_dir(topic.name, index), log_config(overrides, self.config), self.clock)
        part = Partition(topic.name, index, log)
        self._partitions[(topic.name, index)] = part
        if log.config.durability == "interval" and self._nursery is not None:
            self._nursery.start_soon(self._flush_on_interval, part)
        return part

    async def _flush_on_interval(self, part: Partition) -> None:
        try:
            await part.log.flush_on_interval()
        except Exception as exc:  # a closed or failed log ends its flusher, nothing else
            log_event(_log, "data.flusher_stopped", topic=part.topic, partition=part.index, reason=repr(exc))

    def max_message_bytes(self, part: Partition) -> int:
        return part.log.config.max_message_bytes

    # -- topics --------------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, configs: dict[str, str],
                     replication_factor: int = 1) -> Topic:
        topic = self.topics.create(name, partitions, configs, replication_factor)
        for index in range(partitions):
            self.partition(name, index)
        return topic

    def delete_topic(self, name: str) -> Topic:
        self._close_topic(name)
        self._topic_ids.pop(name, None)
        return self.topics.delete(name)

    def _close_topic(self, name: str) -> None:
        for key in [k for k in self._partitions if k[0] == name]:
            self._partitions.pop(key).close()

    # -- background work -----------------------------------------------------------------------
    def apply_retention(self) -> int:
        """One retention pass over every open partition (UnifiedLog.deleteOldSegments)."""
        now, deleted = self.clock.time_ms(), 0
        for part in list(self._partitions.values()):
            if part.log.config.cleanup_policy == "compact":
                if self.compact_hook is not None:
                    self.compact_hook(part)
                continue
            deleted += part.apply_retention(now)
        return deleted

    def _schedule_clean(self, part: Partition) -> None:
        """Start a cleaning round in the background if the partition needs one (dirty ratio)
        and none is running for it; rounds of different partitions may overlap."""
        key = (part.topic, part.index)
        if self._nursery is None or key in self._cleaning or not self._cleaner.needs_cleaning(part.log):
            return
        self._cleaning.add(key)
        self._nursery.start_soon(self._clean, part, key)

    async def _clean(self, part: Partition, key: tuple[str, int]) -> None:
        try:
            stats = await self._cleaner.clean_in_thread(part.log)
            if stats is not None:
                log_event(_log, "data.cleaned", topic=part.topic, partition=part.index,
                          bytes_in=stats.bytes_in, bytes_out=stats.bytes_out, end_offset=stats.end_offset)
        except Exception as exc:  # a closed/failed log or corrupt data ends this round only
            log_event(_log, "data.clean_failed", topic=part.topic, partition=part.index, reason=repr(exc))
        finally:
            self._cleaning.discard(key)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for part in self._partitions.values():
                    if part.log.config.durability == "interval":
                        nursery.start_soon(self._flush_on_interval, part)
                nursery.start_soon(self._retention_loop)
                task_status.started()
        finally:
            self._nursery = None
            self.close()

    async def _retention_loop(self) -> None:
        interval = self.config.log_retention_check_interval_ms / 1000
        while True:
            await trio.sleep(interval)
            deleted = self.apply_retention()
            if deleted:
                log_event(_log, "data.retention", segments_deleted=deleted)

    def close(self) -> None:
        """Closes every log (flush, trim indexes, clean-shutdown marker)."""
        self._closed = True
        for part in list(self._partitions.values()):
            try:
                part.close()
            except Exception:  # one bad log must not keep the others from closing cleanly
                _log.exception("closing %s-%s failed", part.topic, part.index)
        self._partitions.clear()
