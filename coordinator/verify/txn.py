"""Transactions inside one split, shared by both record scans (scan.py, fastscan.py).

Kafka's rule (OffsetMetadataManager.replay / replayEndTransactionMarker; the cleaner's
CleanedTransactionMetadata): a record of a transactional batch counts once the first
end-transaction marker of its producer after it is COMMIT; ABORT discards it; until then it is
pending. Control batches are not data. So each batch of a split gets a mode for the record walk:
plain and committed data are aggregated per key (and G1-checked in __consumer_offsets), aborted
data is only checked, control batches only framed, and data whose marker lies beyond the split
is aggregated apart per (producer, key) ("deferred"), for the driver to resolve against the
markers of later splits. Keeping the latest of every committed or plain record is then exactly
Kafka's replay (a COMMIT materialises an offset only over older records: the greatest offset wins).
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.batch import InvalidBatch, read_marker
from storage.batch.layout import CONTROL_BIT, TRANSACTIONAL_BIT, Buffer

__all__ = [
    "AGGREGATE",
    "G1",
    "DEFER",
    "PLAIN",
    "ABORTED",
    "CONTROL",
    "DEFERRED",
    "TXN_BITS",
    "read_control",
    "batch_modes",
]

# Mode bits of a batch in the record walk.
AGGREGATE, G1, DEFER = 1, 2, 4
PLAIN = AGGREGATE | G1  # plain data, or a transaction whose COMMIT follows in the split
ABORTED = G1  # an ABORT follows: checked, never counted
CONTROL = 0  # a control batch: framed and delta-checked only
DEFERRED = DEFER | G1  # no marker of its producer later in the split
TXN_BITS = TRANSACTIONAL_BIT | CONTROL_BIT


def read_control(batch: Buffer) -> tuple[bool | None, str | None]:
    """(True for COMMIT / False for ABORT / None for no marker, why it does not parse) of a
    control batch, read by storage's EndTransactionMarker decoder."""
    try:
        marker = read_marker(batch)
    except (InvalidBatch, IndexError, ValueError) as exc:
        return None, f"end transaction marker does not parse: {exc}"
    return (None if marker is None else marker.commit), None


def batch_modes(rows: Sequence[tuple[int, int, bool | None]]) -> list[int]:
    """Modes of the split's trusted batches with a TXN_BITS attribute, given in log order as
    (producer id, attributes, marker: read_control's commit flag for a control batch)."""
    modes = [CONTROL] * len(rows)
    next_marker: dict[int, bool] = {}  # producer id -> its next marker, walking backwards
    for i in range(len(rows) - 1, -1, -1):
        pid, attrs, marker = rows[i]
        if attrs & CONTROL_BIT:
            if marker is not None:
                next_marker[pid] = marker
            continue
        after = next_marker.get(pid)
        modes[i] = DEFERRED if after is None else PLAIN if after else ABORTED
    return modes
