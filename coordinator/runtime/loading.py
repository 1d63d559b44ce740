"""Loading one partition of an internal topic into a new shard (Kafka's CoordinatorLoaderImpl).

The partition's log is reopened (recovered if the last stop was unclean) and every record is
decoded and applied through the shard's `replay`, the same path live operations take. Only the
last record per key matters, so the keys are collected first (in order of last occurrence) and
each survivor is decoded once: the result equals a record-by-record replay, except that a simple
group whose every offset was deleted again does not reappear — the state Kafka itself reaches
after compaction. The loop yields to trio every `CHECKPOINT_EVERY` records.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from coordinator.runtime.clock import Clock
from coordinator.runtime.operation import Replayable
from coordinator.runtime.partition_writer import PartitionWriter
from storage.batch.scan import fold_latest, records_region

log = logging.getLogger(__name__)
CHECKPOINT_EVERY = 20_000  # records between yields to the event loop while loading


@dataclass
class LoadStats:
    partition: int
    records: int = 0
    skipped: int = 0
    batches: int = 0
    seconds: float = 0.0


async def replay_log(writer: PartitionWriter, decode: Callable[[bytes, bytes | None], Any],
                     partition: int, shard: Replayable, clock: Clock) -> LoadStats:
    started = time.perf_counter()  # for the stats only: nothing depends on it
    stats = LoadStats(partition)
    try:
        latest: dict[bytes, bytes | None] = {}
        next_yield = CHECKPOINT_EVERY
        for header, data in writer.iter_batches(partition):  # CRC-checked whole batches
            stats.batches += 1
            buf, pos, end = records_region(data, 0, header.size, header.attributes)
            stats.records += fold_latest(buf, pos, end, header.records_count, latest)
            if stats.records >= next_yield:
                next_yield = stats.records + CHECKPOINT_EVERY
                await trio.lowlevel.checkpoint()
        now_ms = clock.time_ms()
        replay = shard.replay
        for done, (key, value) in enumerate(latest.items(), 1):
            if not replay(decode(key, value), now_ms):
                stats.skipped += 1
            if done % CHECKPOINT_EVERY == 0:
                await trio.lowlevel.checkpoint()
    except Exception:
        log.exception("loading %s failed", writer.partition_dir(partition))
        raise
    stats.seconds = time.perf_counter() - started
    return stats
