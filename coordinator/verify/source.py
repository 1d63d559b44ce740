"""The Spark Python Data Source `kgclog`: reads a Kafka data dir into one DataFrame.

One input partition per bin of splits (layout.plan_splits: a segment, or an index-aligned
sub-range of a big one; consecutive splits are packed together). Each task yields the rows of
rows.py (V violations, S split summaries, K per-key aggregates merged over its splits). Options:
path, split_bytes, pack_bytes, region_end (JSON dir name -> offset), num_offsets_partitions,
engine (auto | compiled | python), other (the other data dir of a compaction check), side
(after | before), decode (true: decode each key's last record). pyspark is imported only here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from coordinator.verify.layout import Split, pack, plan_splits
from coordinator.verify.rows import SCHEMA_DDL, engine_for, task_rows

__all__ = ["KafkaLogDataSource", "SCHEMA_DDL"]


class _SplitPartition(InputPartition):
    """One Spark task: one or more splits (small segments are packed together, because a
    __consumer_offsets topic has 50 partitions and most of their segments are tiny)."""

    def __init__(self, splits: list[Split]) -> None:
        super().__init__(len(splits))
        self.splits = splits


class _Reader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.path = options["path"]
        self.split_bytes = int(options.get("split_bytes", str(64 << 20)))
        self.pack_bytes = int(options.get("pack_bytes", str(self.split_bytes)))
        self.region_end = json.loads(options.get("region_end", "null"))
        self.log_start = json.loads(options.get("log_start", "null"))
        self.num_offsets_partitions = int(options.get("num_offsets_partitions", "50"))
        self.engine = engine_for(options.get("engine", "auto"))
        self.other = options.get("other") or None
        self.side = options.get("side", "after")
        self.decode = options.get("decode", "false").lower() == "true"

    def partitions(self) -> list[InputPartition]:
        splits = plan_splits(
            self.path,
            split_bytes=self.split_bytes,
            region_end=self.region_end,
            num_offsets_partitions=self.num_offsets_partitions,
            log_start=self.log_start,
        )
        # Biggest first: on 2 cores a large split started last would idle the other core.
        return [_SplitPartition(b) for b in pack(splits, self.pack_bytes)] or [_SplitPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _SplitPartition)  # what partitions() made
        yield from task_rows(
            partition.splits, engine=self.engine, other_root=self.other, side=self.side, decode=self.decode
        )


class KafkaLogDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kgclog"

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(dict(self.options))
