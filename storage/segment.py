"""One log segment: `<20-digit base offset>.log` plus its `.index`, `.timeindex` and (once an
aborted transaction's marker lands in it) `.txnindex`.

Owns appends of whole batches, reads by offset (index floor, then a forward scan of batch
headers, as Kafka's LogSegment.read / FileRecords.searchForOffsetWithSize), timestamp lookup,
and the roll decision (LogSegment.shouldRoll). Invariants: the `.log` is a sequence of whole
batches with increasing offsets >= base_offset (the tail may be torn only after a crash, until
recovery truncates it); index entries point at batch starts. An optional file suffix
(`.cleaned`, `.swap`, `.deleted`) marks a segment that is part of a cleaner swap (FORMAT.md).
With `preallocate_bytes`, the active `.log` is extended ahead of its batches (zeros past `size`)
so that an fdatasync after an append need not commit a new file size; the zeros are cut off
(`trim`) before the segment is rolled or closed cleanly, and by recovery after a crash.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from . import fsutil
from .batch import HEADER_SIZE, LOG_OVERHEAD, BatchHeader, batch_size, decode_header, iter_records
from .batch.scan import SCAN_CHUNK, Frames, find_batch, whole_batches
from .index import OffsetIndex, TimeIndex
from .txn_index import TransactionIndex

__all__ = ["LogSegment", "segment_file_name", "SCAN_CHUNK"]


def segment_file_name(base_offset: int, ext: str, suffix: str = "") -> str:
    """`00000000000000000042.log` (+ suffix): LogFileUtils.filenamePrefixFromOffset."""
    return f"{base_offset:020d}{ext}{suffix}"


class LogSegment:
    def __init__(
        self,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int,
        segment_index_bytes: int,
        suffix: str = "",
        active: bool = False,
        created_ms: int = 0,
        preallocate_bytes: int = 0,
    ) -> None:
        self.directory = directory
        self.created_ms = created_ms  # Log passes its clock's time (Kafka: LogSegment.created)
        self.base_offset = base_offset
        self.suffix = suffix
        self.index_interval_bytes = index_interval_bytes
        self.log_path = os.path.join(directory, segment_file_name(base_offset, ".log", suffix))
        # Not O_APPEND: the file may extend past `size` (preallocated); writes go at `size`,
        # where the descriptor's position is kept (reads use pread).
        self._fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT, 0o644)
        self.size = os.lseek(self._fd, 0, os.SEEK_END)
        self._file_size = self.size  # >= size: the zeros past `size` are preallocated
        # Extend the file this many bytes at a time while active (0: never); the owner (Log)
        # sets it. Kafka's log.preallocate reserves a whole segment; this reserves a chunk.
        self.preallocate_bytes = preallocate_bytes
        self.offset_index = OffsetIndex(
            os.path.join(directory, segment_file_name(base_offset, ".index", suffix)), base_offset, segment_index_bytes
        )
        self.time_index = TimeIndex(
            os.path.join(directory, segment_file_name(base_offset, ".timeindex", suffix)),
            base_offset,
            segment_index_bytes,
        )
        self.txn_index = TransactionIndex(
            os.path.join(directory, segment_file_name(base_offset, ".txnindex", suffix)), base_offset
        )
        self.bytes_since_last_index_entry = 0
        self._next_offset: int | None = None
        self._max_timestamp: int | None = None  # max batch timestamp so far
        self._offset_of_max_timestamp = base_offset
        self._first_batch_timestamp: int | None = None
        self.active = False
        if active:
            self.make_active()

    # -- facts --------------------------------------------------------------------------------
    @property
    def fd(self) -> int:
        return self._fd

    @property
    def next_offset(self) -> int:
        """Offset after the last batch (base_offset when empty): LogSegment.readNextOffset."""
        if self._next_offset is None:
            _, pos = self.offset_index.lookup(2**62)
            nxt = self.base_offset
            for _, h in self.iter_headers(pos):
                nxt = h.next_offset
            self._next_offset = nxt
        return self._next_offset

    @property
    def max_timestamp(self) -> int:
        """Largest batch max timestamp in the segment, -1 if empty."""
        if self._max_timestamp is None:
            best, best_off = self.time_index.last_timestamp(), self.base_offset
            if best >= 0:
                best_off = self.time_index.lookup(best)[1]
            _, pos = self.offset_index.lookup(2**62)
            # Index entries may lag the log; finish with the batches after the last entry.
            for _, h in self.iter_headers(pos):
                if h.max_timestamp > best:
                    best, best_off = h.max_timestamp, h.last_offset
            self._max_timestamp, self._offset_of_max_timestamp = best, best_off
        return self._max_timestamp

    @property
    def first_batch_timestamp(self) -> int | None:
        """Max timestamp of the first batch: the base for segment.ms (rollingBasedTimestamp)."""
        if self._first_batch_timestamp is None and self.size >= HEADER_SIZE:
            self._first_batch_timestamp = decode_header(os.pread(self._fd, HEADER_SIZE, 0)).max_timestamp
        return self._first_batch_timestamp

    def __repr__(self) -> str:
        return f"LogSegment({self.log_path!r}, size={self.size})"

    # -- writes -------------------------------------------------------------------------------
    def make_active(self) -> None:
        self.active = True

    def should_roll(
        self,
        incoming_size: int,
        incoming_last_offset: int,
        incoming_max_timestamp: int,
        now_ms: int,
        segment_bytes: int,
        segment_ms: int,
    ) -> bool:
        """LogSegment.shouldRoll (no jitter). Age is measured like timeWaitedForRoll: the
        incoming batch's max timestamp minus the first batch's, or, when the segment has no
        timestamped batch, wall time since the segment was created/loaded."""
        if self.size == 0:
            return False
        if self.size > segment_bytes - incoming_size:
            return True
        first_ts = self.first_batch_timestamp
        if first_ts is not None and first_ts >= 0:
            waited = incoming_max_timestamp - first_ts
        else:
            waited = now_ms - self.created_ms
        if waited > segment_ms:
            return True
        if self.offset_index.is_full or self.time_index.is_full:
            return True
        return incoming_last_offset - self.base_offset > 2**31 - 1

    def append(self, batch: bytes, header: BatchHeader) -> None:
        """Append one whole batch, or nothing: on an OSError (a full disk, EIO) from the write
        or an index write, the `.log` is cut back to where the batch began (facts and indexes
        are only updated once everything was written) before the error is raised; the caller
        fails the log anyway."""
        position = self.size
        self._ensure_facts_loaded()
        if self.active and self.preallocate_bytes and position + len(batch) > self._file_size:
            self._preallocate(position + len(batch))
        try:
            fsutil.write_all(self._fd, batch)
            self._note_batch(position, header, len(batch))
        except OSError:
            os.lseek(self._fd, position, os.SEEK_SET)  # (the caller fails the log anyway)
            try:  # best effort: if this fails too, recovery cuts the torn batch on reopen
                fsutil.truncate(self._fd, position)
                self._file_size = position
            except OSError:
                pass
            raise
        self.size = position + len(batch)

    def _preallocate(self, end: int) -> None:
        """Extend the file to cover `end` and `preallocate_bytes` more. Where the filesystem
        cannot (no fallocate, or a full disk), appends just grow the file as without it."""
        length = max(self.preallocate_bytes, end - self._file_size)
        try:
            fsutil.preallocate(self._fd, self._file_size, length)
        except OSError:
            self.preallocate_bytes = 0
            try:  # a partial allocation may have moved the end: put it back
                fsutil.truncate(self._fd, self._file_size)
            except OSError:
                pass
            return
        self._file_size += length

    def trim(self) -> None:
        """Cut the preallocated zeros off the `.log` (before an fsync that makes the segment
        final: a roll or a clean close). Raises OSError if the truncate fails."""
        if self._file_size > self.size:
            fsutil.truncate(self._fd, self.size)
            self._file_size = self.size

    def _ensure_facts_loaded(self) -> None:
        if self._next_offset is None or self._max_timestamp is None:
            self.next_offset, self.max_timestamp  # noqa: B018 - load lazily before they change

    def _note_batch(self, position: int, header: BatchHeader, size: int) -> None:
        """Update in-memory facts and indexes for a batch appended at `position`; an OSError
        from an index write leaves both as they were."""
        max_ts, offset_of_max = self._max_timestamp, self._offset_of_max_timestamp
        last_offset = header.last_offset
        if max_ts is None or header.max_timestamp > max_ts:
            max_ts, offset_of_max = header.max_timestamp, last_offset
        since = self.bytes_since_last_index_entry
        # LogSegment.append: index only once more than index.interval.bytes have passed, so
        # the first batch of a segment is never indexed.
        if since > self.index_interval_bytes:
            entries = len(self.offset_index.keys)
            self.offset_index.append(last_offset, position)
            try:
                self.time_index.maybe_append(max_ts, offset_of_max)
            except OSError:
                self.offset_index.truncate_entries(entries)
                raise
            since = 0
        if self._first_batch_timestamp is None:
            self._first_batch_timestamp = header.max_timestamp
        self._max_timestamp, self._offset_of_max_timestamp = max_ts, offset_of_max
        self._next_offset = last_offset + 1
        self.bytes_since_last_index_entry = since + size

    def reset_for_rebuild(self) -> None:
        """Forget indexes and facts before recovery re-notes every batch."""
        self.offset_index.reset()
        self.time_index.reset()
        self.bytes_since_last_index_entry = 0
        self._next_offset = self.base_offset
        self._max_timestamp = -1
        self._offset_of_max_timestamp = self.base_offset
        self._first_batch_timestamp = None

    def set_rebuilt_facts(
        self,
        *,
        next_offset: int,
        max_timestamp: int,
        offset_of_max_timestamp: int,
        first_batch_timestamp: int | None,
        bytes_since_last_index_entry: int,
    ) -> None:
        """Install what a recovery scan learned (see recovery.scan_segment)."""
        self._next_offset = next_offset
        self._max_timestamp = max_timestamp
        self._offset_of_max_timestamp = offset_of_max_timestamp
        self._first_batch_timestamp = first_batch_timestamp
        self.bytes_since_last_index_entry = bytes_since_last_index_entry

    def truncate_to_size(self, size: int) -> None:
        """Cut the `.log` at a batch boundary. The indexes and facts must already describe
        only the kept batches, as they do right after `recovery.scan_segment` stopped there."""
        fsutil.truncate(self._fd, size)
        os.lseek(self._fd, size, os.SEEK_SET)
        self.size = self._file_size = size

    def become_inactive(self) -> None:
        """On roll: final time-index entry (onBecomeInactiveSegment), trim indexes, fsync so
        that a torn batch can only ever be in the last segment (recovery relies on it)."""
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self._offset_of_max_timestamp, best_effort=True)
        self.offset_index.trim()
        self.time_index.trim()
        self.trim()
        self.active = False
        self.flush()

    def flush(self) -> None:
        fsutil.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    # -- reads --------------------------------------------------------------------------------
    def iter_headers(
        self, start: int = 0, end: int | None = None, *, chunk: int = SCAN_CHUNK
    ) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each whole batch from `start`; stops at a torn tail."""
        end = self.size if end is None else min(end, self.size)
        for pos, _, _, fields in Frames(self._fd, start, end, chunk=chunk):
            yield pos, BatchHeader._make(fields)

    def iter_batches(
        self, start: int = 0, end: int | None = None, *, chunk: int = SCAN_CHUNK
    ) -> Iterator[tuple[int, BatchHeader, bytes]]:
        """(position, header, batch bytes) of each whole batch in [start, end). Reads `chunk`
        bytes at a time. Stops silently where fewer than a whole batch remains."""
        end = self.size if end is None else min(end, self.size)
        for pos, buf, off, fields in Frames(self._fd, start, end, chunk=chunk):
            yield pos, BatchHeader._make(fields), bytes(buf[off : off + fields[1] + LOG_OVERHEAD])

    def find_position(self, offset: int) -> int | None:
        """Position of the first batch with lastOffset >= offset, or None if past the end."""
        _, pos = self.offset_index.lookup(offset)
        # The floor entry is usually within one index interval: read about that much at a time.
        return find_batch(self._fd, pos, self.size, offset, 2 * self.index_interval_bytes + 2 * HEADER_SIZE)

    def read(self, position: int, max_bytes: int) -> bytes:
        """Whole batches from `position`, up to `max_bytes`, but always at least one."""
        buf = os.pread(self._fd, max(min(max_bytes, self.size - position), LOG_OVERHEAD), position)
        end = whole_batches(buf)[0]
        if end:
            return buf if end == len(buf) else buf[:end]
        if len(buf) < LOG_OVERHEAD:
            return b""
        return os.pread(self._fd, batch_size(buf), position)  # one batch bigger than max_bytes

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int) -> int | None:
        """First record offset >= start_offset whose timestamp >= `timestamp` (Kafka's
        LogSegment.findOffsetByTimestamp), or None."""
        _, ts_offset = self.time_index.lookup(timestamp)
        _, pos = self.offset_index.lookup(max(ts_offset, start_offset))
        for _, h, data in self.iter_batches(pos):
            if h.max_timestamp >= timestamp and h.last_offset >= start_offset:
                for rec in iter_records(data):
                    if (
                        rec.offset is not None
                        and rec.timestamp is not None
                        and rec.timestamp >= timestamp
                        and rec.offset >= start_offset
                    ):
                        return rec.offset
        return None

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close cleanly: the preallocated zeros are cut off (not fsynced here: a clean close of
        a Log trims and fsyncs first)."""
        if self._fd >= 0:
            self.trim()
            if self.active and self.max_timestamp >= 0:
                self.time_index.maybe_append(self.max_timestamp, self._offset_of_max_timestamp, best_effort=True)
            self.offset_index.close()
            self.time_index.close()
            self.txn_index.close()
            os.close(self._fd)
            self._fd = -1

    def close_unclean(self) -> None:
        """Close file descriptors without trimming anything (after a failure)."""
        if self._fd >= 0:
            self.offset_index.close_untrimmed()
            self.time_index.close_untrimmed()
            self.txn_index.close()
            os.close(self._fd)
            self._fd = -1

    def paths(self) -> list[str]:
        return [self.log_path, self.offset_index.path, self.time_index.path, self.txn_index.path]

    def change_suffix(self, new_suffix: str) -> None:
        """Rename all three files from the current suffix to `new_suffix` (fds stay valid)."""
        for ext, obj in ((".index", self.offset_index), (".timeindex", self.time_index), (".txnindex", self.txn_index)):
            obj.rename(os.path.join(self.directory, segment_file_name(self.base_offset, ext, new_suffix)))
        new_log = os.path.join(self.directory, segment_file_name(self.base_offset, ".log", new_suffix))
        os.rename(self.log_path, new_log)
        self.log_path = new_log
        self.suffix = new_suffix

    def delete(self) -> None:
        self.close_unclean()
        for path in self.paths():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
