"""The Spark Python Data Source `kgclog`: reads a Kafka data dir into one DataFrame.

One input partition per split (layout.plan_splits: a segment, or an index-aligned sub-range of
a big one). Each split yields Arrow batches of four row kinds, told apart by `kind`:
V = structural violation (exact file, position, offset), S = split summary (how the batch
chain starts and ends, for cross-split checks), K = one key's records in one split and region
(count, first and last occurrence, the last one decoded), B = one batch envelope (only with
option emit_batches, for the compaction checks). Options: path, split_bytes, pack_bytes, region_end (JSON
dir name -> offset), num_offsets_partitions, emit_batches. pyspark is imported only here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from coordinator.verify.layout import Split, plan_splits
from coordinator.verify.scan import decode_latest, scan_split

__all__ = ["KafkaLogDataSource", "SCHEMA_DDL", "ARROW_SCHEMA"]

_COLUMNS: list[tuple[str, pa.DataType, str]] = [
    ("kind", pa.string(), "string"), ("name", pa.string(), "string"),
    ("dir", pa.string(), "string"), ("segment", pa.int64(), "bigint"),
    # V
    ("check", pa.string(), "string"), ("file", pa.string(), "string"),
    ("position", pa.int64(), "bigint"), ("offset", pa.int64(), "bigint"),
    ("message", pa.string(), "string"),
    # S
    ("start", pa.int64(), "bigint"), ("end_pos", pa.int64(), "bigint"),
    ("reached", pa.int64(), "bigint"), ("broken", pa.bool_(), "boolean"),
    ("first_base", pa.int64(), "bigint"), ("first_pos", pa.int64(), "bigint"),
    ("last_offset", pa.int64(), "bigint"), ("last_pos", pa.int64(), "bigint"),
    ("batches", pa.int64(), "bigint"), ("records", pa.int64(), "bigint"),
    ("max_timestamp", pa.int64(), "bigint"), ("log_end", pa.int64(), "bigint"),
    ("entry_pos", pa.int64(), "bigint"), ("entry_offset", pa.int64(), "bigint"),
    # K (last_offset/last_pos/first_pos shared with S)
    ("region", pa.int32(), "int"), ("key", pa.binary(), "binary"),
    ("count", pa.int64(), "bigint"), ("first_offset", pa.int64(), "bigint"),
    ("timestamp", pa.int64(), "bigint"), ("value_hash", pa.int64(), "bigint"),
    ("tombstone", pa.bool_(), "boolean"), ("delete_horizon", pa.int64(), "bigint"),
    ("record_type", pa.int32(), "int"), ("group", pa.string(), "string"),
    ("topic", pa.string(), "string"), ("partition", pa.int32(), "int"),
    ("committed_offset", pa.int64(), "bigint"), ("metadata", pa.string(), "string"),
    ("commit_ts", pa.int64(), "bigint"), ("expire_ts", pa.int64(), "bigint"),
    ("decode_error", pa.string(), "string"),
    # B (position = batch position, offset = base offset, last_offset = last offset)
    ("crc", pa.int64(), "bigint"), ("size", pa.int64(), "bigint"),
    ("producer_id", pa.int64(), "bigint"), ("producer_epoch", pa.int32(), "int"),
    ("base_sequence", pa.int32(), "int"),
]
ARROW_SCHEMA = pa.schema([(n, t) for n, t, _ in _COLUMNS])
SCHEMA_DDL = ", ".join(f"`{n}` {d}" for n, _, d in _COLUMNS)
_NAMES = [n for n, _, _ in _COLUMNS]
_ROWS_PER_BATCH = 65536


_TYPES = {n: t for n, t, _ in _COLUMNS}


def _batch(kind: str, split: Split, cols: dict[str, list]) -> pa.RecordBatch:
    """One Arrow batch of rows of one kind: the given columns, nulls everywhere else."""
    n = len(next(iter(cols.values())))
    fixed = {"kind": pa.array([kind] * n, pa.string()),
             "name": pa.array([split.name] * n, pa.string()),
             "dir": pa.array([split.dir] * n, pa.string()),
             "segment": pa.array([split.segment] * n, pa.int64())}
    arrays = [fixed[c] if c in fixed else
              pa.array(cols[c], _TYPES[c]) if c in cols else pa.nulls(n, _TYPES[c])
              for c in _NAMES]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


def split_batches(split: Split, emit_batches: bool) -> Iterator[pa.RecordBatch]:
    """Every output row of one split, column by column (a dict per row costs too much)."""
    res = scan_split(split, emit_batches=emit_batches)
    if res.violations:
        v = list(zip(*res.violations))
        yield _batch("V", split, {"check": list(v[0]), "file": list(v[1]),
                                  "position": list(v[2]), "offset": list(v[3]),
                                  "message": list(v[4])})
    s = res.summary
    if s is not None:
        yield _batch("S", split, {
            "start": [s.start], "end_pos": [s.end], "reached": [s.reached], "broken": [s.broken],
            "first_base": [s.first_base], "first_pos": [s.first_pos],
            "last_offset": [s.last_offset], "last_pos": [s.last_pos], "batches": [s.batches],
            "records": [s.records], "max_timestamp": [s.max_timestamp], "log_end": [s.log_end],
            "entry_pos": [s.start_entry[0] if s.start_entry else None],
            "entry_offset": [s.start_entry[1] if s.start_entry else None]})
    items = list(res.keys.items())
    for i in range(0, len(items), _ROWS_PER_BATCH):
        chunk = items[i:i + _ROWS_PER_BATCH]
        cols: dict[str, list] = {"region": [k[0] for k, _ in chunk],
                                 "key": [k[1] for k, _ in chunk]}
        for j, name in enumerate(("count", "first_offset", "first_pos", "last_offset",
                                  "last_pos", "timestamp", "value_hash", "tombstone",
                                  "delete_horizon")):
            cols[name] = [a[j] for _, a in chunk]
        if split.is_offsets_topic:
            decoded = [decode_latest(k[1], a[9]) for k, a in chunk]
            for name in decoded[0]:
                cols[name] = [d[name] for d in decoded]
        yield _batch("K", split, cols)
    for i in range(0, len(res.batches), _ROWS_PER_BATCH):
        chunk = res.batches[i:i + _ROWS_PER_BATCH]
        t = list(zip(*chunk))
        yield _batch("B", split, {
            "position": list(t[0]), "offset": list(t[1]), "last_offset": list(t[2]),
            "crc": list(t[3]), "size": list(t[4]), "count": list(t[5]),
            "producer_id": list(t[6]), "producer_epoch": list(t[7]),
            "base_sequence": list(t[8]), "region": list(t[9]), "delete_horizon": list(t[10])})


class _SplitPartition(InputPartition):
    """One Spark task: one or more splits (small segments are packed together, because a
    __consumer_offsets topic has 50 partitions and most of their segments are tiny)."""

    def __init__(self, splits: list[Split]) -> None:
        super().__init__(len(splits))
        self.splits = splits


def pack(splits: list[Split], pack_bytes: int) -> list[list[Split]]:
    """Largest first into bins of about `pack_bytes` (a split bigger than that is alone)."""
    bins: list[list[Split]] = []
    sizes: list[int] = []
    for s in sorted(splits, key=lambda s: -(s.end - s.start)):
        n = s.end - s.start
        if sizes and sizes[-1] + n <= pack_bytes:
            bins[-1].append(s)
            sizes[-1] += n
        else:
            bins.append([s])
            sizes.append(n)
    return bins


class _Reader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.path = options["path"]
        self.split_bytes = int(options.get("split_bytes", str(64 << 20)))
        self.pack_bytes = int(options.get("pack_bytes", str(self.split_bytes)))
        self.region_end = json.loads(options.get("region_end", "null"))
        self.num_offsets_partitions = int(options.get("num_offsets_partitions", "50"))
        self.emit_batches = options.get("emit_batches", "false").lower() == "true"

    def partitions(self) -> list[InputPartition]:
        splits = plan_splits(self.path, split_bytes=self.split_bytes, region_end=self.region_end,
                             num_offsets_partitions=self.num_offsets_partitions)
        # Biggest first: on 2 cores a large split started last would idle the other core.
        return [_SplitPartition(b) for b in pack(splits, self.pack_bytes)] or [_SplitPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        for split in partition.splits:  # type: ignore[attr-defined]
            yield from split_batches(split, self.emit_batches)


class KafkaLogDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kgclog"

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(dict(self.options))
