"""Fetch with long polling: read the asked partitions, or park until data arrives or time is up.

Kafka's ReplicaManager.fetchMessages/readFromLog + DelayedFetch for one replica: answer at once
when `min_bytes` are available, when a partition errs, or when `max_wait_ms` is 0; otherwise park
one trio.Event on every asked partition (an append's high-watermark move sets it) and read again.
Sizes: `max_bytes` bounds the response and `partition_max_bytes` each partition, in whole batches,
except that the first partition with data returns at least one batch however big (KIP-74), so a
consumer never stalls on a batch larger than its limits. read_committed (isolation level 1) reads
up to the last stable offset and lists the aborted transactions the returned batches overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from coordinator.broker.data_path import DataPath
from coordinator.broker.partition import Partition
from protocol.errors import ErrorCode


@dataclass(slots=True)
class FetchWant:
    topic: str
    partition: int
    offset: int
    max_bytes: int


@dataclass(slots=True)
class FetchResult:
    error: int = ErrorCode.NONE
    high_watermark: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    last_stable_offset: int = -1
    aborted: list[tuple[int, int]] | None = None  # (producer id, first offset); read_committed only


def read_once(
    data: DataPath, wants: list[FetchWant], max_bytes: int, committed: bool = False
) -> tuple[list[FetchResult], int, bool]:
    """One pass over the asked partitions: (results, bytes returned, whether any partition erred)."""
    results: list[FetchResult] = []
    remaining, min_one, total, errored = max_bytes, True, 0, False
    for want in wants:
        part = data.partition(want.topic, want.partition)
        if part is None:
            results.append(FetchResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            errored = True
            continue
        error = part.offset_error(want.offset)
        if error:
            results.append(
                FetchResult(
                    error, part.high_watermark, part.log_start_offset, last_stable_offset=part.last_stable_offset
                )
            )
            errored = True
            continue
        limit = min(want.max_bytes, remaining)
        records = part.read(want.offset, limit, min_one, committed) if (limit > 0 or min_one) else b""
        if records:
            min_one = False
        remaining = max(0, remaining - len(records))
        total += len(records)
        aborted = part.aborted_transactions(want.offset, records) if committed else None
        results.append(
            FetchResult(
                ErrorCode.NONE, part.high_watermark, part.log_start_offset, records, part.last_stable_offset, aborted
            )
        )
    return results, total, errored


async def fetch(
    data: DataPath, wants: list[FetchWant], *, max_wait_ms: int, min_bytes: int, max_bytes: int, committed: bool = False
) -> list[FetchResult]:
    results, total, errored = read_once(data, wants, max_bytes, committed)
    if total >= min_bytes or errored or max_wait_ms <= 0 or not wants:
        return results
    with trio.move_on_after(max_wait_ms / 1000):
        while True:
            await _wait_for_append(_partitions(data, wants), committed)
            results, total, errored = read_once(data, wants, max_bytes, committed)
            if total >= min_bytes or errored:
                return results
    return read_once(data, wants, max_bytes, committed)[0]


def _partitions(data: DataPath, wants: list[FetchWant]) -> list[Partition]:
    found = (data.partition(w.topic, w.partition) for w in wants)
    return [p for p in found if p is not None]


async def _wait_for_append(partitions: list[Partition], committed: bool) -> None:
    """Parks until any of the partitions' high watermark moves (read_committed: its last stable
    offset), or it is closed."""
    event = trio.Event()
    for part in partitions:
        part.add_waiter(event, committed=committed)
    try:
        await event.wait()
    finally:
        for part in partitions:
            part.remove_waiter(event)
