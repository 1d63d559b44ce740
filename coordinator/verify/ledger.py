"""The acknowledgement ledger: every commit and deletion clients were told succeeded.

Events: op (commit | delete_offset | delete_group), seq (applies in seq order), group, topic,
partition, offset, metadata, ack_ms (fields an op has no use for are null). Stored as Parquet
(columnar: Spark reads only the columns it needs, vectorised, instead of parsing JSON text;
~4x smaller) or, for hand-written ledgers, JSON lines; readers tell them apart by Parquet's
magic. `LedgerWriter` writes Parquet in row groups, so a generator never holds it all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["FIELDS", "SPARK_SCHEMA", "LedgerWriter", "is_parquet", "read_events", "append_event"]

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
