"""A partition's log: an ordered list of segments, the last one active (Kafka's UnifiedLog +
LocalLog, single writer). Owns offset assignment, appends, reads by offset/timestamp, roll,
retention, durability (`flush`/`checkpoint`, and `wait_durable` through its GroupCommitter) and
the cleaner's swap hook `replace_segments`. Invariants: offsets only grow; `log_end_offset` is
the next offset to assign; after any failed write or fsync the Log refuses further writes
(LogFailedError) until it is reopened, because the file tail is then unknown and recovery must
decide it. Producer state, snapshots and aborted-transaction indexes follow every append
(`txns`, log_txn.py). Everything runs on the caller's (trio) thread except the fsyncs of
`wait_durable` and `checkpoint`. Durability lives in log_durability.py, retention and the swap
in log_segment_removal.py (mixins). File grammar and recovery rules: FORMAT.md.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any

from . import fsutil
from .batch import (
    BatchHeader,
    InvalidBatch,
    Record,
    assign_base_offset,
    encode_batch_and_header,
    validate_batch,
    verify_crc,
)
from .batch import iter_records as _batch_records
from .batch.records import encode_kv_batch
from .durability import GroupCommitter
from .log_config import Clock, LogConfig, LogFailedError, OffsetOutOfRangeError
from .log_durability import LogDurability
from .log_segment_removal import LogSegmentRemoval
from .log_start import read_log_start
from .log_txn import LogTransactions
from .producer_state import ProducerStateManager
from .recovery import CLEAN_SHUTDOWN_FILE, CorruptLogError, LoadResult, RecoveryPoint, load_segments
from .segment import LogSegment
from .txn_index import AbortedTxn

__all__ = [
    "Log",
    "LogConfig",
    "Clock",
    "LogFailedError",
    "OffsetOutOfRangeError",
    "InvalidBatch",
    "Record",
    "CorruptLogError",
]


class Log(LogDurability, LogSegmentRemoval):
    def __init__(
        self,
        directory: str,
        config: LogConfig,
        clock: Clock,
        segments: list[LogSegment],
        recovery_point: int,
        *,
        load_result: LoadResult | None = None,
        txns: LogTransactions | None = None,
        log_start_offset: int = 0,
    ) -> None:
        self.directory = directory
        self.config = config
        self.clock = clock
        self._segments = segments
        segments[-1].preallocate_bytes = config.preallocate_bytes
        self._bases = [s.base_offset for s in segments]
        self._next_offset = segments[-1].next_offset
        self._log_start = log_start_offset  # DeleteRecords' start; the first segment's base rules below it
        durable = min(recovery_point, self._next_offset)
        self._recovery_point = RecoveryPoint(directory, durable)
        self._failure: BaseException | None = None
        self._closed = False
        # The clean-shutdown marker's unlink is made durable before the first write.
        self._dir_unsynced = load_result is not None and load_result.marker_removed
        self._committer = GroupCommitter(
            config.durability,
            config.flush_interval_ms,
            durable_offset=durable,
            end_offset=lambda: self._next_offset,
            sync_fd=lambda: os.dup(self._segments[-1].fd),
            check_writable=self._check_writable,
            fail=self._fail,
        )
        self.load_result = load_result  # what opening/recovery found and did
        self.txns = txns or LogTransactions(directory, ProducerStateManager(self._next_offset))

    @classmethod
    def open(cls, path: str | os.PathLike[str], config: LogConfig | None = None, clock: Clock | None = None) -> Log:
        """Open or create a partition directory, recovering it if it was not closed cleanly.
        Raises CorruptLogError for damage that recovery must not repair silently."""
        config = config or LogConfig()
        if clock is None:
            raise ValueError("Log.open needs a clock (an object with time_ms())")
        directory = os.fspath(path)
        os.makedirs(directory, exist_ok=True)
        result = load_segments(
            directory, index_interval_bytes=config.index_interval_bytes, segment_index_bytes=config.segment_index_bytes
        )
        for seg in result.segments:
            seg.created_ms = clock.time_ms()
        try:
            txns = LogTransactions.load(
                directory, result.segments, clean=result.clean_shutdown, recovery_point=result.recovery_point
            )
        except BaseException:
            for seg in result.segments:
                seg.close_unclean()
            raise
        log = cls(
            directory,
            config,
            clock,
            result.segments,
            result.recovery_point,
            load_result=result,
            txns=txns,
            log_start_offset=read_log_start(directory),
        )
        log.load_log_start()
        return log

    # -- facts --------------------------------------------------------------------------------
    @property
    def log_start_offset(self) -> int:
        """The first offset served: DeleteRecords' (log_start.py), or the first segment's base."""
        start = self._segments[0].base_offset
        return start if self._log_start <= start else self._log_start

    @property
    def log_end_offset(self) -> int:
        """The next offset to assign."""
        return self._next_offset

    @property
    def producer_state(self) -> ProducerStateManager:
        return self.txns.state

    def first_unstable_offset(self) -> int | None:
        """First offset of an open (or not yet stable) transaction, None if there is none."""
        return self.txns.state.first_unstable_offset()

    def collect_aborted(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound) (read_committed fetch)."""
        return LogTransactions.collect_aborted(self._segments, fetch_offset, upper_bound)

    @property
    def durable_offset(self) -> int:
        """Every offset below this has been fsynced."""
        return self._committer.durable_offset

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def failed(self) -> bool:
        """True once a write, fsync or swap failed: the log refuses work until reopened."""
        return self._failure is not None

    @property
    def failure(self) -> BaseException | None:
        """The error that failed the log, if any."""
        return self._failure

    @property
    def segments(self) -> list[LogSegment]:
        """Snapshot of the segments, oldest first; the last one is active."""
        return list(self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    def non_active_segments(self) -> list[LogSegment]:
        return self._segments[:-1]

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    # -- appends ------------------------------------------------------------------------------
    def append_records(self, records: Sequence[Record], timestamp_ms: int | None = None, **batch_options: Any) -> int:
        """Encode `records` as one batch at the log end and append it; returns its base offset.
        Records without a timestamp get `timestamp_ms` or the clock's time."""
        if not records:
            raise ValueError("append_records needs at least one record")
        now = self.clock.time_ms()
        ts = now if timestamp_ms is None else timestamp_ms
        base = self._next_offset
        if any(r.offset is not None for r in records):
            records = [Record(None, r.timestamp, r.key, r.value, r.headers) for r in records]
        batch, header = encode_batch_and_header(base, records, default_timestamp=ts, **batch_options)
        self._append(batch, header, now)
        return base

    def append_kv(self, pairs: Sequence[tuple[bytes, bytes | None]], timestamp_ms: int | None = None) -> int:
        """`append_records` for (key, value) pairs (value None: a tombstone), every record
        stamped `timestamp_ms` or the clock's time: one batch, built without Record objects
        (a coordinator's append path). Returns its base offset."""
        now = self.clock.time_ms()
        base = self._next_offset
        batch, header = encode_kv_batch(base, pairs, now if timestamp_ms is None else timestamp_ms)
        self._append(batch, header, now)
        return base

    def append_batch(
        self, raw_batch: bytes | bytearray | memoryview, header: BatchHeader | None = None
    ) -> tuple[int, int]:
        """Validate a client's batch (size, magic, CRC), give it the next offsets and append it
        unchanged otherwise. `header`: the batch's decoded header, if the caller has it (checked
        all the same). Returns (base_offset, last_offset)."""
        header = validate_batch(raw_batch, header)
        limit = self.config.max_message_bytes
        if header.size > limit:
            raise InvalidBatch(f"batch of {header.size} bytes exceeds max.message.bytes {limit}")
        base = self._next_offset
        if header.base_offset != base:  # (_make: what _replace builds, at half the cost)
            raw_batch, header = assign_base_offset(raw_batch, base), BatchHeader._make((base, *header[1:]))
        self._append(bytes(raw_batch), header)  # (bytes of bytes is no copy)
        return base, header.last_offset

    def _append(self, batch: bytes, header: BatchHeader, now_ms: int | None = None) -> None:
        if self._failure is not None or self._closed or self._dir_unsynced:  # (the hot path)
            self._begin_write()
        try:
            seg = self._segments[-1]
            last_offset = header.last_offset
            if seg.should_roll(
                len(batch),
                last_offset,
                header.max_timestamp,
                self.clock.time_ms() if now_ms is None else now_ms,
                self.config.segment_bytes,
                self.config.segment_ms,
            ):
                seg = self.roll()
            seg.append(batch, header)
            self._next_offset = last_offset + 1
            if header.producer_id >= 0:
                self.txns.on_append(batch, header, seg)
        except OSError as exc:
            self._fail(exc)
            raise

    def roll(self) -> LogSegment:
        """Close the active segment for appends and start a new one at the log end offset."""
        self._begin_write()
        old = self._segments[-1]
        if old.size == 0:
            return old
        try:
            old.become_inactive()  # fsyncs: only the last segment may ever have a torn tail
            new = LogSegment(
                self.directory,
                self._next_offset,
                index_interval_bytes=self.config.index_interval_bytes,
                segment_index_bytes=self.config.segment_index_bytes,
                active=True,
                created_ms=self.clock.time_ms(),
                preallocate_bytes=self.config.preallocate_bytes,
            )
            fsutil.fsync_dir(self.directory)
        except OSError as exc:
            self._fail(exc)
            raise
        self._segments.append(new)
        self._bases.append(new.base_offset)
        self._committer.advance(new.base_offset)
        self._recovery_point.record(new.base_offset)
        self.txns.snapshot(new.base_offset, keep=3)
        return new

    # -- reads --------------------------------------------------------------------------------
    def _segment_index_for(self, offset: int) -> int:
        return max(0, bisect_right(self._bases, offset) - 1)

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Raw whole batches starting with the batch that holds `offset` (or the next batch
        when compaction removed it), up to `max_bytes` but always at least one batch.
        Returns b"" at or past the log end."""
        if offset < self.log_start_offset:
            raise OffsetOutOfRangeError(f"offset {offset} is below the log start offset {self.log_start_offset}")
        if offset >= self._next_offset:
            return b""
        for seg in self._segments[self._segment_index_for(offset) :]:
            pos = seg.find_position(offset)
            if pos is not None:
                return seg.read(pos, max_bytes)
        return b""

    def iter_batches(self, start_offset: int | None = None) -> Iterator[tuple[BatchHeader, bytes]]:
        """(header, raw bytes) of each batch whose last offset >= start_offset, CRC-checked.
        Robust to roll and segment replacement between items (it re-finds its place)."""
        offset = self.log_start_offset if start_offset is None else max(start_offset, self.log_start_offset)
        while offset < self._next_offset:
            found = self.locate(offset)
            if found is None:
                return
            seg, pos, offset = found
            start = offset
            for batch_pos, h, data in seg.iter_batches(pos):
                if not verify_crc(data):
                    raise CorruptLogError(seg.log_path, batch_pos, h.base_offset, "CRC-32C mismatch")
                yield h, data
                offset = h.next_offset
                if seg.fd < 0:  # replaced while we yielded: look it up again
                    break
            if offset == start:  # nothing readable where the index pointed: never spin
                raise CorruptLogError(seg.log_path, pos, offset, "no whole batch at this position")

    def locate(self, offset: int) -> tuple[LogSegment, int, int] | None:
        """Where reading from `offset` starts: (segment, file position of the batch that holds
        `offset` or of the next one, that offset or the next segment's base when compaction left
        nothing at or after it in its segment), or None when no batch is there. The walk of every
        reader that goes batch by batch (iter_batches, the loader's folds): after a yield, a
        reader calls it again with the offset it reached, since a roll or a replacement may have
        moved the files."""
        while True:
            i = self._segment_index_for(offset)
            seg = self._segments[i]
            pos = seg.find_position(offset)
            if pos is not None:
                return seg, pos, offset
            if i + 1 >= len(self._segments):
                return None
            offset = max(offset, self._segments[i + 1].base_offset)

    def iter_records(self, start_offset: int | None = None) -> Iterator[Record]:
        """Records with offset >= start_offset, in offset order."""
        start = self.log_start_offset if start_offset is None else start_offset
        for _, data in self.iter_batches(start):
            for rec in _batch_records(data):
                if rec.offset is not None and rec.offset >= start:
                    yield rec

    def offset_for_timestamp(self, timestamp: int) -> int | None:
        """First offset whose record timestamp >= `timestamp` (ListOffsets), or None."""
        start = self.log_start_offset
        for seg in self._segments:
            if seg.max_timestamp >= timestamp and seg.next_offset > start:
                found = seg.find_offset_by_timestamp(timestamp, max(seg.base_offset, start))
                if found is not None:
                    return found
        return None

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Flush, trim indexes, write the recovery point and the clean-shutdown marker. A failed
        log (or one that fails now) is closed without the marker, so its next open recovers."""
        if self._closed:
            return
        if self._failure is not None:
            return self.abandon()
        self._closed = True
        try:
            self._segments[-1].trim()  # the preallocated zeros go before the final fsync
            self._segments[-1].flush()
            for seg in self._segments:
                seg.close()
            self._recovery_point.record(self._next_offset)
            self.txns.snapshot(self._next_offset, keep=3)
            fsutil.atomic_write(os.path.join(self.directory, CLEAN_SHUTDOWN_FILE), b'{"version":0,"brokerEpoch":-1}\n')
        except OSError as exc:
            self._fail(exc)
            self.abandon()
            raise

    def abandon(self) -> None:
        """Drop every file descriptor without flushing or marking (a simulated crash)."""
        self._closed = True
        for seg in self._segments:
            seg.close_unclean()

    def _begin_write(self) -> None:
        """_check_writable, then make the clean-shutdown marker's removal durable first."""
        self._check_writable()
        if self._dir_unsynced:
            try:
                fsutil.fsync_dir(self.directory)
            except OSError as exc:
                self._fail(exc)
                raise
            self._dir_unsynced = False

    def _check_writable(self) -> None:
        if self._failure is not None:
            raise LogFailedError(
                f"log {self.directory} is unusable after an earlier I/O error ({self._failure}); reopen it to recover"
            ) from self._failure
        if self._closed:
            raise LogFailedError(f"log {self.directory} is closed")

    def _fail(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
