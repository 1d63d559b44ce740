"""Loading __consumer_offsets into memory at start, and reloading a partition after a failure.

`open_offsets` opens the writer (OffsetsLog) and replays every partition on disk into one
GroupCoordinator and one OffsetStore (Kafka's CoordinatorLoaderImpl + onLoaded). While a
partition loads its groups answer COORDINATOR_LOAD_IN_PROGRESS (`is_loaded`); after an I/O error
it answers COORDINATOR_NOT_AVAILABLE (`is_available`) until `run()` has reloaded it: its groups,
offsets and timers are dropped, parked requests are answered NOT_COORDINATOR (Kafka's
onUnloaded), and the log, reopened and recovered, is replayed again: the log is the truth.
"""

from __future__ import annotations

from protocol.errors import ErrorCode

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import trio

from storage.batch import iter_records

from coordinator.groups.shard import GroupCoordinator
from coordinator.groups.requests import UNKNOWN_MEMBER_ID, JoinGroupResult, SyncGroupResult
from coordinator.groups.offset_store import OffsetStore
from coordinator.groups.records import decode_record
from coordinator.groups.replay import on_loaded, replay
from coordinator.runtime.partition_writer import OffsetsLog, PartitionState, offsets_log_config

__all__ = ["open_offsets", "OffsetsLoader", "LoadStats"]

log = logging.getLogger(__name__)
_CHECKPOINT_EVERY = 20_000  # records between yields to the event loop while loading


@dataclass
class LoadStats:
    partition: int
    records: int = 0
    skipped: int = 0
    batches: int = 0
    seconds: float = 0.0


