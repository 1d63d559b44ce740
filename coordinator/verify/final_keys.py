"""The per-key rows the key-level checks read, finished in the task that scanned whole dirs.

When one task scanned every split of a partition dir (the local scan packs whole dirs), its
per-key aggregates (rows.scan_task: per (name, region, key) over its splits, deferred
transactional rows apart) are finished there, with Arrow: a deferred row counts only where its
producer's next marker is a COMMIT (txn.py), and every counted row of a key folds into one row
per (name, key): `l` the latest record (decoded on the after side), `count0`, `f0` and `l0`
over the cleaned region (region 0). That is what spark_checks computes with a window and an
aggregation when the executors scanned, row for row: max_by/min_by become the last/first row
in (last_offset/first_offset) order, a later row winning a tie. `P` (the before side) is `l0`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from coordinator.verify.latest import DECODED, decoded_columns

__all__ = ["finish", "AFTER_SCHEMA", "BEFORE_SCHEMA"]

_LATEST = [
    ("offset", pa.int64()),
    ("segment", pa.int64()),
    ("pos", pa.int64()),
    ("timestamp", pa.int64()),
    ("value_hash", pa.int64()),
    ("tombstone", pa.bool_()),
    ("delete_horizon", pa.int64()),
]
_DECODED_TYPES = {
    "record_type": pa.int32(),
    "group": pa.string(),
    "topic": pa.string(),
    "partition": pa.int32(),
    "committed_offset": pa.int64(),
    "metadata": pa.string(),
    "decode_error": pa.string(),
}
_L = pa.struct(_LATEST + [(n, _DECODED_TYPES[n]) for n in DECODED])
_F = pa.struct(_LATEST[:3])
AFTER_SCHEMA = pa.schema(
    [
        ("name", pa.string()),
        ("key", pa.binary()),
        ("l", _L),
        ("count0", pa.int64()),
        ("f0", _F),
        ("l0", pa.struct(_LATEST)),
    ]
)
BEFORE_SCHEMA = pa.schema([("name", pa.string()), ("key", pa.binary()), ("P", pa.struct(_LATEST))])
# The K-row column behind each field of the latest (l, l0, P) and first (f0) structs.
_LATEST_FROM = ["last_offset", "segment", "last_pos", "timestamp", "value_hash", "tombstone", "delete_horizon"]
_FIRST_FROM = ["first_offset", "first_segment", "first_pos"]


def _counted(t: pa.Table, markers: list[tuple[str, int, int, bool]]) -> pa.Table:
    """The rows that count: plain ones, and deferred ones whose producer's first marker above
    their last offset (in the same dir) is a COMMIT."""
    deferred = pc.is_valid(t["producer_id"])
    if not pc.any(deferred).as_py():
        return t
    d = t.filter(deferred)
    by: dict[tuple[str, int], list[tuple[int, bool]]] = {}
    for name, offset, pid, commit in sorted(markers, key=lambda m: m[1]):
        by.setdefault((name, pid), []).append((offset, commit))
    found = {k: (np.array([o for o, _ in v], np.int64), [c for _, c in v]) for k, v in by.items()}
    keep = np.zeros(len(d), bool)
    # One step per deferred row: the records of a transaction open at its split's end.
    for i, (name, pid, last) in enumerate(
        zip(d["name"].to_pylist(), d["producer_id"].to_pylist(), d["last_offset"].to_pylist())
    ):
        m = found.get((name, pid))
        if m is not None:
            j = int(np.searchsorted(m[0], last, side="right"))
            keep[i] = j < len(m[1]) and m[1][j]
    return pa.concat_tables([t.filter(pc.invert(deferred)), d.filter(pa.array(keep))])


def _ranks(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """(rank of each row in a stable ascending sort of `column`, the rows in that order)."""
    order = pc.sort_indices(column).to_numpy()  # stable
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank, order


def _struct(t: pa.Table, rows: Any, fields: list[tuple[str, pa.DataType]], sources: list[str]) -> pa.StructArray:
    """A struct column of `t`'s rows `rows` (null where a row is null)."""
    arrays = [t[c].take(rows).combine_chunks().cast(f[1]) for c, f in zip(sources, fields)]
    return pa.StructArray.from_arrays(arrays, fields=[pa.field(n, ty) for n, ty in fields], mask=pc.is_null(rows))


def finish(keys: pa.Table, markers: list[tuple[str, int, int, bool]], *, side: str) -> pa.Table:
    """One row per (name, key) of whole dirs' K rows (rows._KEYS, values kept for decoding):
    AFTER_SCHEMA on the after side, BEFORE_SCHEMA on the before side."""
    t = _counted(keys, markers)
    rank_last, by_last = _ranks(t["last_offset"])
    rank_first, by_first = _ranks(t["first_offset"])
    r0 = pc.equal(t["region"], 0)
    none = pa.scalar(None, pa.int64())
    helper = pa.table(
        {
            "name": t["name"],
            "key": t["key"],
            "last": rank_last,
            "last0": pc.if_else(r0, pa.array(rank_last), none),
            "first0": pc.if_else(r0, pa.array(rank_first), none),
            "count0": pc.if_else(r0, t["count"], none),
        }
    )
    g = helper.group_by(["name", "key"], use_threads=False).aggregate(
        [("last", "max"), ("last0", "max"), ("first0", "min"), ("count0", "sum")]
    )

    def rows(ranks: Any, order: np.ndarray) -> pa.Array:
        r = ranks.combine_chunks() if isinstance(ranks, pa.ChunkedArray) else ranks
        return pc.take(pa.array(order), r)  # null where no row

    l0 = rows(g["last0_max"], by_last)
    if side != "after":
        return pa.table({"name": g["name"], "key": g["key"], "P": _struct(t, l0, _LATEST, _LATEST_FROM)}, BEFORE_SCHEMA)
    latest = rows(g["last_max"], by_last)
    last = t.take(latest)
    which = last["decode"].to_pylist()
    decoded = decoded_columns(last["key"].to_pylist(), last["value"].to_pylist(), which, last["name"].to_pylist())
    dec = pa.table({n: pa.array(decoded[n], _DECODED_TYPES[n]) for n in DECODED})
    base = [last[c].combine_chunks() for c in _LATEST_FROM] + [dec[n].combine_chunks() for n in DECODED]
    lstruct = pa.StructArray.from_arrays(base, fields=list(_L))
    cols = {
        "name": g["name"],
        "key": g["key"],
        "l": lstruct,
        "count0": g["count0_sum"],
        "f0": _struct(t, rows(g["first0_min"], by_first), _LATEST[:3], _FIRST_FROM),
        "l0": _struct(t, l0, _LATEST, _LATEST_FROM),
    }
    return pa.table(cols, AFTER_SCHEMA)
