"""What a share fetch read from the log, as the share partition needs it: one `FetchedBatch` per
record batch (its offsets, whether it is a control batch, its producer), and which of them a
read_committed share group must skip because their transaction aborted.

Kafka's SharePartition acquires whole batches and reads only batch headers (never the records);
so does this. Aborted data is found as Kafka's fetchAbortedTransactionRecordBatches finds it: the
aborted transactions the log reports (producer id, first offset), activated in offset order; a
transactional batch of an active aborted producer is aborted; that producer's ABORT marker ends it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from storage.batch import InvalidBatch, decode_header, frame_bounds, read_marker


class FetchedBatch(NamedTuple):
    base_offset: int
    last_offset: int
    is_control: bool
    is_transactional: bool
    producer_id: int
    position: int  # where the batch starts in the fetched bytes
    size: int


def fetched_batches(records: bytes) -> list[FetchedBatch]:
    out = []
    for pos, _base, size in frame_bounds(records):
        h = decode_header(records, pos)
        out.append(
            FetchedBatch(h.base_offset, h.last_offset, h.is_control, h.is_transactional, h.producer_id, pos, size)
        )
    return out


def aborted_batches(
    records: bytes, batches: Sequence[FetchedBatch], aborted: Sequence[tuple[int, int]]
) -> list[FetchedBatch]:
    """The transactional data batches of aborted transactions (`aborted`: (producer id, first
    offset) as the log's transaction index lists them for the fetched range)."""
    pending = sorted(aborted, key=lambda t: t[1])
    active: set[int] = set()
    out = []
    i = 0
    for batch in batches:
        while i < len(pending) and pending[i][1] <= batch.last_offset:
            active.add(pending[i][0])
            i += 1
        if not batch.is_transactional or batch.producer_id not in active:
            continue
        if batch.is_control:
            try:
                marker = read_marker(memoryview(records)[batch.position : batch.position + batch.size])
            except InvalidBatch:
                marker = None
            if marker is not None and not marker.commit:
                active.discard(batch.producer_id)
            continue
        out.append(batch)
    return out


def slice_to(records: bytes, batches: Sequence[FetchedBatch], ranges: Sequence[tuple[int, int]]) -> bytes:
    """The fetched bytes trimmed to the batches that hold an acquired offset (Kafka's
    ShareFetchUtils.maybeSliceFetchRecords): a client never parses batches it may not use."""
    if not ranges:
        return b""
    keep = [b for b in batches if any(first <= b.last_offset and b.base_offset <= last for first, last in ranges)]
    if not keep:
        return b""
    start = keep[0].position
    end = keep[-1].position + keep[-1].size
    return records[start:end] if (start, end) != (0, len(records)) else records
