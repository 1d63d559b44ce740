"""Log compaction for cleanup.policy=compact (Kafka's LogCleaner.Cleaner).

A round: take the dirty section [first dirty, first uncleanable) (cleaner_policy); map each
key's latest offset over it in a fixed-size OffsetMap, stopping at the last batch that fits
(`end`); recopy every non-active segment below `end` in size-bounded groups, keeping each
key's latest record; swap each group in with Log.replace_segments (.cleaned -> .swap ->
.deleted); then write cleaner-offset-checkpoint = end.
Invariants: offsets are never renumbered; a batch is copied byte for byte, rebuilt with its
base offset, last offset, producer fields and codec, or dropped (kept header-only when it ends
its group or holds an active producer's state); keyless records are kept; batches of aborted
transactions (the segments' `.txnindex`) are dropped and never enter the map; transaction
markers go two rounds after the data they cover, once delete.retention.ms has passed
(cleaner_txn.py); an open transaction bounds the round (cleaner_policy).
The byte-level copying helpers (reading, chunked writing, rebuilding a batch) are in
cleaner_copy.py. FORMAT.md "Cleaner" lists every rule and simplification.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import trio

from .batch import decode_header, empty_batch, iter_records, rebuild_kept
from .batch.layout import COMPRESSION_MASK, CONTROL_BIT, DELETE_HORIZON_BIT, HEADER_SIZE, TRANSACTIONAL_BIT, Buffer
from .batch.record_walk import KeySpan, key_spans, records_region
from .cleaner_copy import ChunkWriter, encode_retained, segment_batches, with_horizon
from .cleaner_policy import (
    CLEANER_CHECKPOINT_FILE,
    Cleanable,
    CleanerConfig,
    CleanStats,
    cleanable_info,
    group_segments_by_size,
    read_cleaner_checkpoint,
    write_cleaner_checkpoint,
)
from .cleaner_txn import RoundTransactions
from .log import Log, LogFailedError
from .offset_map import OffsetMap, key_digest
from .segment import LogSegment
from .swap import CLEANED

__all__ = [
    "Cleaner",
    "CleaningRound",
    "CleanerConfig",
    "Cleanable",
    "CleanStats",
    "CLEANER_CHECKPOINT_FILE",
    "read_cleaner_checkpoint",
    "write_cleaner_checkpoint",
]

log = logging.getLogger(__name__)


class Cleaner:
    """Decides whether a log needs cleaning and runs rounds. Stateless apart from its
    config: the first dirty offset lives in each partition's checkpoint file."""

    def __init__(self, config: CleanerConfig | None = None) -> None:
        self.config = config or CleanerConfig()

    def cleanable(self, log_: Log) -> Cleanable:
        return cleanable_info(log_, log_.clock.time_ms(), read_cleaner_checkpoint(log_.directory))

    def needs_cleaning(self, log_: Log) -> bool:
        """ratio > min.cleanable.dirty.ratio, or max.compaction.lag.ms passed with dirty bytes."""
        info = self.cleanable(log_)
        if info.dirty_bytes == 0:
            return False
        return info.ratio > log_.config.min_cleanable_dirty_ratio or info.compaction_lag_exceeded

    def start(self, log_: Log, *, force: bool = False) -> CleaningRound | None:
        """A round over the current dirty section, or None when there is nothing (or, unless
        `force`, not enough) to clean. `force` also runs a round with no dirty bytes, which
        still recopies the clean section (drops tombstones whose horizon passed)."""
        if log_.config.cleanup_policy != "compact":
            return None
        info = self.cleanable(log_)
        if not force and not self.needs_cleaning(log_):
            return None
        if len(log_.segments) < 2:
            return None
        return CleaningRound(log_, self.config, info, log_.clock.time_ms())

    def clean(self, log_: Log, *, force: bool = False) -> CleanStats | None:
        """Run one whole round now (blocking); returns its stats, None if nothing was done."""
        round_ = self.start(log_, force=force)
        if round_ is None:
            return None
        round_.run()
        return round_.stats

    async def clean_in_thread(self, log_: Log, *, force: bool = False) -> CleanStats | None:
        """One round for a trio program: the map and each group's recopy run in a worker
        thread (they only read non-active segments and write `.cleaned` files), the swaps and
        the checkpoint on the caller's thread, so appends and reads go on meanwhile."""
        round_ = self.start(log_, force=force)
        if round_ is None:
            return None
        await trio.to_thread.run_sync(round_.build_map)
        for group in round_.groups():
            new = await trio.to_thread.run_sync(round_.write_group, group)
            if new is not None:
                round_.swap_group(group, new)
        round_.finish()
        return round_.stats


