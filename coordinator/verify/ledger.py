"""The acknowledgement ledger: every commit and deletion clients were told succeeded.

Events: op (commit | delete_offset | delete_group), seq (applies in seq order), group, topic,
partition, offset, metadata, ack_ms (fields an op has no use for are null). Stored as Parquet
(columnar: Spark reads only the columns it needs, vectorised, instead of parsing JSON text;
~4x smaller) or, for hand-written ledgers, JSON lines; readers tell them apart by Parquet's
magic. `LedgerWriter` writes Parquet in row groups, so a generator never holds it all.
`replay_table` replays it with Arrow, a row group at a time (rules.replay_ledger is the reference).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

__all__ = [
    "FIELDS",
    "SPARK_SCHEMA",
    "LedgerWriter",
    "is_parquet",
    "read_events",
    "append_event",
    "replay_table",
    "expected_schema",
]

FIELDS = ("op", "seq", "group", "topic", "partition", "offset", "metadata", "ack_ms")
SPARK_SCHEMA = (
    "op string, seq long, `group` string, topic string, partition int, offset long, metadata string, ack_ms long"
)
_ROW_GROUP = 1 << 18


def _schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("op", pa.string()),
            ("seq", pa.int64()),
            ("group", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("metadata", pa.string()),
            ("ack_ms", pa.int64()),
        ]
    )


def is_parquet(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"PAR1"


class LedgerWriter:
    """Appends events (dicts with FIELDS) to a new Parquet ledger at `path`."""

    def __init__(self, path: str) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self._rows: list[dict[str, Any]] = []
        self._writer = pq.ParquetWriter(path, _schema(), compression="zstd")

    def write(self, event: dict[str, Any]) -> None:
        self._rows.append(event)
        if len(self._rows) >= _ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._rows:
            cols = {f: [r.get(f) for r in self._rows] for f in FIELDS}
            self._writer.write_table(pa.table(cols, schema=_schema()))
            self._rows = []

    def close(self) -> None:
        self._flush()
        self._writer.close()

    def __enter__(self) -> LedgerWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_events(path: str) -> Iterator[dict[str, Any]]:
    """Every event of a ledger, in file order."""
    if is_parquet(path):
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        for batch in f.iter_batches(batch_size=_ROW_GROUP):
            yield from batch.to_pylist()
        return
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def append_event(path: str, event: dict[str, Any]) -> None:
    """Add one event (faults use it); a Parquet ledger is rewritten."""
    if not is_parquet(path):
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path, schema=_schema())
    extra = pa.table({f: [event.get(f)] for f in FIELDS}, schema=_schema())
    tmp = path + ".tmp"
    pq.write_table(pa.concat_tables([table, extra]), tmp, compression="zstd")
    os.replace(tmp, path)


_PARTITION = ["group", "topic", "partition"]
_OPS = ("commit", "delete_offset", "delete_group")


def _batches(path: str) -> Iterator[Any]:
    """The ledger as Arrow tables of at most _ROW_GROUP events, in file order."""
    import pyarrow as pa

    if is_parquet(path):
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=_ROW_GROUP, columns=list(FIELDS)):
            yield pa.Table.from_batches([batch]).cast(_schema())
        return
    rows: list[dict[str, Any]] = []
    for event in read_events(path):
        rows.append(event)
        if len(rows) == _ROW_GROUP:
            yield pa.Table.from_pylist(rows, schema=_schema())
            rows = []
    yield pa.Table.from_pylist(rows, schema=_schema())


def _latest(t: Any, keys: list[str], values: list[str]) -> Any:
    """Per `keys`, the `values` of the row with the greatest seq (ties: the later row)."""
    aggs = [(c, "last") for c in ["seq", *values]]
    out = t.sort_by("seq").group_by(keys, use_threads=False).aggregate(aggs)  # a stable sort
    return out.rename_columns([c.removesuffix("_last") for c in out.column_names])


def expected_schema() -> Any:
    """The columns of replay_table."""
    import pyarrow as pa

    return pa.schema([_schema().field(n) for n in (*_PARTITION, "seq", "offset", "metadata")])


def replay_table(path: str) -> Any:
    """rules.replay_ledger as an Arrow table (group, topic, partition, seq, offset, metadata;
    metadata "" where the ledger has none): the last acknowledged commit of each partition
    unless an offset or group deletion was acknowledged after it. Streamed: memory grows with
    the partitions the ledger names, not with its events."""
    import pyarrow as pa
    import pyarrow.compute as pc

    commits = deleted = dropped = None
    for t in _batches(path):
        op = t["op"]
        unknown = pc.invert(pc.fill_null(pc.is_in(op, pa.array(_OPS)), False))
        if pc.any(unknown).as_py():
            raise ValueError(f"unknown ledger op {t.filter(unknown)['op'][0].as_py()!r}")
        c = t.filter(pc.equal(op, "commit")).select([*_PARTITION, "seq", "offset", "metadata"])
        d = t.filter(pc.equal(op, "delete_offset")).select([*_PARTITION, "seq"])
        g = t.filter(pc.equal(op, "delete_group")).select(["group", "seq"])
        # Each running table holds one row per key: the new events are folded into it.
        commits = _latest(c if commits is None else pa.concat_tables([commits, c]), _PARTITION, ["offset", "metadata"])
        deleted = _latest(d if deleted is None else pa.concat_tables([deleted, d]), _PARTITION, [])
        dropped = _latest(g if dropped is None else pa.concat_tables([dropped, g]), ["group"], [])
    assert commits is not None and deleted is not None and dropped is not None  # _batches yields
    j = commits.join(deleted.rename_columns([*_PARTITION, "dseq"]), _PARTITION, join_type="left outer")
    j = j.join(dropped.rename_columns(["group", "gseq"]), "group", join_type="left outer")
    live = pc.and_(pc.greater(j["seq"], pc.fill_null(j["dseq"], -1)), pc.greater(j["seq"], pc.fill_null(j["gseq"], -1)))
    out = j.filter(live).select([*_PARTITION, "seq", "offset", "metadata"])
    return out.set_column(5, "metadata", pc.fill_null(out["metadata"], "")).cast(expected_schema())
