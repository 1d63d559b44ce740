"""The aborted-transaction index of one segment: `<base>.txnindex` (Kafka's TransactionIndex).

34-byte entries, big-endian: version int16 (0), producerId int64, firstOffset int64, lastOffset
int64 (the offset of the ABORT marker), lastStableOffset int64 (the LSO right after the abort).
An entry lives in the segment that holds its marker; lastOffset strictly increases within a
file. The file is created lazily on the first append, as Kafka does, so most segments have none.
A read_committed fetch collects the entries overlapping its range (`collect`); recovery rewrites
the index of every rescanned segment from the log, so a lost or torn tail is never trusted.
"""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

from . import fsutil

__all__ = ["AbortedTxn", "TransactionIndex", "ENTRY", "read_entries"]

ENTRY = struct.Struct(">hqqqq")
assert ENTRY.size == 34
CURRENT_VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = CURRENT_VERSION

    def pack(self) -> bytes:
        return ENTRY.pack(self.version, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset)


def read_entries(data: bytes) -> list[AbortedTxn]:
    """Whole entries of a `.txnindex` file's bytes (a torn last entry is ignored)."""
    out = []
    for version, pid, first, last, lso in ENTRY.iter_unpack(data[: len(data) - len(data) % ENTRY.size]):
        out.append(AbortedTxn(pid, first, last, lso, version))
    return out


class TransactionIndex:
    """One segment's `.txnindex`. Entries are cached in memory (they are few: one per aborted
    transaction whose marker is in this segment); the file is opened only to write."""

    def __init__(self, path: str, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self._fd = -1
        self.entries: list[AbortedTxn] = []
        if os.path.exists(path):
            with open(path, "rb") as f:
                data = f.read()
            self.entries = read_entries(data)
            if len(data) % ENTRY.size:  # a torn entry after a crash: recovery rewrites the file
                self._truncate_file(len(self.entries) * ENTRY.size)

    @property
    def exists(self) -> bool:
        return os.path.exists(self.path)

    def append(self, txn: AbortedTxn) -> None:
        """TransactionIndex.append: lastOffset must grow."""
        if self.entries and txn.last_offset <= self.entries[-1].last_offset:
            raise ValueError(
                f"aborted transaction last offset {txn.last_offset} does not follow "
                f"{self.entries[-1].last_offset} in {self.path}"
            )
        fsutil.write_all(self._open(), txn.pack())
        self.entries.append(txn)

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """TransactionIndex.collectAbortedTxns: entries overlapping [fetch_offset, upper_bound),
        and whether the search is complete (an entry's LSO reached upper_bound)."""
        found = []
        for txn in self.entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    def rewrite(self, entries: list[AbortedTxn]) -> None:
        """Replace the whole content (recovery, which derives it from the log). Removes the file
        when there is nothing to keep."""
        if entries == self.entries and (entries or not self.exists):
            return
        self.close()
        if not entries:
            self.delete()
            return
        fsutil.atomic_write(self.path, b"".join(t.pack() for t in entries))
        self.entries = list(entries)

    def truncate_to(self, offset: int) -> None:
        """TransactionIndex.truncateTo: drop entries whose marker is at or after `offset`."""
        keep = [t for t in self.entries if t.last_offset < offset]
        if len(keep) != len(self.entries):
            self._truncate_file(len(keep) * ENTRY.size)
            self.entries = keep

    def _truncate_file(self, size: int) -> None:
        fd = self._open()
        os.ftruncate(fd, size)

    def _open(self) -> int:
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    @property
    def fd(self) -> int:
        """The open descriptor, -1 if the index was never written since it was opened."""
        return self._fd

    def flush(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def rename(self, path: str) -> None:
        if os.path.exists(self.path):
            os.rename(self.path, path)
        self.path = path

    def delete(self) -> None:
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