@dataclass
class OffsetsLoader:
    writer: OffsetsLog
    groups: GroupCoordinator
    offsets: OffsetStore
    clock: Any
    stats: dict[int, LoadStats] = field(default_factory=dict)
    # Called after a (re)load scheduled new timers, so the runtime's timer loop wakes up.
    on_timers_changed: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self._reload_send, self._reload_recv = trio.open_memory_channel[int](float("inf"))
        self.writer.on_failure = self.request_reload

    # -- what handlers ask --------------------------------------------------------------------
    def is_loaded(self, group_id: str) -> bool:
        """False while the group's partition is (re)loading: COORDINATOR_LOAD_IN_PROGRESS."""
        return self.writer.is_loaded(group_id)

    def is_available(self, group_id: str) -> bool:
        """False while loading or failed: answer COORDINATOR_LOAD_IN_PROGRESS / _NOT_AVAILABLE."""
        return self.writer.is_available(group_id)

    # -- loading ------------------------------------------------------------------------------
    async def load_all(self) -> None:
        partitions = self.writer.existing_partitions()
        for n in partitions:
            self.writer.set_state(n, PartitionState.LOADING)
        for n in partitions:
            try:
                await self.load_partition(n)
            except Exception:
                pass  # logged; the partition stays FAILED (COORDINATOR_NOT_AVAILABLE)

    async def load_partition(self, partition: int) -> LoadStats:
        """Drop whatever memory holds for the partition and replay its log."""
        writer = self.writer
        writer.set_state(partition, PartitionState.LOADING)
        self._unload(partition)
        started = time.perf_counter()  # for the stats only: nothing depends on it
        stats = LoadStats(partition)
        try:
            plog = writer.open_partition(partition)
            now_ms = self.clock.time_ms()
            groups, offsets = self.groups, self.offsets
            next_yield = _CHECKPOINT_EVERY
            # Only the last record per key matters, so collect (key -> last value) first, in
            # order of last occurrence, and decode each surviving key once. The result equals a
            # record-by-record replay, except that a simple group whose every offset was
            # deleted again does not reappear: the state Kafka itself reaches after compaction.
            latest: dict[bytes, bytes | None] = {}
            pop = latest.pop
            for _, data in plog.iter_batches():
                stats.batches += 1
                for rec in iter_records(data):
                    key = rec.key
                    if key is not None:
                        pop(key, None)
                        latest[key] = rec.value
                        stats.records += 1
                if stats.records >= next_yield:
                    next_yield = stats.records + _CHECKPOINT_EVERY
                    await trio.lowlevel.checkpoint()
            for done, (key, value) in enumerate(latest.items(), 1):
                if not replay(decode_record(key, value), groups, offsets, now_ms):
                    stats.skipped += 1
                if done % _CHECKPOINT_EVERY == 0:
                    await trio.lowlevel.checkpoint()
        except Exception:
            log.exception("loading %s failed", writer.partition_dir(partition))
            writer.set_state(partition, PartitionState.FAILED)
            raise
        on_loaded(groups, [g for g in groups.groups if writer.partition_for(g) == partition],
                  self.clock.time_ms())
        writer.set_state(partition, PartitionState.ACTIVE)
        stats.seconds = time.perf_counter() - started
        self.stats[partition] = stats
        if self.on_timers_changed is not None:
            self.on_timers_changed()
        return stats

    def _unload(self, partition: int) -> None:
        """Kafka onUnloaded: forget the partition's groups, offsets and timers; answer parked
        requests NOT_COORDINATOR so their clients look the coordinator up again."""
        writer = self.writer
        doomed = {g for g in self.groups.groups if writer.partition_for(g) == partition}
        for group_id in doomed:
            group = self.groups.groups.pop(group_id)
            for member in group.members.values():
                for reply, value in ((member.awaiting_join,
                                      JoinGroupResult(ErrorCode.NOT_COORDINATOR, UNKNOWN_MEMBER_ID)),
                                     (member.awaiting_sync, SyncGroupResult(ErrorCode.NOT_COORDINATOR))):
                    if reply is not None and not reply.done:
                        reply.resolve(value)
                member.awaiting_join = member.awaiting_sync = None
        for group_id in [g for g in self.offsets.groups if writer.partition_for(g) == partition]:
            self.offsets.drop_group(group_id)
        timers = self.groups.timers
        for key in timers.keys():
            # Group timers are keyed (kind, group_id, ...): see groups/rebalance.py.
            if isinstance(key, tuple) and len(key) >= 2 and key[1] in doomed:
                timers.cancel(key)

    # -- failures -----------------------------------------------------------------------------
    def request_reload(self, partition: int) -> None:
        """The writer marked the partition FAILED: reload it from its log (in `run`)."""
        self._reload_send.send_nowait(partition)

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Background task: reload failed partitions, flush on interval when configured.
        Start it in the server's nursery next to the runtime."""
        async with trio.open_nursery() as nursery:
            if self.writer.log_config.durability == "interval":
                nursery.start_soon(self._flush_on_interval)
            task_status.started()
            async for partition in self._reload_recv:
                if self.writer.state(partition) is not PartitionState.FAILED:
                    continue
                try:
                    await self.load_partition(partition)
                    log.warning("%s reloaded after a failure", self.writer.partition_dir(partition))
                except Exception:
                    # Stays FAILED (COORDINATOR_NOT_AVAILABLE); a restart will try again.
                    pass

    async def _flush_on_interval(self) -> None:
        period = self.writer.log_config.flush_interval_ms / 1000
        while True:
            await trio.sleep(period)
            for n in range(self.writer.num_partitions):
                plog = self.writer.log(n)
                if plog is None or plog.durable_offset >= plog.log_end_offset:
                    continue
                try:
                    plog.flush()
                except Exception:
                    self.writer.mark_failed(n)


async def open_offsets(config: Any, clock: Any, *, groups: GroupCoordinator | None = None,
                       offsets: OffsetStore | None = None,
                       load: bool = True) -> tuple[OffsetsLog, OffsetsLoader]:
    """Open __consumer_offsets under config.data_dir and (unless load=False) replay it.

    Returns (writer, loaded): `writer` is the runtime's Writer; `loaded.groups` and
    `loaded.offsets` (the given objects, or new ones) hold the replayed state. With load=False
    the partitions on disk stay LOADING until `await loaded.load_all()`."""
    writer = OffsetsLog(config.data_path, config.offsets_topic_num_partitions,
                        offsets_log_config(config), clock)
    loader = OffsetsLoader(writer, groups if groups is not None else GroupCoordinator(),
                           offsets if offsets is not None else OffsetStore(), clock)
    for n in writer.existing_partitions():
        writer.set_state(n, PartitionState.LOADING)
    if load:
        await loader.load_all()
    return writer, loader
