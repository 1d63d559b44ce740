"""Sparse `.index` (offset -> position) and `.timeindex` (timestamp -> offset) files.

Formats: FORMAT.md (Kafka's OffsetIndex / TimeIndex). Keys strictly increase. Files hold exactly
their entries (one pwrite each, never preallocated: Kafka preallocates to mmap; here entries are
mirrored in arrays and looked up by `bisect`). A zero-filled preallocated file (Kafka's active
segment, or a crash) is read only up to its real end, found by binary search for the first
all-zero entry after the first. No checksum: a bad index is rebuilt from the `.log`
(recovery.py), in memory, and written at once by `persist`.
"""

from __future__ import annotations

import os
import struct
from array import array
from bisect import bisect_right

from . import fsutil

__all__ = ["OffsetIndex", "TimeIndex"]


class _Index:
    """Entries of (key, value); subclasses fix the encoding and the meaning."""

    ENTRY: struct.Struct
    KEY_TYPE: str
    VALUE_TYPE = "i"

    def __init__(self, path: str, base_offset: int, max_bytes: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_bytes // self.ENTRY.size)
        self.keys: array[int] = array(self.KEY_TYPE)
        self.values: array[int] = array(self.VALUE_TYPE)
        self.existed = os.path.exists(path)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        size = os.fstat(self._fd).st_size
        self.file_size = size
        entry = self.ENTRY.size
        count = size // entry
        used = self._real_end(count)
        self.zero_tail_entries = count - used  # zero-filled entries at the end: untrimmed
        if used:
            # One C-level unpack instead of a Python loop per entry.
            flat = struct.unpack(">" + self.ENTRY.format.lstrip(">") * used, os.pread(self._fd, used * entry, 0))
            self.keys = array(self.KEY_TYPE, flat[0::2])
            self.values = array(self.VALUE_TYPE, flat[1::2])
        self._on_disk = used  # entries [0, _on_disk) are in the file at their place
        self._deferred = False  # a rebuild collects entries in memory until persist()

    def _real_end(self, count: int) -> int:
        """Entries in use out of the file's `count` whole entries."""
        if count == 0 or not self._zero_at(count - 1):
            return count
        if count == 1:
            return 1  # a lone (0, 0) entry is legitimate
        lo, hi = 1, count - 1  # entry hi is zero; find the first zero entry at index >= 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self._zero_at(mid):
                hi = mid
            else:
                lo = mid + 1
        return 0 if lo == 1 and self._zero_at(0) else lo

    def _zero_at(self, i: int) -> bool:
        size = self.ENTRY.size
        return not any(os.pread(self._fd, size, i * size))

    # -- state ------------------------------------------------------------------------------
    @property
    def fd(self) -> int:
        return self._fd

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def is_full(self) -> bool:
        return len(self.keys) >= self.max_entries

    @property
    def size_bytes(self) -> int:
        return len(self.keys) * self.ENTRY.size

    def _put(self, key: int, value: int) -> None:
        if self.is_full:
            raise IndexError(f"{self.path} is full ({self.max_entries} entries)")
        if not self._deferred:
            os.pwrite(self._fd, self.ENTRY.pack(key, value), len(self.keys) * self.ENTRY.size)
            self._on_disk = len(self.keys) + 1
        self.keys.append(key)
        self.values.append(value)

    def _floor(self, key: int) -> int:
        """Index of the largest entry with entry key <= key, or -1."""
        return bisect_right(self.keys, key) - 1

    # -- file lifecycle -----------------------------------------------------------------------
    def trim(self) -> None:
        """Cut the file to exactly the used entries (AbstractIndex.trimToValidSize)."""
        os.ftruncate(self._fd, self.size_bytes)

    def reset(self) -> None:
        """Forget every entry and collect new ones in memory until `persist` (a rebuild: a full
        disk then fails the rebuild as a whole, leaving nothing half-written that is trusted)."""
        self.keys = array(self.KEY_TYPE)
        self.values = array(self.VALUE_TYPE)
        self._deferred = True
        os.ftruncate(self._fd, 0)
        self._on_disk = 0

    def defer_writes(self) -> None:
        """Collect new entries in memory until `persist` (a rebuild that keeps a prefix)."""
        self._deferred = True

    def persist(self) -> None:
        """Write the entries not yet in the file (one pwrite) and cut the file to them."""
        entry = self.ENTRY.size
        count = len(self.keys)
        if count > self._on_disk:
            fmt = ">" + self.ENTRY.format.lstrip(">") * (count - self._on_disk)
            flat = [x for pair in zip(self.keys[self._on_disk :], self.values[self._on_disk :]) for x in pair]
            os.pwrite(self._fd, struct.pack(fmt, *flat), self._on_disk * entry)
        os.ftruncate(self._fd, count * entry)
        self._on_disk, self._deferred = count, False

    def truncate_entries(self, count: int) -> None:
        """Keep only the first `count` entries (also for entries not known to be sorted)."""
        del self.keys[count:]
        del self.values[count:]
        os.ftruncate(self._fd, count * self.ENTRY.size)
        self._on_disk = min(self._on_disk, count)

    def flush(self) -> None:
        fsutil.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            self.trim()
            os.close(self._fd)
            self._fd = -1

    def close_untrimmed(self) -> None:
        """Close without trimming (a crash in tests, or a failed log)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def rename(self, new_path: str) -> None:
        os.rename(self.path, new_path)
        self.path = new_path

    def delete(self) -> None:
        self.close_untrimmed()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class OffsetIndex(_Index):
    """`.index`: 4-byte offset relative to the segment base, 4-byte `.log` position of a
    batch start. Lookup gives the largest entry at or below an offset."""

    ENTRY = struct.Struct(">ii")
    KEY_TYPE = "i"

    def append(self, offset: int, position: int) -> None:
        rel = offset - self.base_offset
        if self.keys and (rel <= self.keys[-1] or position <= self.values[-1]):
            raise ValueError(
                f"index entry ({offset}, {position}) is not above the last one "
                f"({self.base_offset + self.keys[-1]}, {self.values[-1]}) in {self.path}"
            )
        self._put(rel, position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the floor entry for `offset`; (base, 0) if none."""
        i = self._floor(offset - self.base_offset)
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + self.keys[i], self.values[i]

    def last_entry(self) -> tuple[int, int]:
        if not self.keys:
            return self.base_offset, 0
        return self.base_offset + self.keys[-1], self.values[-1]

    def truncate_to(self, offset: int) -> None:
        """Drop entries whose offset is >= `offset`."""
        self.truncate_entries(bisect_right(self.keys, offset - self.base_offset - 1))

    def problem(self, log_size: int) -> str | None:
        """Why this index cannot be trusted for a `.log` of `log_size` bytes, or None."""
        if self.file_size % self.ENTRY.size:
            return f"size {self.file_size} is not a multiple of {self.ENTRY.size}"
        if self.zero_tail_entries:
            return f"untrimmed: {self.zero_tail_entries} zero-filled entries at the end"
        prev_rel, prev_pos = -1, -1
        for i, (rel, pos) in enumerate(zip(self.keys, self.values)):
            if rel <= prev_rel or pos <= prev_pos:
                return f"entry {i} ({rel}, {pos}) does not increase after ({prev_rel}, {prev_pos})"
            if pos < 0 or pos >= max(log_size, 1):
                return f"entry {i} position {pos} is outside the log ({log_size} bytes)"
            prev_rel, prev_pos = rel, pos
        return None


class TimeIndex(_Index):
    """`.timeindex`: 8-byte max timestamp so far, 4-byte relative offset of the first batch
    holding it. Entries are added only when the timestamp grows (Kafka's TimeIndex)."""

    ENTRY = struct.Struct(">qi")
    KEY_TYPE = "q"

    def last_timestamp(self) -> int:
        return self.keys[-1] if self.keys else -1

    def maybe_append(self, timestamp: int, offset: int, *, best_effort: bool = False) -> None:
        if self.keys and timestamp <= self.keys[-1]:
            return
        rel = offset - self.base_offset
        if self.values and rel < self.values[-1]:
            return
        if best_effort and self.is_full:  # the final entry on roll is optional when full
            return
        self._put(timestamp, rel)

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the largest entry with timestamp <= `timestamp`;
        (-1, base) if none (TimeIndex.lookup)."""
        i = self._floor(timestamp)
        if i < 0:
            return -1, self.base_offset
        return self.keys[i], self.base_offset + self.values[i]

    def truncate_to(self, offset: int) -> None:
        rel = offset - self.base_offset
        count = len(self.values)
        while count and self.values[count - 1] >= rel:
            count -= 1
        self.truncate_entries(count)

    def problem(self, next_offset: int) -> str | None:
        """Why this index cannot be trusted for a segment ending before `next_offset`."""
        if self.file_size % self.ENTRY.size:
            return f"size {self.file_size} is not a multiple of {self.ENTRY.size}"
        if self.zero_tail_entries:
            return f"untrimmed: {self.zero_tail_entries} zero-filled entries at the end"
        prev_ts, prev_rel = None, -1
        for i, (ts, rel) in enumerate(zip(self.keys, self.values)):
            if prev_ts is not None and ts <= prev_ts:
                return f"entry {i} timestamp {ts} does not increase after {prev_ts}"
            if rel < prev_rel or rel < 0 or self.base_offset + rel >= max(next_offset, self.base_offset + 1):
                return f"entry {i} relative offset {rel} is out of order or outside the segment"
            prev_ts, prev_rel = ts, rel
        return None
