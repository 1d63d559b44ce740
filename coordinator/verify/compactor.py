"""A small reference compactor (one cleaning round), used by the generator while storage has no
cleaner. It follows storage.md §3 (Kafka's LogCleaner) and swaps through storage's own
crash-safe `Log.replace_segments`.

Rules: the offset map covers [log start, active segment base); a record is kept iff it has a
key, its offset is the map's latest for that key, and it is not a tombstone whose batch delete
horizon has passed; a kept batch with a tombstone and no horizon is stamped now+retention
(KIP-534); unchanged batches are copied byte for byte; rewritten batches keep their base and
last offsets (never renumbered). Each segment maps to one cleaned segment; a segment that would
be empty keeps its last batch as an empty batch (storage's swap needs every old base covered).
"""

from __future__ import annotations

from storage.batch import decode_header, encode_batch, iter_records
from storage.log import Log, LogConfig

__all__ = ["compact_partition"]


class _FixedClock:
    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def time_ms(self) -> int:
        return self.now_ms


def compact_partition(path: str, now_ms: int, delete_retention_ms: int,
                      config: LogConfig | None = None) -> int:
    """Clean every non-active segment of the partition at `path`; returns the end offset of
    the cleaned range (the active segment's base), or -1 if there was nothing to clean."""
    config = config or LogConfig(cleanup_policy="compact", durability="interval")
    log = Log.open(path, config, _FixedClock(now_ms))
    try:
        old = log.non_active_segments()
        if not old:
            return -1
        latest: dict[bytes, int] = {}
        for seg in old:
            for _, h, data in seg.iter_batches():
                if h.is_control:
                    continue
                for rec in iter_records(data):
                    if rec.key is not None:
                        latest[rec.key] = rec.offset  # type: ignore[assignment]
        new = []
        for seg in old:
            out = log.new_cleaned_segment(seg.base_offset)
            batches = list(seg.iter_batches())
            for i, (_, h, data) in enumerate(batches):
                recs = list(iter_records(data))
                horizon = h.delete_horizon_ms
                kept = [r for r in recs if r.key is not None and (r.offset or 0) >= latest[r.key]
                        and (r.value is not None or horizon is None or now_ms < horizon)]
                has_tomb = any(r.value is None for r in kept)
                if kept and len(kept) == len(recs) and (not has_tomb or horizon is not None):
                    raw = data
                elif kept or (i == len(batches) - 1 and out.size == 0):
                    if horizon is None and has_tomb:
                        horizon = now_ms + delete_retention_ms
                    raw = encode_batch(h.base_offset, kept, compression=h.compression,
                                       producer_id=h.producer_id, producer_epoch=h.producer_epoch,
                                       base_sequence=h.base_sequence,
                                       transactional=h.is_transactional,
                                       timestamp_type=h.timestamp_type,
                                       partition_leader_epoch=h.partition_leader_epoch,
                                       last_offset_delta=h.last_offset_delta,
                                       delete_horizon_ms=horizon if kept else None)
                else:
                    continue
                out.append(raw, decode_header(raw))
            new.append(out)
        end = log.active_segment.base_offset
        log.replace_segments(old, new)
        return end
    finally:
        log.close()
