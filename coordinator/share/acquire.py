"""Acquiring fetched records for one member (Kafka SharePartition.acquire, 4.2).

Records are acquired in whole log batches (a fetch's MaxRecords is a soft limit that batch
boundaries may exceed), except in KIP-1206's record_limit mode, and split into AcquiredRecords
entries of about BatchSize records at batch boundaries. Records already in flight are acquired
again only when AVAILABLE; a batch acquired before is re-acquired whole when the fetch covers it
whole, else offset by offset. Kafka's delivery throttling (KIP-1206 era): records near the
delivery count limit are delivered in ever smaller groups, and a record on its last delivery
alone, so one poison record cannot archive a whole batch with it. The in-flight limit
(group.share.partition.max.record.locks) caps what a fetch may add past the end offset.
Control batches (transaction markers) are never delivered: their offsets are archived at once
(a client would only report them as gaps); for read_committed groups, data of aborted
transactions is archived likewise (Kafka maybeFilterAbortedTransactionalAcquiredRecords).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from coordinator.share.fetched import FetchedBatch
from coordinator.share.inflight import DeliveryCount, InFlightBatch, InFlightState, RecordState
from coordinator.share.partition import PartitionState, SharePartition

MIN_THROTTLE_DELIVERY_LIMIT = 2  # Kafka MINIMUM_THROTTLE_RECORDS_DELIVERY_LIMIT


class Acquired(NamedTuple):
    """One AcquiredRecords entry of a ShareFetch answer."""

    first_offset: int
    last_offset: int
    delivery_count: int


class AcquireRequest(NamedTuple):
    member_id: str
    fetch_offset: int
    max_records: int
    batch_size: int
    record_limit: bool  # KIP-1206 ShareAcquireMode 1
    lock_deadline_ms: int
    delivery_limit: int


def acquire(
    sp: SharePartition, req: AcquireRequest, fetched: Sequence[FetchedBatch], skip: Sequence[FetchedBatch] = ()
) -> list[Acquired]:
    """Acquire what `fetched` (the batches read from `req.fetch_offset`) holds for the member;
    `skip`: batches never to deliver besides control batches (aborted transactions)."""
    if sp.state is not PartitionState.ACTIVE or req.max_records <= 0 or not fetched:
        return []
    last, max_records = _limits(sp, req.fetch_offset, req.max_records, fetched[-1].last_offset)
    if max_records <= 0:
        return []
    first_base = fetched[0].base_offset
    _archive_stale(sp, req.fetch_offset, first_base, req.delivery_limit)
    base = first_base
    i = sp.floor(base)
    if i is None:
        base = max(base, sp.start_offset)
    elif sp.batches[i].last >= base:
        base = sp.batches[i].first
    overlapping = sp.between(base, last)
    result: list[Acquired] = []
    if not overlapping:
        result, _ = _acquire_new(sp, req, fetched, first_base, last, max_records)
    else:
        acquired = 0
        for batch in overlapping:
            if acquired >= max_records:
                break
            full = batch.first >= first_base and batch.last <= last
            remaining = max_records - acquired
            limited = req.record_limit and len(batch) > remaining
            throttle = _should_throttle(batch, first_base, last, req.delivery_limit)
            if throttle and acquired > 0:
                max_records = 0
                break
            if not full or batch.offsets is not None or limited or throttle:
                whole = batch.batch_state
                if whole is not None and whole.state is not RecordState.AVAILABLE:
                    continue
                n = _acquire_offsets(sp, req, batch, first_base, last, remaining, result)
                acquired += n
                if throttle and n > 0:
                    max_records = 0
                    break
                continue
            whole = batch.batch_state
            assert whole is not None
            if whole.state is not RecordState.AVAILABLE:
                continue
            whole.transition(RecordState.ACQUIRED, DeliveryCount.INCREASE, req.delivery_limit, req.member_id)
            whole.lock_deadline_ms = req.lock_deadline_ms
            result.append(Acquired(batch.first, batch.last, whole.delivery_count))
            acquired += len(batch)
        if acquired < max_records and overlapping[-1].last < last:
            more, _ = _acquire_new(sp, req, fetched, overlapping[-1].last + 1, last, max_records - acquired)
            result.extend(more)
    never = [b for b in fetched if b.is_control] + list(skip)
    return _archive_undeliverable(sp, result, never, req.delivery_limit) if never else result


def _limits(sp: SharePartition, fetch_offset: int, max_fetch: int, last: int) -> tuple[int, int]:
    """Kafka lastOffsetAndMaxRecordsToAcquire: the in-flight limit caps new records; a fetch
    inside the in-flight range may still re-acquire released ones up to the end offset."""
    max_records = min(max_fetch, sp.max_in_flight - sp.in_flight())
    if max_records <= 0 and fetch_offset <= sp.end_offset:
        max_records = min(max_fetch, sp.end_offset - fetch_offset + 1)
        last = min(last, sp.end_offset)
    return last, max_records


def _acquire_new(
    sp: SharePartition, req: AcquireRequest, fetched: Sequence[FetchedBatch], first: int, last: int, max_records: int
) -> tuple[list[Acquired], int]:
    """Kafka acquireNewBatchRecords + createBatches: records never in flight before."""
    if not sp.batches and sp.end_offset > first:
        first = sp.end_offset
    if first > last:
        return [], 0
    if max_records < last - first + 1:
        last = _last_of_batch_holding(fetched, first + max_records - 1)
    ranges: list[tuple[int, int]] = []
    if not req.record_limit and last - first + 1 > req.batch_size > 0:
        start = first
        for batch in fetched:
            if batch.base_offset > last:
                break
            if batch.base_offset - start >= req.batch_size:
                ranges.append((start, batch.base_offset - 1))
                start = batch.base_offset
        ranges.append((start, last))
    else:
        ranges.append((first, last))
    if req.record_limit and last - first + 1 > max_records:
        # One in-flight batch for the whole fetched range; only its first records are acquired.
        partly = InFlightBatch(first, last, InFlightState(RecordState.AVAILABLE, 0))
        offsets = partly.split()
        for offset in range(first, first + max_records):
            offsets[offset] = InFlightState(RecordState.ACQUIRED, 1, req.member_id, req.lock_deadline_ms)
        sp.insert(partly)
        sp.find_next_fetch_offset = True
        result = [Acquired(first, first + max_records - 1, 1)]
    else:
        for f, ln in ranges:
            sp.insert(InFlightBatch(f, ln, InFlightState(RecordState.ACQUIRED, 1, req.member_id, req.lock_deadline_ms)))
        result = [Acquired(f, ln, 1) for f, ln in ranges]
    if sp.batches[0].first == first:
        sp.start_offset = first
    sp.end_offset = max(sp.end_offset, last)
    return result, sum(a.last_offset - a.first_offset + 1 for a in result)


def _last_of_batch_holding(fetched: Sequence[FetchedBatch], offset: int) -> int:
    """Kafka lastOffsetFromBatchWithRequestOffset: whole batches, not a cut inside one."""
    for batch in fetched:
        if batch.base_offset <= offset <= batch.last_offset:
            return batch.last_offset
    return offset


def _acquire_offsets(
    sp: SharePartition,
    req: AcquireRequest,
    batch: InFlightBatch,
    first: int,
    last: int,
    remaining: int,
    result: list[Acquired],
) -> int:
    """Kafka acquireSubsetBatchRecords (contiguous offsets with equal delivery counts are
    reported as one AcquiredRecords entry; Kafka sends one entry per offset here)."""
    limit = req.delivery_limit
    throttle_limit = _throttle_limit(limit)
    acquired, throttled_max = 0, -1
    for offset, state in batch.split().items():
        if offset < first or offset < sp.start_offset:
            continue
        if offset > last:
            break
        if state.state is not RecordState.AVAILABLE:
            continue
        count = state.delivery_count
        if limit > 2 and count == limit - 1 and acquired > 0:
            break  # its last delivery: alone, in the next fetch
        if count >= throttle_limit and throttled_max < 0:
            throttled_max = max(1, len(batch) >> (count - throttle_limit + 1))
        state.transition(RecordState.ACQUIRED, DeliveryCount.INCREASE, limit, req.member_id)
        state.lock_deadline_ms = req.lock_deadline_ms
        _add(result, offset, state.delivery_count)
        acquired += 1
        if state.delivery_count == limit and limit > 2:
            break
        if (req.record_limit and acquired == remaining) or acquired == throttled_max:
            break
    return acquired


def _add(result: list[Acquired], offset: int, count: int) -> None:
    if result and result[-1].last_offset == offset - 1 and result[-1].delivery_count == count:
        result[-1] = Acquired(result[-1].first_offset, offset, count)
    else:
        result.append(Acquired(offset, offset, count))


def _throttle_limit(limit: int) -> int:
    return max(MIN_THROTTLE_DELIVERY_LIMIT, math.ceil(limit / 2))


def _should_throttle(batch: InFlightBatch, first: int, last: int, limit: int) -> bool:
    """Kafka shouldThrottleRecordsDelivery."""
    if batch.offsets is None:
        assert batch.batch_state is not None
        return batch.batch_state.delivery_count >= _throttle_limit(limit)
    counts = [
        s.delivery_count for o, s in batch.offsets.items() if first <= o <= last and s.state is RecordState.AVAILABLE
    ]
    return max(counts, default=0) >= _throttle_limit(limit)


def _archive_stale(sp: SharePartition, fetch_offset: int, base: int, limit: int) -> None:
    """Kafka maybeArchiveStaleBatches: available records between where the log was read and the
    first batch it returned were compacted away: archive them so the start offset can move."""
    if not sp.batches or fetch_offset >= base:
        return
    i = sp.floor(fetch_offset)
    low = sp.batches[i].first if i is not None and sp.batches[i].last >= fetch_offset else fetch_offset
    archived = _archive(sp, low, fetch_offset, base - 1, RecordState.AVAILABLE, limit)
    if archived:
        sp.find_next_fetch_offset = True


def _archive(sp: SharePartition, low: int, first: int, last: int, initial: RecordState, limit: int) -> bool:
    any_archived = False
    for batch in sp.between(low, last):
        whole = batch.batch_state
        if whole is not None and (batch.first < first or batch.last > last):
            if whole.state is not initial:
                continue
            batch.split()
        for f, ln, state in batch.states():
            if f < first or ln > last or state.state is not initial:
                continue
            state.transition(RecordState.ARCHIVED, DeliveryCount.NO_OP, limit)
            any_archived = True
    return any_archived


def _archive_undeliverable(
    sp: SharePartition, result: list[Acquired], never: Sequence[FetchedBatch], limit: int
) -> list[Acquired]:
    """Archive acquired offsets of control and aborted batches and cut them out of `result`."""
    kept = list(result)
    for batch in never:
        if not any(a.first_offset <= batch.last_offset and batch.base_offset <= a.last_offset for a in kept):
            continue
        low = sp.batches[i].first if (i := sp.floor(batch.base_offset)) is not None else batch.base_offset
        _archive(sp, low, batch.base_offset, batch.last_offset, RecordState.ACQUIRED, limit)
        cut: list[Acquired] = []
        for a in kept:
            if a.last_offset < batch.base_offset or a.first_offset > batch.last_offset:
                cut.append(a)
                continue
            if a.first_offset < batch.base_offset:
                cut.append(Acquired(a.first_offset, batch.base_offset - 1, a.delivery_count))
            if a.last_offset > batch.last_offset:
                cut.append(Acquired(batch.last_offset + 1, a.last_offset, a.delivery_count))
        kept = cut
    sp.advance_start_offset()
    return kept
