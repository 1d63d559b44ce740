"""Producer-state snapshots: `<20-digit offset>.snapshot` in Kafka's format (ProducerSnapshot.json,
version 1; ProducerStateManager.writeSnapshot/readSnapshot), so kafka-dump-log.sh reads ours.

Bytes (big-endian): version int16 (1), crc uint32 (CRC-32C of everything after it), entry
count int32, then per producer: producerId int64, epoch int16, lastSequence int32, lastOffset
int64, offsetDelta int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64
(-1: none). A snapshot named N holds the state of the log up to (not including) offset N. Only
each producer's last batch is kept, as in Kafka. Snapshots are a cache: a damaged one is
ignored (CorruptSnapshotError) and the state is rebuilt from the log instead.
"""

from __future__ import annotations

import os
import re
import struct

from storage.crc import crc32c

from . import fsutil
from .producer_state import BatchMetadata, ProducerStateEntry, ProducerStateManager

__all__ = [
    "CorruptSnapshotError",
    "SNAPSHOT_SUFFIX",
    "snapshot_path",
    "list_snapshots",
    "encode_snapshot",
    "write_snapshot",
    "write_snapshot_bytes",
    "read_snapshot",
    "delete_snapshots",
    "delete_snapshot",
]

SNAPSHOT_SUFFIX = ".snapshot"
_NAME = re.compile(r"^(\d{20})\.snapshot$")
_VERSION = 1
_HEAD = struct.Struct(">hIi")  # version, crc, entry count
_ENTRY = struct.Struct(">qhiqiqiq")
_CRC_FROM = 6  # PRODUCER_ENTRIES_OFFSET


class CorruptSnapshotError(ValueError):
    """The file is not a readable snapshot (Kafka's CorruptSnapshotException)."""


def snapshot_path(directory: str, offset: int) -> str:
    return os.path.join(directory, f"{offset:020d}{SNAPSHOT_SUFFIX}")


def list_snapshots(directory: str) -> list[int]:
    """Offsets of the snapshot files of a partition directory, ascending."""
    return sorted(int(m.group(1)) for m in map(_NAME.match, os.listdir(directory)) if m)


def encode_snapshot(state: ProducerStateManager) -> bytes:
    out = bytearray(_HEAD.size)
    for pid, e in state.producers.items():
        last = e.batches[-1] if e.batches else None
        out += _ENTRY.pack(
            pid,
            e.producer_epoch,
            last.last_seq if last else -1,
            last.last_offset if last else -1,
            last.offset_delta if last else 0,
            e.last_timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
    _HEAD.pack_into(out, 0, _VERSION, 0, len(state.producers))
    crc = crc32c(memoryview(out)[_CRC_FROM:])
    struct.pack_into(">I", out, 2, crc)
    return bytes(out)


def write_snapshot(directory: str, offset: int, state: ProducerStateManager, *, sync: bool = True) -> str:
    """Write the snapshot for `offset` (tmp file + rename, so a reader never sees half of it;
    with sync=False the data is not fsynced: a crash may leave a file the CRC rejects)."""
    return write_snapshot_bytes(directory, offset, encode_snapshot(state), sync=sync)


def write_snapshot_bytes(directory: str, offset: int, data: bytes, *, sync: bool = False) -> str:
    """`write_snapshot` of an already encoded state (Log.checkpoint encodes on its thread)."""
    path = snapshot_path(directory, offset)
    if sync:
        fsutil.atomic_write(path, data)
    else:
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def read_snapshot(path: str) -> list[ProducerStateEntry]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise CorruptSnapshotError(f"{path}: {exc}") from None
    if len(data) < _HEAD.size:
        raise CorruptSnapshotError(f"{path}: {len(data)} bytes is shorter than a snapshot header")
    version, crc, count = _HEAD.unpack_from(data)
    if version != _VERSION:
        raise CorruptSnapshotError(f"{path}: unknown snapshot version {version}")
    if count < 0 or len(data) != _HEAD.size + count * _ENTRY.size:
        raise CorruptSnapshotError(f"{path}: {count} entries do not match the file size {len(data)}")
    computed = crc32c(memoryview(data)[_CRC_FROM:])
    if computed != crc:
        raise CorruptSnapshotError(f"{path}: CRC is no longer valid (stored {crc}, computed {computed})")
    entries = []
    for pid, epoch, last_seq, last_offset, delta, ts, coord_epoch, txn_first in _ENTRY.iter_unpack(data[_HEAD.size :]):
        entry = ProducerStateEntry(pid, epoch, coord_epoch, ts, txn_first)
        if last_offset >= 0:
            entry.batches.append(BatchMetadata(last_seq, last_offset, delta, ts))
        entries.append(entry)
    return entries


def delete_snapshots(
    directory: str, keep: set[int] | None = None, *, above: int | None = None, below: int | None = None
) -> None:
    """Delete snapshot files with offset > `above` or < `below` (and not in `keep`)."""
    for offset in list_snapshots(directory):
        if keep is not None and offset in keep:
            continue
        if (above is not None and offset > above) or (below is not None and offset < below):
            delete_snapshot(directory, offset)


def delete_snapshot(directory: str, offset: int) -> None:
    try:
        os.unlink(snapshot_path(directory, offset))
    except FileNotFoundError:
        pass