class CleaningRound:
    """One cleaning of one log. Steps (callable one by one, so appends and reads may happen
    in between): build_map(), then clean_group(g) for g in groups(), then finish(); run()
    does them all. Works on non-active segments only; the log's append path is untouched."""

    def __init__(self, log_: Log, config: CleanerConfig, info: Cleanable, now_ms: int) -> None:
        self.log, self.config, self.info, self.now_ms = log_, config, info, now_ms
        self.start = info.first_dirty
        self.end = info.first_uncleanable
        self.map: OffsetMap | None = None
        self._bits = bytearray()  # bit (o - start) set: offset o is retained (dirty section)
        self._tomb_batches: set[int] = set()  # base offsets of dirty batches with tombstones
        self.txns = RoundTransactions(log_, now_ms)  # aborted data, markers, producer state
        self.stats = CleanStats(first_dirty=self.start)

    # -- pass 1: the offset map (Cleaner.buildOffsetMap) --------------------------------------
    def build_map(self) -> None:
        start, limit = self.start, self.info.first_uncleanable
        omap = OffsetMap(self.config.dedupe_buffer_size, self.config.load_factor)
        bits = bytearray((limit - start) // 8 + 1)
        tombs = self._tomb_batches
        put_records = omap.put_records
        end = limit
        for seg in self.log.non_active_segments():
            if seg.base_offset >= limit or end < limit:
                break
            if seg.next_offset <= start:
                continue
            for _, buf, off, (base, length, _, _, _, attrs, ld, _, _, pid, _, _, count) in segment_batches(seg):
                if base + ld < start:
                    continue
                if base >= limit:
                    break
                if attrs & CONTROL_BIT or (attrs & TRANSACTIONAL_BIT and self.txns.is_aborted(pid, base)):
                    continue
                if count > omap.room():  # full: clean up to the last batch that fit
                    end = base
                    break
                if attrs & COMPRESSION_MASK:
                    data, pos, stop = records_region(buf, off, length + 12, attrs)
                else:
                    data, pos, stop = buf, off + HEADER_SIZE, off + length + 12
                if put_records(data, pos, stop, count, base, start, bits):
                    tombs.add(base)
                omap.update_latest_offset(base + ld)
        for o in omap.offsets():
            if o >= 0:
                bits[(o - start) >> 3] |= 1 << ((o - start) & 7)
        self.map, self._bits, self.end = omap, bits, end
        self.stats.end_offset, self.stats.map_entries = end, omap.size
        self.stats.map_full = end < limit
        if end == start and limit > start:
            log.warning(
                "%s: the offset map (%d entries) cannot hold the first dirty batch at %d; raise dedupe_buffer_size",
                self.log.directory,
                omap.max_entries,
                start,
            )

    def groups(self) -> list[list[LogSegment]]:
        """Non-active segments below `end`, grouped (the clean part is recopied too)."""
        if self.map is None:
            self.build_map()
        segs = [s for s in self.log.non_active_segments() if s.base_offset < self.end]
        if self.end == self.start and self.info.dirty_bytes:  # the map took nothing: no round
            return []
        cfg = self.log.config
        return group_segments_by_size(segs, cfg.segment_bytes, cfg.segment_index_bytes)

    def run(self) -> None:
        for group in self.groups():
            self.clean_group(group)
        self.finish()

    def finish(self) -> None:
        """Record the first dirty offset of the next round (Kafka writes it after the swap)."""
        if self.map is not None and self.end > self.start:
            write_cleaner_checkpoint(self.log.directory, self.end)

    # -- pass 2: recopy one group (Cleaner.cleanSegments / cleanInto) ---------------------------
    def clean_group(self, group: list[LogSegment]) -> None:
        """Write the group's cleaned segment and swap it in."""
        new = self.write_group(group)
        if new is not None:
            self.swap_group(group, new)

    def write_group(self, group: list[LogSegment]) -> LogSegment | None:
        """Recopy `group` into a `.cleaned` segment (reads and writes only files no one else
        writes, so it may run in a worker thread). None if there is nothing to swap."""
        if not self._still_live(group):
            self.txns.trusted = False  # its batches go unread: no marker may go after them
            return None
        new = self.log.new_cleaned_segment(group[0].base_offset)
        try:
            writer = ChunkWriter(new, self.config.write_chunk_bytes)
            for i, seg in enumerate(group):
                self._recopy(seg, writer, ends_group=i == len(group) - 1)
            writer.flush()
            aborted = self.txns.index_entries([txn for seg in group for txn in seg.txn_index.entries], self.end)
            if aborted:
                new.txn_index.rewrite(aborted)
        except BaseException:
            new.delete()
            raise
        if new.size == 0:  # only possible if every old segment was empty
            new.delete()
            return None
        return new

    def swap_group(self, group: list[LogSegment], new: LogSegment) -> None:
        """Log.replace_segments (crash-safe; an I/O error fails the log). On the log's thread."""
        if not self._still_live(group):
            new.delete()
            return
        try:
            self.log.replace_segments(group, [new])
        except (ValueError, LogFailedError, OSError):
            if not self.log.failed and new.suffix == CLEANED:
                # Refused or failed before any rename (closed log, precondition, a full disk
                # while fsyncing the output): the log is intact and the output is ours.
                new.delete()
            raise  # (a failed rename failed the log: its reopen decides what stays)
        st = self.stats
        st.segments_in += len(group)
        st.segments_out += 1
        st.bytes_in += sum(s.size for s in group)
        st.bytes_out += new.size
        st.groups.append((group[0].base_offset, len(group)))

    def _still_live(self, group: list[LogSegment]) -> bool:
        live = self.log.segments[:-1]
        if all(any(s is g for s in live) for g in group):
            return True
        log.info("%s: segments changed under the cleaner; skipping a group", self.log.directory)
        return False

    def _recopy(self, seg: LogSegment, writer: ChunkWriter, *, ends_group: bool) -> None:
        start, end, bits, tombs = self.start, self.end, self._bits, self._tomb_batches
        st, txns = self.stats, self.txns
        seg_next = seg.next_offset
        for _, buf, off, (base, length, _, _, _, attrs, ld, bts, mts, pid, _, _, count) in segment_batches(seg):
            last, size = base + ld, length + 12
            ends_group_here = ends_group and last + 1 >= seg_next
            if base >= end:  # beyond this round: as is
                writer.add(memoryview(buf)[off : off + size], base, last, mts)
                st.batches_copied += 1
                continue
            if attrs & CONTROL_BIT:
                self._emit_control(writer, buf, off, size, ends_group_here)
                continue
            txns.on_data_batch(pid, last, bool(attrs & TRANSACTIONAL_BIT), count)
            if attrs & TRANSACTIONAL_BIT and txns.is_aborted(pid, base):  # every record goes
                self._emit(
                    writer, buf, off, size, [], [], None, envelope=self._needs_envelope(pid, last, ends_group_here)
                )
                continue
            horizon = bts if attrs & DELETE_HORIZON_BIT else None
            spans: list[KeySpan] = []
            if base >= start:  # wholly dirty: the bitmap says which offsets are latest
                lo, hi = base - start, last - start
                mask = (int.from_bytes(bits[lo >> 3 : (hi >> 3) + 1], "little") >> (lo & 7)) & ((1 << (ld + 1)) - 1)
                n = mask.bit_count()
                if n == count and count and (base not in tombs or (horizon is not None and self.now_ms < horizon)):
                    writer.add(memoryview(buf)[off : off + size], base, last, mts)
                    st.batches_copied += 1
                    continue
                if not n and not self._needs_envelope(pid, last, ends_group_here):
                    st.batches_dropped += 1  # nothing kept, no envelope: _emit would write nothing
                    continue
                if n:
                    data, pos, stop = records_region(buf, off, size, attrs)
                    spans = key_spans(data, pos, stop, count)
                keep = [bool((mask >> s[0]) & 1) for s in spans]
            else:  # clean section (or straddling the checkpoint): ask the map per key
                data, pos, stop = records_region(buf, off, size, attrs)
                spans = key_spans(data, pos, stop, count)
                keep = [kl < 0 or self._latest(base + d, data[kp : kp + kl]) for d, kp, kl, _, _ in spans]
            self._emit(
                writer, buf, off, size, spans, keep, horizon, envelope=self._needs_envelope(pid, last, ends_group_here)
            )

    def _latest(self, offset: int, key: Buffer) -> bool:
        """Cleaner.shouldRetainRecord for a keyed record below `end` (keyless records are
        kept): kept iff no later offset of its key is in the map."""
        assert self.map is not None
        mapped = self.map.get(key_digest(key))
        return mapped < 0 or mapped <= offset

    def _needs_envelope(self, pid: int, last: int, ends_group: bool) -> bool:
        """An emptied batch is still written, header only, when it ends its group or holds an
        active producer's last sequence (producer state survives: RETAIN_EMPTY)."""
        return ends_group or (pid >= 0 and self.txns.holds_producer_state(pid, last))

    def _emit_control(self, writer: ChunkWriter, buf: Buffer, off: int, size: int, ends_group: bool) -> None:
        """A transaction marker as is, rewritten with its delete horizon, header only, or not at all."""
        h = decode_header(buf, off)
        raw = memoryview(buf)[off : off + size]
        horizon = h.base_timestamp if h.attributes & DELETE_HORIZON_BIT else None
        fate = self.txns.on_control_batch(raw, h.producer_id, h.producer_epoch, h.last_offset, h.records_count, horizon)
        st = self.stats
        if fate.keep_records and fate.stamp_horizon:
            writer.add(with_horizon(raw, self.txns.horizon()), h.base_offset, h.last_offset, h.max_timestamp)
            st.batches_rebuilt += 1
        elif fate.keep_records:
            writer.add(raw, h.base_offset, h.last_offset, h.max_timestamp)
            st.batches_copied += 1
        elif fate.retain_empty or ends_group:
            # RETAIN_EMPTY keeps the producer's fields; a header kept only because it ends its
            # group keeps just its offsets (no producer, not a control batch: a consumer never
            # meets an empty control batch that Kafka would have deleted).
            keep = fate.retain_empty
            empty = empty_batch(
                h.base_offset,
                h.last_offset_delta,
                h.partition_leader_epoch,
                h.attributes if keep else 0,
                h.max_timestamp,
                h.producer_id if keep else -1,
                h.producer_epoch if keep else -1,
                h.base_sequence if keep else -1,
            )
            writer.add(empty, h.base_offset, h.last_offset, h.max_timestamp)
            st.batches_emptied += 1
        else:
            st.batches_dropped += 1

    def _emit(
        self,
        writer: ChunkWriter,
        buf: Buffer,
        off: int,
        size: int,
        spans: Sequence[KeySpan],
        keep: list[bool],
        horizon: int | None,
        *,
        envelope: bool,
    ) -> None:
        """Write the batch as is, rebuilt with only the kept records, header-only, or not at
        all. Tombstones: dropped once the batch's delete horizon has passed; a kept tombstone
        in a batch without a horizon stamps now + delete.retention.ms (KIP-534)."""
        h = decode_header(buf, off)
        base, attrs, ld, mts = h.base_offset, h.attributes, h.last_offset_delta, h.max_timestamp
        drop_tombs = horizon is not None and self.now_ms >= horizon
        kept: list[int] = []
        has_tomb = False
        for i, span in enumerate(spans):
            if keep[i]:
                if span[3]:  # a tombstone
                    if drop_tombs:
                        continue
                    has_tomb = True
                kept.append(i)
        need_horizon = has_tomb and horizon is None
        st = self.stats
        if kept and len(kept) == h.records_count and not need_horizon:
            writer.add(memoryview(buf)[off : off + size], base, base + ld, mts)
            st.batches_copied += 1
            return
        if not kept:
            if envelope:
                writer.add(
                    empty_batch(
                        base, ld, h.partition_leader_epoch, attrs, mts, h.producer_id, h.producer_epoch, h.base_sequence
                    ),
                    base,
                    base + ld,
                    mts,
                )
                st.batches_emptied += 1
            else:
                st.batches_dropped += 1
            return
        if not need_horizon and not attrs & COMPRESSION_MASK:  # kept records copied verbatim
            data, max_ts = rebuild_kept(buf, off, size, spans, kept)
            writer.add(data, base, base + ld, max_ts)
            st.batches_rebuilt += 1
            return
        records = list(iter_records(buf[off : off + size]))
        if horizon is None and has_tomb:
            horizon = self.now_ms + self.log.config.delete_retention_ms
        data, rebuilt = encode_retained(h, [records[i] for i in kept], horizon)
        writer.add(data, base, base + ld, rebuilt.max_timestamp)
        st.batches_rebuilt += 1
