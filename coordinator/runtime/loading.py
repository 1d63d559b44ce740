"""Loading one partition of an internal topic into a new shard (Kafka's CoordinatorLoaderImpl).

The partition's log is reopened (recovered if the last stop was unclean) and every record is
decoded and applied through the shard's `replay`, the same path live operations take. Fast
path: only the last record per key matters, so the keys are collected first (in order of last
occurrence) and each survivor is decoded once: the result equals a record-by-record replay,
except that a simple group whose every offset was deleted again does not reappear — the state
Kafka itself reaches after compaction. Transactions: at the first transactional or control
batch the survivors so far are replayed and the rest of the log is replayed in order, each
record of a transactional batch through `replay_transactional` with its producer id and each
COMMIT/ABORT marker through `replay_end_transaction` (Kafka's loader does the same for every
batch), so an offset committed in a transaction counts only once its COMMIT marker is read and
an aborted one never. The plain batches before that are read straight from the segment files
(storage.batch.fold: no per-batch objects); from the first batch it does not fold the rest goes
through Log.iter_batches. The loop yields to trio every `CHECKPOINT_EVERY` records. A shard
whose kind replays every record (`every_record`: __share_group_state, where each of a key's
ShareUpdate records counts) gets every record in log order instead, with its offset.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from coordinator.runtime.clock import Clock
from coordinator.runtime.operation import RecordOffsets, Replayable, TransactionalReplayable
from coordinator.runtime.partition_writer import PartitionWriter
from storage.batch import InvalidBatch, iter_records, read_marker
from storage.batch.fold import fold_region
from storage.batch.record_walk import fold_latest, records_region
from storage.log import Log

log = logging.getLogger(__name__)
CHECKPOINT_EVERY = 20_000  # records between yields to the event loop while loading


@dataclass
class LoadStats:
    partition: int
    records: int = 0
    skipped: int = 0
    batches: int = 0
    seconds: float = 0.0
    transactional: bool = False  # the log holds transactional batches: replayed in order after the first


class ReloadBackoff:
    """How long a failed partition waits before each reload attempt: `first_ms`, doubling up to
    `max_ms`. A partition that fails again soon after a reload (within twice `max_ms`) starts
    from twice its last delay: a full disk must not turn every request into a reload of the
    whole partition."""

    def __init__(self, first_ms: int, max_ms: int) -> None:
        self._first_ms, self._max_ms = first_ms, max_ms
        self._last: dict[int, tuple[float, float]] = {}  # partition -> (its last delay ms, trio time served)

    def first_delay(self, partition: int) -> float:
        last = self._last.get(partition)
        if last is not None and trio.current_time() - last[1] < 2 * self._max_ms / 1000:
            return min(last[0] * 2, self._max_ms)
        return self._first_ms

    def next_delay(self, delay_ms: float) -> float:
        return min(delay_ms * 2, self._max_ms)

    def served(self, partition: int, delay_ms: float) -> None:
        """The reload after `delay_ms` succeeded."""
        self._last[partition] = (delay_ms, trio.current_time())


async def replay_log(
    writer: PartitionWriter,
    decode: Callable[[bytes, bytes | None], Any],
    partition: int,
    shard: Replayable,
    clock: Clock,
    *,
    every_record: bool = False,
) -> LoadStats:
    started = time.perf_counter()  # for the stats only: nothing depends on it
    stats = LoadStats(partition)
    try:
        if every_record:
            await _replay_every_record(writer.reopen(partition), decode, shard, clock, stats)
            stats.seconds = time.perf_counter() - started
            return stats
        latest: dict[bytes, bytes | None] = {}
        log_ = writer.reopen(partition)
        offset = await _fold_segments(log_, latest, stats)
        next_yield = stats.records + CHECKPOINT_EVERY
        batches = log_.iter_batches(offset)
        for header, data in batches:
            if header.is_transactional or header.is_control:
                await _replay_latest(latest, decode, shard, clock, stats)
                latest = {}
                await _replay_in_order(header, data, batches, decode, shard, clock, stats)
                break
            stats.batches += 1
            buf, pos, end = records_region(data, 0, header.size, header.attributes)
            stats.records += fold_latest(buf, pos, end, header.records_count, latest)
            if stats.records >= next_yield:
                next_yield = stats.records + CHECKPOINT_EVERY
                await trio.lowlevel.checkpoint()
        await _replay_latest(latest, decode, shard, clock, stats)
    except Exception:
        log.exception("loading %s failed", writer.partition_dir(partition))
        raise
    stats.seconds = time.perf_counter() - started
    return stats


async def _replay_every_record(
    log_: Log, decode: Callable[[bytes, bytes | None], Any], shard: Replayable, clock: Clock, stats: LoadStats
) -> None:
    """Every record of every plain batch, in log order, each followed by `written` with its offset."""
    if not isinstance(shard, RecordOffsets):
        raise TypeError(f"{type(shard).__name__} does not take record offsets")
    now_ms = clock.time_ms()
    next_yield = CHECKPOINT_EVERY
    for header, data in log_.iter_batches():
        stats.batches += 1
        if header.is_control:
            continue
        for rec in iter_records(data):
            if rec.key is None or rec.offset is None:
                continue
            stats.records += 1
            record = decode(rec.key, rec.value)
            if shard.replay(record, now_ms):
                shard.written((record,), rec.offset)
            else:
                stats.skipped += 1
        if stats.records >= next_yield:
            next_yield = stats.records + CHECKPOINT_EVERY
            await trio.lowlevel.checkpoint()


async def _fold_segments(log_: Log, latest: dict[bytes, bytes | None], stats: LoadStats) -> int:
    """Fold the log's plain batches from its start into `latest`, segment by segment where
    Log.locate finds them (as Log.iter_batches does); returns the offset of the first batch not
    folded (the log end offset when every batch was)."""
    offset = log_.log_start_offset
    next_yield = stats.records + CHECKPOINT_EVERY
    while offset < log_.log_end_offset:
        found = log_.locate(offset)
        if found is None:
            break
        seg, pos, offset = found
        while True:
            folded = fold_region(seg.fd, pos, seg.size, latest)
            stats.batches += folded.batches
            stats.records += folded.records
            if folded.next_offset >= 0:
                offset = folded.next_offset
            if folded.stopped:
                return offset  # Log.iter_batches takes it from here, and says what is wrong
            if folded.position >= seg.size:
                break
            pos = folded.position
            if stats.records >= next_yield:
                next_yield = stats.records + CHECKPOINT_EVERY
                await trio.lowlevel.checkpoint()
                if seg.fd < 0:  # replaced while we yielded: look it up again
                    break
    return offset


async def _replay_latest(
    latest: dict[bytes, bytes | None],
    decode: Callable[[bytes, bytes | None], Any],
    shard: Replayable,
    clock: Clock,
    stats: LoadStats,
) -> None:
    now_ms = clock.time_ms()
    replay = shard.replay
    for done, (key, value) in enumerate(latest.items(), 1):
        if not replay(decode(key, value), now_ms):
            stats.skipped += 1
        if done % CHECKPOINT_EVERY == 0:
            await trio.lowlevel.checkpoint()


async def _replay_in_order(
    header: Any,
    data: bytes,
    rest: Any,
    decode: Callable[[bytes, bytes | None], Any],
    shard: Replayable,
    clock: Clock,
    stats: LoadStats,
) -> None:
    """Replay the batch `header`/`data` and every batch of `rest` record by record."""
    if not isinstance(shard, TransactionalReplayable):
        raise TypeError(f"{type(shard).__name__} cannot replay transactional batches")
    stats.transactional = True
    now_ms = clock.time_ms()
    next_yield = stats.records + CHECKPOINT_EVERY
    while True:
        stats.batches += 1
        if header.is_control:
            try:
                marker = read_marker(data)
            except InvalidBatch:
                marker = None
            if marker is not None:
                shard.replay_end_transaction(header.producer_id, marker.commit, now_ms)
        else:
            transactional = header.is_transactional
            for rec in iter_records(data):
                if rec.key is None:
                    continue
                stats.records += 1
                record = decode(rec.key, rec.value)
                applied = (
                    shard.replay_transactional(record, header.producer_id, now_ms)
                    if transactional
                    else shard.replay(record, now_ms)
                )
                if not applied:
                    stats.skipped += 1
        if stats.records >= next_yield:
            next_yield = stats.records + CHECKPOINT_EVERY
            await trio.lowlevel.checkpoint()
        nxt = next(rest, None)
        if nxt is None:
            return
        header, data = nxt
