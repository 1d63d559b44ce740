"""The Spark job: read the logs with the `kgclog` source and express the key-level checks as joins.

One Spark job. The scan (the only pass over the bytes) runs in the workers into a local
checkpoint that every consumer reads: structure (S1-S6, G1) and the batch-envelope checks
(C4/C5, against the other log, envelopes.py) come out as violation rows, and split summaries
as `_S` rows, both collected with the key-level results and joined across splits on the driver
by rules.continuity. Transactional records whose marker lies beyond their split count only if
their producer's next marker (a window over the markers) is a COMMIT. The key-level checks group
the per-split key aggregates per key (latest, first, count) and check them with joins: against
the replayed ledger (G2/G3, the ledger read as Parquet), against the before image (C1-C3, C6).
Violation locations are exact (file, position, offset) and identical to oracle.py's, which the
tests assert. The key-level joins themselves are in spark_key_checks.py."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType
from pyspark.sql.window import Window

from coordinator.verify.final_keys import AFTER_SCHEMA, BEFORE_SCHEMA
from coordinator.verify.layout import segment_path
from coordinator.verify.ledger import expected_schema, replay_table
from coordinator.verify.local_scan import LocalScan, LogScan, local_cores, logs_to_scan
from coordinator.verify.rows import DECODED, SCHEMA_DDL
from coordinator.verify.rules import Report, continuity, offsets_dir
from coordinator.verify.session import register
from coordinator.verify.share_checks import SHARE_PREFIX, share_violations
from coordinator.verify.spark_key_checks import AFTER, compaction_checks, latest_struct, offset_checks
from coordinator.verify.spark_share_rows import latest_share, share_rows

__all__ = ["run", "load"]


def load(
    spark: SparkSession,
    log: LogScan,
    *,
    split_bytes: int,
    num_partitions: int,
    pack_bytes: int | None = None,
    engine: str = "auto",
) -> DataFrame:
    """One log scanned by the executors, through the `kgclog` data source."""
    reader = (
        spark.read.format("kgclog")
        .schema(SCHEMA_DDL)
        .option("path", log.path)
        .option("split_bytes", str(split_bytes))
        .option("pack_bytes", str(pack_bytes or split_bytes))
        .option("num_offsets_partitions", str(num_partitions))
        .option("engine", engine)
        .option("side", log.side)
        .option("decode", "true" if log.decode else "false")
    )
    if log.region_end is not None:
        reader = reader.option("region_end", json.dumps(log.region_end))
    if log.other is not None:
        reader = reader.option("other", log.other)
    if log.log_start:
        reader = reader.option("log_start", json.dumps(log.log_start))
    # Every consumer of the scan (split summaries and violations for the driver, the key-level
    # checks) reads this local checkpoint, in one job: the scan runs once, its rows are kept as
    # they are (no columnar cache to build), and the optimizer pushes nothing below it.
    return reader.load().localCheckpoint(eager=False, storageLevel=StorageLevel.MEMORY_AND_DISK_DESER)


def _parquet(spark: SparkSession, files: list[str], schema: str | StructType) -> DataFrame:
    """A LocalScan's files, read by Spark's own reader (every consumer reads the columns it
    needs; nothing to cache)."""
    if not files:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).parquet(*files)


_KEYS_SCHEMA = {"after": from_arrow_schema(AFTER_SCHEMA), "before": from_arrow_schema(BEFORE_SCHEMA)}
_EXPECTED_SCHEMA = from_arrow_schema(expected_schema())


def _counted(df: DataFrame) -> DataFrame:
    """The K rows of records that count (txn.py): plain and locally resolved rows, and deferred
    rows whose producer's next marker (the nearest M row at a higher offset) is a COMMIT."""
    K = df.where(F.col("kind") == "K")
    kind = F.col("kind")
    t = df.where((kind == "M") | ((kind == "K") & F.col("producer_id").isNotNull()))
    # Descending, so "the nearest marker above" is a growing frame (linear, not quadratic).
    w = (
        Window.partitionBy("name", "producer_id")
        .orderBy(F.coalesce("last_offset", "offset").desc())
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    committed = (
        t.withColumn("_commit", F.last("commit", ignorenulls=True).over(w))
        .where((kind == "K") & F.col("_commit"))
        .drop("_commit")
    )
    return K.where(F.col("producer_id").isNull()).unionByName(committed)


def _post_keys(K: DataFrame) -> DataFrame:
    """Per (name, key) of the after log's counted K rows, in one aggregation (both check groups
    use it): the latest record, decoded (l), and over region 0 only: count, first
    (f0), latest (l0)."""
    first = F.struct(
        F.col("first_offset").alias("offset"), F.col("first_segment").alias("segment"), F.col("first_pos").alias("pos")
    )
    K = K.withColumn("_r0", F.col("region") == 0)
    return K.groupBy("name", "key").agg(
        F.max_by(latest_struct(*DECODED), "last_offset").alias("l"),
        F.sum(F.when(F.col("_r0"), F.col("count"))).alias("count0"),
        F.min_by(F.when(F.col("_r0"), first), F.when(F.col("_r0"), F.col("first_offset"))).alias("f0"),
        F.max_by(F.when(F.col("_r0"), latest_struct()), F.when(F.col("_r0"), F.col("last_offset"))).alias("l0"),
    )


def _pre_keys(K: DataFrame) -> DataFrame:
    """Per (name, key) of the before log's counted K rows: the latest record in region 0 (P)."""
    return K.where(F.col("region") == 0).groupBy("name", "key").agg(F.max_by(latest_struct(), "last_offset").alias("P"))


_S_FIELDS = (
    "dir",
    "segment",
    "start",
    "end_pos",
    "reached",
    "broken",
    "first_base",
    "first_pos",
    "last_offset",
    "last_pos",
    "batches",
    "records",
    "max_timestamp",
    "log_end",
    "entry_pos",
    "entry_offset",
    "txn_batches",
)


def _driver_rows(df: DataFrame, side: int) -> DataFrame:
    """The scan's V rows as violation rows, and its S rows (split summaries) as rows of check
    `_S` with the summary as JSON in `message`: both reach the driver in the one collect."""
    kind = F.col("kind")
    v = df.where(kind == "V").select(
        "check", F.lit(side).alias("side"), "name", "segment", "file", "position", "offset", "message"
    )
    s = df.where(kind == "S").select(
        F.lit("_S").alias("check"),
        F.lit(side).alias("side"),
        "name",
        "segment",
        F.lit(None).cast("string").alias("file"),
        F.lit(None).cast("bigint").alias("position"),
        F.lit(None).cast("bigint").alias("offset"),
        F.to_json(F.struct(*_S_FIELDS)).alias("message"),
    )
    return v.unionByName(s)


def _summaries(
    rows: list[dict[str, Any]], sides: int
) -> list[tuple[list[dict[str, Any]], dict[str, str], int, dict[str, int]]]:
    """Per log, from the `_S` rows: (summaries, dir by name, max timestamp, stats)."""
    out = []
    for i in range(sides):
        summaries: list[dict[str, Any]] = []
        dirs: dict[str, str] = {}
        max_ts = -1
        stats = {"bytes": 0, "records": 0, "batches": 0, "splits": 0, "txn_batches": 0}
        for r in rows:
            if r["side"] != i:
                continue
            d = json.loads(r["message"])
            for f in _S_FIELDS:
                d.setdefault(f, None)  # to_json leaves nulls out
            d["name"] = r["name"]
            dirs[d["name"]] = d["dir"]
            d["end"] = d["end_pos"]
            d["start_entry"] = None if d["entry_pos"] is None else (d["entry_pos"], d["entry_offset"])
            summaries.append(d)
            max_ts = max(max_ts, d["max_timestamp"])
            stats["bytes"] += d["end_pos"] - d["start"]
            stats["records"] += d["records"]
            stats["batches"] += d["batches"]
            stats["txn_batches"] += d["txn_batches"] or 0
            stats["splits"] += 1
        out.append((summaries, dirs, max_ts, stats))
    return out


@dataclass
class _Inputs:
    """What the checks read, however the logs were scanned: per log its V and S rows (other
    kinds are ignored), the after log's per-key rows (name, key, l, count0, f0, l0), the before
    log's (name, key, P) and the replayed ledger."""

    rows: list[DataFrame]
    keys: DataFrame
    pre_keys: DataFrame | None
    expected: DataFrame | None


def _from_executors(spark: SparkSession, logs: list[LogScan], ledger: str | None, opts: dict[str, Any]) -> _Inputs:
    """The executors scan (the `kgclog` source); Spark resolves transactions and folds the
    per-split aggregates per key; the driver replays the ledger."""
    register(spark)
    rows = [load(spark, log, **opts) for log in logs]
    return _Inputs(
        rows,
        _post_keys(_counted(rows[0])),
        _pre_keys(_counted(rows[1])) if len(rows) > 1 else None,
        spark.createDataFrame(replay_table(ledger)) if ledger is not None else None,
    )


def _from_local(spark: SparkSession, scan: LocalScan) -> _Inputs:
    """A LocalScan's files: the per-key rows are final (final_keys.py)."""
    sides = [log.side for log in scan.logs]
    keys = [_parquet(spark, scan.files(side, "keys"), _KEYS_SCHEMA[side]) for side in sides]
    expected = scan.expected()
    return _Inputs(
        [_parquet(spark, scan.files(side, "rows"), SCHEMA_DDL) for side in sides],
        keys[0],
        keys[1] if len(keys) > 1 else None,
        _parquet(spark, [expected], _EXPECTED_SCHEMA) if expected is not None else None,
    )


def run(
    spark: SparkSession,
    data_dir: str,
    *,
    before: str | None = None,
    ledger: str | None = None,
    cleaned_at_ms: int | None = None,
    num_partitions: int = 50,
    share_partitions: int = 50,
    split_bytes: int = 64 << 20,
    pack_bytes: int | None = None,
    max_examples: int = 1000,
    engine: str = "auto",
    phase: Callable[[str], None] = lambda name: None,
    scan_in: str = "auto",
    scan: LocalScan | None = None,
) -> Report:
    """Every log is scanned once: by a LocalScan (`scan`, already started by the caller, or
    one started here for a local master unless `scan_in` is "executors") or by the executors
    through the `kgclog` source. Then one Spark job runs the key-level checks and collects the
    split summaries and scan violations, which the driver joins across splits (continuity, log
    end offsets). A caller's `scan` must be of logs_to_scan(data_dir, before) and `ledger`."""
    t0 = time.perf_counter()
    opts: dict[str, Any] = dict(
        split_bytes=split_bytes, num_partitions=num_partitions, pack_bytes=pack_bytes, engine=engine
    )
    logs = logs_to_scan(data_dir, before)
    cores = local_cores(spark.sparkContext.master or "")
    with ExitStack() as stack:
        if scan is None and cores is not None and scan_in != "executors":
            scan = stack.enter_context(LocalScan(logs, workers=cores, ledger=ledger, **opts))
        if scan is not None:
            phase("scan")
            inputs = _from_local(spark, scan)
            t_scan = time.perf_counter()
            phase("checks")
        else:
            phase("scan and checks")
            inputs = _from_executors(spark, logs, ledger, opts)
            t_scan = t0
        report = _job(spark, inputs, data_dir, cleaned_at_ms, num_partitions, share_partitions, max_examples, phase)
    report.stats["phases"] = dict(report.stats["phases"], scan_s=round(t_scan - t0, 3))
    return report


def _job(
    spark: SparkSession,
    inputs: _Inputs,
    data_dir: str,
    cleaned_at_ms: int | None,
    num_partitions: int,
    share_partitions: int,
    max_examples: int,
    phase: Callable[[str], None],
) -> Report:
    report = Report()
    t0 = time.perf_counter()
    logs = inputs.rows
    frames = [offset_checks(inputs.keys, inputs.expected, placement=num_partitions > 0), share_rows(inputs.keys)]
    if inputs.pre_keys is not None:
        now: int | DataFrame = cleaned_at_ms if cleaned_at_ms is not None else _max_timestamp(logs)
        compacted = ~F.col("name").startswith(SHARE_PREFIX)  # __share_group_state is pruned, not compacted
        frames.append(compaction_checks(inputs.pre_keys.where(compacted), inputs.keys.where(compacted), now))
    frames += [_driver_rows(df, side) for side, df in enumerate(logs)]
    viol = frames[0]
    for f in frames[1:]:
        viol = viol.unionByName(f)
    w = Window.partitionBy("check").orderBy("file", "name", "segment", "position", "offset")
    capped = (
        viol.withColumn("_n", F.row_number().over(w))
        .withColumn("_total", F.count(F.lit(1)).over(Window.partitionBy("check")))
        .where((F.col("_n") <= max_examples) | F.col("check").startswith("_"))
    )
    rows = capped.collect()
    t1 = time.perf_counter()
    phase("driver checks")
    results = _summaries([r.asDict() for r in rows if r["check"] == "_S"], len(logs))
    dirs: list[dict[str, str]] = []
    leos: list[dict[str, int]] = []
    for summaries, names, _, _ in results:
        viols, leo = continuity(summaries)
        for v in viols:
            report.add(*v)
        by_dir = {d: n for n, d in names.items()}
        leos.append({by_dir[d]: v for d, v in leo.items()})
        dirs.append(names)
    report.stats.update(results[0][3])
    if len(logs) > 1:
        report.stats.update({f"before_{k}": v for k, v in results[1][3].items()})
        leo, pre_leo = leos
        for name in sorted(set(pre_leo) | set(leo)):
            if pre_leo.get(name) != leo.get(name):
                report.add(
                    "C5",
                    dirs[0].get(name, f"{data_dir.rstrip('/')}/{name}"),
                    None,
                    leo.get(name),
                    f"log end offset changed from {pre_leo.get(name)}",
                )
    _collect([r for r in rows if r["check"] not in ("_S", "_H")], report, dirs, data_dir, num_partitions, max_examples)
    share = [latest_share(r, dirs[AFTER]) for r in rows if r["check"] == "_H"]
    for v in share_violations(share, share_partitions):
        report.add(*v)
    report.stats["phases"] = {"spark_job_s": round(t1 - t0, 3), "driver_s": round(time.perf_counter() - t1, 3)}
    return report


def _max_timestamp(logs: list[DataFrame]) -> DataFrame:
    """One row, `_now`: the newest record timestamp of every log (the default cleaning time)."""
    ts = None
    for df in logs:
        part = df.where(F.col("kind") == "S").select("max_timestamp")
        ts = part if ts is None else ts.unionByName(part)
    assert ts is not None
    return ts.agg(F.coalesce(F.max("max_timestamp"), F.lit(-1)).alias("_now"))


def _collect(
    rows: list, report: Report, dirs: list[dict[str, str]], data_dir: str, num_partitions: int, max_examples: int
) -> None:
    from coordinator.groups.placement import partition_for

    totals: dict[str, int] = {}
    for r in rows:
        check = r["check"]
        if check == "_G4":
            want = f"__consumer_offsets-{partition_for(r['message'], num_partitions)}"
            if want != r["name"]:
                report.add(
                    "G4",
                    dirs[AFTER][r["name"]],
                    None,
                    None,
                    f"group {r['message']!r} has records here but belongs in {want}",
                )
        elif check == "_G2":
            report.add(
                "G2",
                offsets_dir(data_dir, r["file"], num_partitions),
                None,
                None,
                f"acknowledged commit ({r['file']}, {r['message']}, {r['position']}) -> "
                f"{r['offset']} is missing from the log",
            )
        else:
            file = r["file"] or segment_path(dirs[r["side"]][r["name"]], r["segment"])
            report.add(check, file, r["position"], r["offset"], r["message"])
            totals[check] = r["_total"]
    for check, n in totals.items():  # totals beyond the examples kept
        report.counts[check] += n - min(n, max_examples)
