"""ListOffsets lookups on one partition (Kafka's UnifiedLog.fetchOffsetByTimestamp).

-2 earliest: the log start offset. -1 latest: the high watermark, or under read_committed the
last stable offset. -3 max timestamp (KIP-734): the first record carrying the largest
timestamp. t >= 0: the first record whose timestamp is >= t, via the time index, with that
record's timestamp; none -> offset -1, timestamp -1. The offset never passes the high watermark
(the last stable offset under read_committed: UnifiedLog.fetchOffsetByTimestamp's isolation).
"""

from __future__ import annotations

from coordinator.broker.partition import Partition
from protocol.errors import ErrorCode
from storage.batch import iter_records

LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
NOT_FOUND = (ErrorCode.NONE, -1, -1)


def list_offset(part: Partition, timestamp: int, committed: bool = False) -> tuple[int, int, int]:
    """(error, timestamp, offset) for one ListOffsets query (`committed`: read_committed)."""
    bound = part.last_stable_offset if committed else part.high_watermark
    if timestamp == EARLIEST:
        return ErrorCode.NONE, -1, part.log_start_offset
    if timestamp == LATEST:
        return ErrorCode.NONE, -1, bound
    if timestamp == MAX_TIMESTAMP:
        return _max_timestamp(part, bound)
    if timestamp < 0:
        return ErrorCode.INVALID_REQUEST, -1, -1
    offset = part.log.offset_for_timestamp(timestamp)
    if offset is None or offset >= bound:
        return NOT_FOUND
    for record in part.log.iter_records(offset):
        found_ts = record.timestamp if record.timestamp is not None else -1
        return ErrorCode.NONE, found_ts, offset
    return NOT_FOUND


def _max_timestamp(part: Partition, bound: int) -> tuple[int, int, int]:
    best_ts, best_batch, start = -1, None, part.log_start_offset
    for segment in part.log.segments:
        if segment.max_timestamp <= best_ts:
            continue  # a later segment must beat it strictly: the first record with the max wins
        for _, header, data in segment.iter_batches():
            if header.base_offset >= bound:
                break
            if header.max_timestamp > best_ts and header.last_offset >= start:
                best_ts, best_batch = header.max_timestamp, data
    if best_batch is None:
        return NOT_FOUND
    for record in iter_records(best_batch):
        if record.timestamp == best_ts and record.offset is not None and record.offset >= start:
            return ErrorCode.NONE, best_ts, record.offset
    return NOT_FOUND
