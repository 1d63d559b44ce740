"""Control batches: the transaction markers COMMIT and ABORT (Kafka's ControlRecordType and
EndTransactionMarker) and the one control record a control batch holds.

A control batch has attribute bits 4 (transactional) and 5 (control) set, the producer id and
epoch of the transaction it ends, base sequence -1, and one record: key = int16 version (0) +
int16 type (0 ABORT, 1 COMMIT; 2-6 are KRaft's), value = int16 version (0) + int32 coordinator
epoch. Invariant: `encode_marker` output is a whole, CRC-valid batch that `read_marker` reads back.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from .layout import CONTROL_BIT, Buffer, InvalidBatch, decode_header
from .records import Record, encode_batch, iter_records

__all__ = ["ABORT", "COMMIT", "CONTROL_TYPE_NAMES", "Marker", "encode_marker", "read_marker", "control_type"]

ABORT, COMMIT = 0, 1
CONTROL_TYPE_NAMES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")
_MARKER_VERSION = 0


class Marker(NamedTuple):
    """An end-transaction marker: `commit` True for COMMIT, False for ABORT."""

    commit: bool
    coordinator_epoch: int


def control_type(key: bytes | None) -> int:
    """ControlRecordType.parseTypeId: the type of a control record key, -1 if unreadable."""
    if key is None or len(key) < 4:
        return -1
    return int(_KEY.unpack_from(key)[1])


def encode_marker(
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    timestamp_ms: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A control batch holding one COMMIT or ABORT marker (MemoryRecords.withEndTransactionMarker)."""
    key = _KEY.pack(_MARKER_VERSION, COMMIT if commit else ABORT)
    value = _VALUE.pack(_MARKER_VERSION, coordinator_epoch)
    return encode_batch(
        base_offset,
        [Record(None, timestamp_ms, key, value)],
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def read_marker(batch: Buffer) -> Marker | None:
    """The end-transaction marker of a control batch; None for an empty (cleaned) control batch
    or one of another control type. Raises InvalidBatch if it is not a control batch or its
    marker does not parse (EndTransactionMarker.deserialize)."""
    h = decode_header(batch)
    if not h.attributes & CONTROL_BIT:
        raise InvalidBatch("not a control batch")
    for rec in iter_records(batch):
        kind = control_type(rec.key)
        if kind not in (ABORT, COMMIT):
            return None
        if rec.value is None or len(rec.value) < _VALUE.size:
            raise InvalidBatch("end transaction marker value is missing or too short")
        version, epoch = _VALUE.unpack_from(rec.value)
        if version < 0:
            raise InvalidBatch(f"end transaction marker version {version}")
        return Marker(kind == COMMIT, int(epoch))
    return None
