"""Rules shared by the Spark job and the oracle that act on small, driver-side data.

`continuity` joins split summaries (S2 across splits and segments, S3 segment bounds, C5 log end
offsets need them); `replay_ledger` is the reference meaning of the acknowledgement ledger;
`Report` is the violation list both produce. A violation is identified by (check, file,
position, offset); messages are for people and may differ between the two implementations.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from coordinator.verify.layout import Violation, segment_path
from coordinator.verify.ledger import read_events

__all__ = ["continuity", "replay_ledger", "Report", "CHECKS"]

CHECKS = {
    "S1": "batch parses: magic 2, length, CRC-32C, record framing, end-transaction markers",
    "S2": "offsets strictly increasing within and across batches and segments",
    "S3": "segment bounds and file names",
    "S4": "no torn tail: .log size is the sum of its batches (the active one may end in preallocated zeros)",
    "S5": ".index entries monotonic and pointing at real batch starts",
    "S6": ".timeindex monotonic and within the segment",
    "G1": "record key type / value version known and decodable",
    "G2": "replayed committed offsets equal the acknowledged ledger",
    "G3": "no live offsets older than their group's tombstone",
    "G4": "group records sit in partition_for(group)",
    "H1": "__share_group_state: each key's latest record has a known type and version and decodes",
    "H2": "__share_group_state: a share-partition's records sit in partitionFor(group:topicId:partition)",
    "H3": "__share_group_state: every state can be rebuilt (updates follow a live snapshot)",
    "C1": "surviving records unchanged (same offset, key, value): nothing renumbered or invented",
    "C2": "the latest record of every key in the cleaned range survives",
    "C3": "at most one record per key below the cleaner's end offset",
    "C4": "the uncleanable region (active segment) is byte-identical",
    "C5": "batch envelopes and log end offset preserved",
    "C6": "kept tombstones carry an unexpired delete horizon",
}


def continuity(summaries: Iterable[dict[str, Any]]) -> tuple[list[Violation], dict[str, int]]:
    """Cross-split checks on split summaries (dicts with the Summary fields).
    Returns the violations and each partition dir's log end offset (by dir path)."""
    out: list[Violation] = []
    leo: dict[str, int] = {}
    rows = sorted(summaries, key=lambda r: (r["dir"], r["segment"], r["start"]))
    prev: dict[str, Any] | None = None  # last summary with a valid batch, in this dir
    seen_segment_first: set[tuple[str, int]] = set()
    for r in rows:
        if prev is not None and prev["dir"] != r["dir"]:
            prev = None
        if r["first_base"] is None:
            continue
        file = segment_path(r["dir"], r["segment"])
        if (r["dir"], r["segment"]) not in seen_segment_first:
            seen_segment_first.add((r["dir"], r["segment"]))
            if r["first_base"] < r["segment"]:
                out.append(
                    (
                        "S3",
                        file,
                        r["first_pos"],
                        r["first_base"],
                        f"first batch offset {r['first_base']} is below the segment base",
                    )
                )
        if prev is not None:
            entry = r.get("start_entry")
            if entry and prev["segment"] == r["segment"] and prev["last_offset"] >= entry[1]:
                out.append(
                    (
                        "S5",
                        segment_path(r["dir"], r["segment"], ".index"),
                        entry[0],
                        entry[1],
                        f"entry offset {entry[1]} is not above the previous batch's last offset {prev['last_offset']}",
                    )
                )
            if r["first_base"] <= prev["last_offset"]:
                out.append(
                    (
                        "S2",
                        file,
                        r["first_pos"],
                        r["first_base"],
                        f"batch base offset {r['first_base']} is not above the previous "
                        f"batch's last offset {prev['last_offset']}",
                    )
                )
            if prev["segment"] != r["segment"] and prev["last_offset"] >= r["segment"]:
                out.append(
                    (
                        "S3",
                        segment_path(prev["dir"], prev["segment"]),
                        prev["last_pos"],
                        prev["last_offset"],
                        f"last offset {prev['last_offset']} is not below the next segment's base {r['segment']}",
                    )
                )
        prev = r
        leo[r["dir"]] = max(leo.get(r["dir"], 0), r["log_end"])
    return out, leo


def replay_ledger(path: str) -> dict[tuple[str, str, int], tuple[str, int, str]]:
    """(group, topic, partition) -> (group, offset, metadata) that clients were told is
    committed: the last acknowledged commit, unless an offset deletion (expiry, OffsetDelete)
    or a group deletion was acknowledged after it. Events apply in `seq` order."""
    events = sorted(read_events(path), key=lambda e: e["seq"])
    state: dict[tuple[str, str, int], tuple[str, int, str]] = {}
    by_group: dict[str, set[tuple[str, str, int]]] = {}
    for e in events:
        op = e["op"]
        if op == "commit":
            tp = (e["group"], e["topic"], int(e["partition"]))
            state[tp] = (e["group"], int(e["offset"]), e.get("metadata") or "")
            by_group.setdefault(e["group"], set()).add(tp)
        elif op == "delete_offset":
            state.pop((e["group"], e["topic"], int(e["partition"])), None)
        elif op == "delete_group":
            for tp in by_group.pop(e["group"], set()):
                state.pop(tp, None)
        else:
            raise ValueError(f"unknown ledger op {op!r}")
    return state


@dataclass
class Report:
    violations: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # check -> total (may exceed the list)

    def add(self, check: str, file: str | None, position: int | None, offset: int | None, message: str) -> None:
        self.violations.append(
            {"check": check, "file": file, "position": position, "offset": offset, "message": message}
        )
        self.counts[check] = self.counts.get(check, 0) + 1

    def keys(self) -> set[tuple]:
        return {(v["check"], v["file"], v["position"], v["offset"]) for v in self.violations}

    @property
    def ok(self) -> bool:
        return not any(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "counts": self.counts,
            "stats": self.stats,
            "violations": sorted(
                self.violations,
                key=lambda v: (
                    v["check"],
                    v["file"] or "",
                    v["position"] if v["position"] is not None else -1,
                    v["offset"] if v["offset"] is not None else -1,
                ),
            ),
        }


def offsets_dir(data_dir: str, group: str, num_partitions: int) -> str:
    """Where a group's records belong; the data dir itself when the partition count is not
    known (0: the placement check is off, so no partition can be named)."""
    from coordinator.groups.placement import partition_for

    if num_partitions <= 0:
        return data_dir
    return os.path.join(data_dir, f"__consumer_offsets-{partition_for(group, num_partitions)}")
