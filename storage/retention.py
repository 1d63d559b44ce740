"""Which old segments retention deletes, for cleanup.policy=delete (Kafka's
UnifiedLog.deleteOldSegments: deleteRetentionMsBreachedSegments, then
deleteRetentionSizeBreachedSegments).

Invariants: only the oldest segments go, in order, and never the active (last) segment; a
segment goes by time when its largest timestamp is older than retention.ms, by size while the
log without it is still at least retention.bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from .log_config import LogConfig
from .segment import LogSegment

__all__ = ["segments_past_retention"]


def segments_past_retention(segments: Sequence[LogSegment], config: LogConfig, now_ms: int) -> int:
    """How many of the oldest `segments` time and size retention delete now (-1 = unlimited)."""
    if config.cleanup_policy != "delete":
        return 0
    count, last = 0, len(segments) - 1
    if config.retention_ms >= 0:
        while count < last and now_ms - segments[count].max_timestamp > config.retention_ms:
            count += 1
    if config.retention_bytes >= 0:
        size = sum(s.size for s in segments[count:])
        while count < last and size - segments[count].size >= config.retention_bytes:
            size -= segments[count].size
            count += 1
    return count
