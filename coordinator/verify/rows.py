"""The rows the `kgclog` source yields for one split, as Arrow batches, from either scan engine.

Row kinds, told apart by `kind`: V = violation (exact file, position, offset: structure, and
C4/C5 from envelopes.py), S = split summary (how the batch chain starts and ends, for the
cross-split checks), K = one key's records in one split and region (count, first and last
occurrence; with `decode`, the last one decoded), M = an end-transaction marker (producer,
offset, commit). A K row with a producer_id holds transactional records whose marker is beyond
their split (txn.py): the driver keeps it only if that producer's next marker is a COMMIT.
Engines: "compiled" (fastscan.py, numba) and "python" (scan.py + envelopes.py); "auto" takes
the compiled one when numba is there. Both give the same rows (tests/verify/test_fast_scan.py).
K rows carry no dir (the name is the key; the driver maps names to dirs): a smaller shuffle.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from coordinator.verify import kernels
from coordinator.verify.envelopes import as_batches, envelope_checks
from coordinator.verify.latest import DECODED, decoded_columns
from coordinator.verify.layout import Split, Violation
from coordinator.verify.scan import Summary, scan_split
from coordinator.verify.share_checks import SHARE_PREFIX

__all__ = ["task_rows", "scan_task", "TaskScan", "ARROW_SCHEMA", "SCHEMA_DDL", "DECODED", "engine_for"]

_COLUMNS: list[tuple[str, Any, str]] = [
    ("kind", pa.string(), "string"),
    ("name", pa.string(), "string"),
    ("dir", pa.string(), "string"),
    ("segment", pa.int64(), "bigint"),
    # V
    ("check", pa.string(), "string"),
    ("file", pa.string(), "string"),
    ("position", pa.int64(), "bigint"),
    ("offset", pa.int64(), "bigint"),
    ("message", pa.string(), "string"),
    # S
    ("start", pa.int64(), "bigint"),
    ("end_pos", pa.int64(), "bigint"),
    ("reached", pa.int64(), "bigint"),
    ("broken", pa.bool_(), "boolean"),
    ("first_base", pa.int64(), "bigint"),
    ("first_pos", pa.int64(), "bigint"),
    ("last_offset", pa.int64(), "bigint"),
    ("last_pos", pa.int64(), "bigint"),
    ("batches", pa.int64(), "bigint"),
    ("records", pa.int64(), "bigint"),
    ("max_timestamp", pa.int64(), "bigint"),
    ("log_end", pa.int64(), "bigint"),
    ("entry_pos", pa.int64(), "bigint"),
    ("entry_offset", pa.int64(), "bigint"),
    ("txn_batches", pa.int64(), "bigint"),
    # K (deferred) and M
    ("producer_id", pa.int64(), "bigint"),
    ("commit", pa.bool_(), "boolean"),
    # K (last_offset/last_pos/first_pos shared with S)
    ("region", pa.int32(), "int"),
    ("key", pa.binary(), "binary"),
    ("count", pa.int64(), "bigint"),
    ("first_offset", pa.int64(), "bigint"),
    ("first_segment", pa.int64(), "bigint"),
    ("timestamp", pa.int64(), "bigint"),
    ("value_hash", pa.int64(), "bigint"),
    ("tombstone", pa.bool_(), "boolean"),
    ("delete_horizon", pa.int64(), "bigint"),
    ("record_type", pa.int32(), "int"),
    ("group", pa.string(), "string"),
    ("topic", pa.string(), "string"),
    ("partition", pa.int32(), "int"),
    ("committed_offset", pa.int64(), "bigint"),
    ("metadata", pa.string(), "string"),
    ("decode_error", pa.string(), "string"),
]
ARROW_SCHEMA = pa.schema([(n, t) for n, t, _ in _COLUMNS])
SCHEMA_DDL = ", ".join(f"`{n}` {d}" for n, _, d in _COLUMNS)
_TYPES = {n: t for n, t, _ in _COLUMNS}
_NAMES = [n for n, _, _ in _COLUMNS]


def engine_for(name: str) -> str:
    if name == "auto":
        return "compiled" if kernels.AVAILABLE else "python"
    if name == "compiled" and not kernels.AVAILABLE:
        raise RuntimeError("the compiled engine needs numba (pip install 'kafka-group-coordinator[verify]')")
    return name


def _batch(kind: str, cols: dict[str, Any], split: Split | None = None) -> pa.RecordBatch:
    """One Arrow batch of rows of one kind: the given columns (name and segment from `split`
    when given), nulls everywhere else."""
    n = len(next(iter(cols.values())))
    fixed = {"kind": pa.array([kind] * n, pa.string())}
    if split is not None:
        fixed.update(
            name=pa.array([split.name] * n, pa.string()),
            dir=pa.array([split.dir] * n, pa.string()),
            segment=pa.array([split.segment] * n, pa.int64()),
        )
    arrays = [
        fixed[c]
        if c in fixed
        else cols[c]
        if isinstance(cols.get(c), (pa.Array, pa.ChunkedArray))
        else pa.array(cols[c], _TYPES[c])
        if c in cols
        else pa.nulls(n, _TYPES[c])
        for c in _NAMES
    ]
    return pa.RecordBatch.from_arrays(
        [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays], schema=ARROW_SCHEMA
    )


def _violations(split: Split, vs: list[Violation]) -> pa.RecordBatch:
    v = list(zip(*vs))
    return _batch(
        "V",
        {"check": list(v[0]), "file": list(v[1]), "position": list(v[2]), "offset": list(v[3]), "message": list(v[4])},
        split,
    )


def _summary(split: Split, s: Summary) -> pa.RecordBatch:
    return _batch(
        "S",
        {
            "start": [s.start],
            "end_pos": [s.end],
            "reached": [s.reached],
            "broken": [s.broken],
            "first_base": [s.first_base],
            "first_pos": [s.first_pos],
            "last_offset": [s.last_offset],
            "last_pos": [s.last_pos],
            "batches": [s.batches],
            "records": [s.records],
            "max_timestamp": [s.max_timestamp],
            "log_end": [s.log_end],
            "entry_pos": [s.start_entry[0] if s.start_entry else None],
            "entry_offset": [s.start_entry[1] if s.start_entry else None],
            "txn_batches": [s.txn_batches],
        },
        split,
    )


def _markers(split: Split, markers: list[tuple[int, int, bool]]) -> pa.RecordBatch:
    offsets, pids, commits = zip(*markers)
    return _batch("M", {"offset": list(offsets), "producer_id": list(pids), "commit": list(commits)}, split)


# Per-key aggregates of one split, or merged over the splits of one task (the K rows before
# decoding; `value` is the last value, kept only to be decoded).
_KEYS = pa.schema(
    [
        ("name", pa.string()),
        ("region", pa.int32()),
        ("key", pa.binary()),
        ("count", pa.int64()),
        ("first_offset", pa.int64()),
        ("first_pos", pa.int64()),
        ("first_segment", pa.int64()),
        ("last_offset", pa.int64()),
        ("last_pos", pa.int64()),
        ("segment", pa.int64()),
        ("timestamp", pa.int64()),
        ("value_hash", pa.int64()),
        ("tombstone", pa.bool_()),
        ("delete_horizon", pa.int64()),
        ("producer_id", pa.int64()),
        ("value", pa.binary()),
        ("decode", pa.bool_()),
    ]
)
_AGGREGATES = (
    "count",
    "first_offset",
    "first_pos",
    "last_offset",
    "last_pos",
    "timestamp",
    "value_hash",
    "tombstone",
    "delete_horizon",
)


def _key_table(split: Split, cols: dict[str, Any], values: list[bytes | None] | None, decode: bool) -> pa.Table:
    n = len(cols["region"])
    full = dict(
        cols,
        name=pa.array([split.name] * n, pa.string()),
        first_segment=pa.array([split.segment] * n, pa.int64()),
        segment=pa.array([split.segment] * n, pa.int64()),
        value=pa.array(values if values is not None else [None] * n, pa.binary()),
        decode=pa.array([decode] * n, pa.bool_()),
    )
    return pa.Table.from_arrays(
        [full[f.name] if isinstance(full[f.name], pa.Array) else pa.array(full[f.name], f.type) for f in _KEYS],
        schema=_KEYS,
    )


_Scanned = tuple[list[Violation], "Summary | None", "pa.Table | None", list[tuple[int, int, bool]]]


def _scan(split: Split, engine: str, other_root: str | None, side: str, decode: bool) -> _Scanned:
    """One split: its violations (structure, and C4/C5 against `other_root`), its summary, its
    per-key aggregates (deferred transactional ones included) and its markers."""
    decode = decode and (split.is_offsets_topic or split.name.startswith(SHARE_PREFIX))
    other = os.path.join(other_root, split.name) if other_root is not None else None
    if engine_for(engine) == "compiled":
        from coordinator.verify import fast_envelopes, fastscan

        res = fastscan.scan_split_fast(split, want_values=decode)
        violations, summary = res.violations, res.summary
        if other is not None and res.batches is not None:
            violations += fast_envelopes.envelope_checks_fast(side, res.batches, res.regions, split.log_path, other)
        if res.keys is None or not len(res.keys):
            return violations, summary, None, res.markers
        values = fastscan.last_values(res) if decode else None
        return (violations, summary, _key_table(split, fastscan.key_columns(res), values, decode), res.markers)
    py = scan_split(split, emit_batches=other is not None)
    if other is not None:
        py.violations += envelope_checks(
            side, as_batches(py.batches, [b[9] for b in py.batches], split.log_path), other
        )
    items: list[tuple[int, int | None, bytes | None, list[Any]]] = [(r, None, k, a) for (r, k), a in py.keys.items()]
    items += [(r, p, k, a) for (r, p, k), a in py.deferred.items()]
    if not items:
        return py.violations, py.summary, None, py.markers
    cols: dict[str, Any] = {
        "region": [i[0] for i in items],
        "producer_id": [i[1] for i in items],
        "key": [i[2] for i in items],
    }
    for j, name in enumerate(_AGGREGATES):
        cols[name] = [i[3][j] for i in items]
    values = [i[3][9] for i in items] if decode else None
    return py.violations, py.summary, _key_table(split, cols, values, decode), py.markers


def _merge(tables: list[pa.Table]) -> pa.Table:
    """Per (name, region, key) over splits given in log order: counts add up, the first
    occurrence is the earliest split's, the last (and its value) the latest split's. Deferred
    rows stay as they are (each split's may end differently)."""
    t = pa.concat_tables(tables)
    if len(tables) == 1:
        return t
    deferred = pc.is_valid(t["producer_id"])
    rest = None
    if pc.any(deferred).as_py():
        t, rest = t.filter(pc.invert(deferred)), t.filter(deferred)
    t = t.append_column("_i", pa.array(range(len(t)), pa.int64()))
    g = t.group_by(["name", "region", "key"], use_threads=False).aggregate(
        [("_i", "min"), ("_i", "max"), ("count", "sum")]
    )
    first, last = t.take(g["_i_min"]), t.take(g["_i_max"])
    cols = {f.name: last[f.name] for f in _KEYS}
    cols.update(
        count=g["count_sum"],
        first_offset=first["first_offset"],
        first_pos=first["first_pos"],
        first_segment=first["first_segment"],
    )
    merged = pa.table({f.name: cols[f.name] for f in _KEYS}, schema=_KEYS)
    return merged if rest is None else pa.concat_tables([merged, rest])


@dataclass
class TaskScan:
    """What one task's splits hold, before the K rows are decoded: V, S and M rows, the per-key
    aggregates merged over the splits (_KEYS; None when there are none), and the markers by
    partition dir (name, offset, producer id, commit)."""

    batches: list[pa.RecordBatch]
    keys: pa.Table | None
    markers: list[tuple[str, int, int, bool]]


def scan_task(
    splits: list[Split],
    *,
    engine: str = "auto",
    other_root: str | None = None,
    side: str = "after",
    decode: bool = False,
) -> TaskScan:
    """The splits of one task (given in log order: layout.plan_splits). `other_root`: the
    other data dir of a compaction check (enables C4/C5; `side` says which one this is);
    `decode`: mark each __consumer_offsets and __share_group_state key's last record for
    decoding (only the after log needs it, for the G and H checks). The before log's keys come
    from region 0 only (the compaction checks compare nothing else)."""
    out = TaskScan([], None, [])
    tables = []
    for split in splits:
        violations, summary, keys, markers = _scan(split, engine, other_root, side, decode)
        if violations:
            out.batches.append(_violations(split, violations))
        if summary is not None:
            out.batches.append(_summary(split, summary))
        if markers:
            out.batches.append(_markers(split, markers))
            out.markers += [(split.name, *m) for m in markers]
        if keys is not None and side == "before":
            keys = keys.filter(pc.equal(keys["region"], 0))
        if keys is not None and len(keys):
            tables.append(keys)
    out.keys = _merge(tables) if tables else None
    return out


def task_rows(
    splits: list[Split],
    *,
    engine: str = "auto",
    other_root: str | None = None,
    side: str = "after",
    decode: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Every output row of the splits of one task (scan_task's arguments), K rows merged over
    the task's splits and decoded where marked."""
    task = scan_task(splits, engine=engine, other_root=other_root, side=side, decode=decode)
    yield from task.batches
    t = task.keys
    if t is None:
        return
    cols: dict[str, Any] = {
        c: t[c] for c in ("name", "segment", "region", "key", "first_segment", "producer_id", *_AGGREGATES)
    }
    which = t["decode"].to_pylist()
    if any(which):
        cols.update(decoded_columns(t["key"].to_pylist(), t["value"].to_pylist(), which, t["name"].to_pylist()))
    yield _batch("K", cols)
