"""Reading and acquiring for one ShareFetch (Kafka's DelayedShareFetch and ShareFetchUtils).

The fetch waits (up to MaxWaitMs) until the share-partitions it reads have MinBytes acquirable:
new data below the high watermark (the last stable offset for read_committed groups), or records
available again below the end offset. It parks on the logs' waiters (a produce moving a high
watermark) and the manager's (a release, an expired lock), never polling. Then, partition by
partition in an order that rotates from one fetch to the next (Kafka's round-robin
PartitionRotateStrategy), each share-partition under its lock reads whole batches from its next
fetch offset and acquires them for the member: MaxRecords and MaxBytes bound the whole fetch
(the first partition with data may exceed MaxBytes by one batch, KIP-74). A next fetch offset
below the log start (DeleteRecords, retention) moves the share-partition's start there first
(Kafka: OFFSET_OUT_OF_RANGE then updateCacheAndOffsets). Nothing is acquired while waiting.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from coordinator.share.acquire import Acquired, AcquireRequest, acquire
from coordinator.share.fetched import aborted_batches, fetched_batches, slice_to
from coordinator.share.manager import Entry, PartitionError, SharePartitionManager
from coordinator.share.partition import PartitionState
from coordinator.share.persister import SharePartitionKey
from protocol.errors import ErrorCode

READ_COMMITTED = "read_committed"


@dataclass(frozen=True)
class ShareFetchParams:
    group_id: str
    member_id: str
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    batch_size: int
    record_limit: bool = False  # KIP-1206 ShareAcquireMode 1 (v2)


@dataclass
class PartitionResult:
    error: int = ErrorCode.NONE
    message: str | None = None
    records: bytes = b""
    acquired: list[Acquired] = field(default_factory=list)


class BrokerLogs:
    """The broker's topics, leaders and logs as the share-partition manager reads them."""

    def __init__(self, topics: Any, cluster: Any, data: Any) -> None:
        self._topics, self._cluster, self._data = topics, cluster, data

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self._topics.by_id(topic_id)
        return None if topic is None or topic.internal else str(topic.name)

    def leader_epoch(self, topic: str, partition: int) -> tuple[int, int] | None:
        lead = self._cluster.leadership(topic, partition)
        return None if lead is None else (int(lead.leader), int(lead.epoch))

    def log(self, topic: str, partition: int) -> Any:
        return self._data.partition(topic, partition)


async def share_fetch(
    manager: SharePartitionManager, keys: Sequence[SharePartitionKey], p: ShareFetchParams, rotation: int = 0
) -> dict[SharePartitionKey, PartitionResult]:
    results: dict[SharePartitionKey, PartitionResult] = {}
    entries: list[Entry] = []
    for key in keys:
        try:
            entries.append(await manager.entry(key))
        except PartitionError as exc:
            results[key] = PartitionResult(exc.code, exc.message)
    if not entries or p.max_records <= 0 or p.max_bytes <= 0:
        return results  # Kafka processShareFetch: nothing asked for
    committed = manager.group_settings(p.group_id).isolation_level == READ_COMMITTED
    await _wait_for_data(manager, entries, p, committed)
    start = rotation % len(entries)
    records_left, bytes_left, first = p.max_records, p.max_bytes, True
    for entry in entries[start:] + entries[:start]:
        if records_left <= 0:
            break
        async with entry.lock:
            result = _acquire_one(manager, entry, p, records_left, bytes_left, first, committed)
        results[entry.sp.key] = result
        taken = sum(a.last_offset - a.first_offset + 1 for a in result.acquired)
        if taken:
            records_left -= taken
            bytes_left = max(0, bytes_left - len(result.records))
            first = False
    return results


def _acquire_one(
    manager: SharePartitionManager,
    entry: Entry,
    p: ShareFetchParams,
    records_left: int,
    bytes_left: int,
    min_one: bool,
    committed: bool,
) -> PartitionResult:
    sp = entry.sp
    if sp.state is not PartitionState.ACTIVE:  # dropped while this fetch waited
        return PartitionResult(ErrorCode.NOT_LEADER_OR_FOLLOWER, "the share-partition moved")
    part = manager.logs.log(sp.topic, sp.key.partition)
    if part is None:
        return PartitionResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{sp.topic}-{sp.key.partition} has no log")
    if not sp.can_acquire():
        return PartitionResult()
    offset = sp.next_fetch_offset()
    if offset < part.log_start_offset:
        sp.update_log_start_offset(part.log_start_offset)
        offset = sp.next_fetch_offset()
    if bytes_left <= 0 and not min_one:
        return PartitionResult()
    records = part.read(offset, bytes_left, min_one, committed)
    if not records:
        return PartitionResult()
    fetched = fetched_batches(records)
    skip = aborted_batches(records, fetched, part.aborted_transactions(offset, records)) if committed else []
    settings = manager.group_settings(p.group_id)
    deadline = manager.clock.time_ms() + settings.record_lock_duration_ms
    request = AcquireRequest(
        p.member_id, offset, records_left, p.batch_size, p.record_limit, deadline, settings.delivery_count_limit
    )
    acquired = acquire(sp, request, fetched, skip)
    ranges = [(a.first_offset, a.last_offset) for a in acquired]
    manager.schedule_locks(sp.key, ranges, deadline)
    return PartitionResult(records=slice_to(records, fetched, ranges), acquired=acquired)


async def _wait_for_data(
    manager: SharePartitionManager, entries: Sequence[Entry], p: ShareFetchParams, committed: bool
) -> None:
    if p.max_wait_ms <= 0:
        return
    with trio.move_on_after(p.max_wait_ms / 1000):
        while _acquirable_bytes(manager, entries, p.min_bytes, committed) < p.min_bytes:
            event = trio.Event()
            parts = [part for e in entries if (part := manager.logs.log(e.sp.topic, e.sp.key.partition)) is not None]
            for part in parts:
                part.add_waiter(event)
            manager.add_waiter(event)
            try:
                await event.wait()
            finally:
                for part in parts:
                    part.remove_waiter(event)
                manager.remove_waiter(event)


def _acquirable_bytes(manager: SharePartitionManager, entries: Sequence[Entry], wanted: int, committed: bool) -> int:
    """Bytes the fetch could acquire now, counted up to `wanted` (Kafka DelayedShareFetch's
    minBytes estimate); an error or a moved partition counts as enough: answer at once."""
    total = 0
    for entry in entries:
        sp = entry.sp
        part = manager.logs.log(sp.topic, sp.key.partition)
        if part is None or sp.state is not PartitionState.ACTIVE:
            return wanted
        if not sp.can_acquire():
            continue
        offset = sp.next_fetch_offset()
        if offset < part.log_start_offset:
            return wanted
        bound = part.last_stable_offset if committed else part.high_watermark
        if offset >= bound:
            continue
        if wanted <= 1:
            return wanted
        total += len(part.read(offset, wanted - total, True, committed))
        if total >= wanted:
            return total
    return total
