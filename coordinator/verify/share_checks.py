"""The __share_group_state checks (H1-H3), on the driver, for both engines: each key's latest
record (one row per record key of a __share_group_state partition: the Spark job ships them with
its one collect, the oracle reads them from its own decoding) in, violations out.

__share_group_state is not compacted (cleanup.policy=delete; the share coordinator deletes the
prefix no state needs), so the compaction checks (C1-C3, C6) skip it; what pruning must keep is
checked here instead. H1: the latest record of each key has a known type and version and decodes.
H2: a share-partition's records sit in the partition its coordinator key hashes to. H3: every
share-partition's state can be rebuilt from the log: updates after its newest snapshot-key record
need that record to be a live snapshot (a pruning that cut a live state's snapshot, or updates
written after a deletion, fail this).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from coordinator.share.state.placement import SHARE_STATE_TOPIC, partition_for, topic_id_text
from coordinator.share.state.records import (
    SNAPSHOT_TYPE,
    ShareRecordDecodeError,
    ShareSnapshot,
    ShareTombstone,
    ShareUpdate,
    UnknownShareRecord,
    decode_record,
)
from coordinator.verify.layout import Violation

__all__ = ["SHARE_PREFIX", "LatestShareRecord", "decode_share_latest", "share_violations"]

SHARE_PREFIX = SHARE_STATE_TOPIC + "-"


def decode_share_latest(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """The decoded columns (latest.DECODED) of a __share_group_state record: record_type, group,
    topic (the topic id, as Kafka prints it), partition, decode_error."""
    out: dict[str, Any] = {
        "record_type": None,
        "group": None,
        "topic": None,
        "partition": None,
        "committed_offset": None,
        "metadata": None,
        "decode_error": None,
    }
    if key is None or len(key) < 2:
        out["decode_error"] = "no key"
        return out
    out["record_type"] = int.from_bytes(key[:2], "big", signed=True)
    try:
        record = decode_record(key, value)
    except ShareRecordDecodeError as exc:
        out["decode_error"] = str(exc) or type(exc).__name__
        return out
    if isinstance(record, UnknownShareRecord):
        kind = "type" if record.version < 0 else f"version {record.version} of type"
        out["decode_error"] = f"unknown record {kind} {record.record_type} (Kafka's loader skips it)"
        return out
    assert isinstance(record, ShareSnapshot | ShareUpdate | ShareTombstone)
    out["group"], out["partition"] = record.key.group_id, record.key.partition
    out["topic"] = topic_id_text(record.key.topic_id)
    return out


@dataclass(frozen=True)
class LatestShareRecord:
    """A record key's latest record in one __share_group_state partition, and where it is."""

    name: str  # "__share_group_state-N"
    key: bytes
    offset: int
    tombstone: bool
    file: str
    position: int
    decoded: dict[str, Any]


def share_violations(latest: Iterable[LatestShareRecord], num_partitions: int) -> list[Violation]:
    """H1-H3 over every record key's latest record; `num_partitions` 0 skips H2."""
    out: list[Violation] = []
    # per (partition name, share-partition key struct): [latest snapshot-key record, latest update]
    states: dict[tuple[str, bytes], list[LatestShareRecord | None]] = {}
    for r in sorted(latest, key=lambda r: (r.name, r.key)):
        d = r.decoded
        if d["decode_error"] is not None:
            out.append(("H1", r.file, r.position, r.offset, f"latest record does not decode: {d['decode_error']}"))
            continue
        if num_partitions > 0:
            text = f"{d['group']}:{d['topic']}:{d['partition']}"
            want = f"{SHARE_PREFIX}{partition_for(text, num_partitions)}"
            if want != r.name:
                out.append(("H2", r.file, r.position, r.offset, f"share-partition {text!r} belongs in {want}"))
        slots = states.setdefault((r.name, r.key[2:]), [None, None])
        slots[0 if d["record_type"] == SNAPSHOT_TYPE else 1] = r
    for snapshot, update in states.values():
        if update is None or (snapshot is not None and update.offset < snapshot.offset):
            continue
        if snapshot is None or snapshot.tombstone:
            why = "no snapshot before it is left" if snapshot is None else "its state was deleted before it"
            out.append(("H3", update.file, update.position, update.offset, f"update cannot be replayed: {why}"))
    return out
