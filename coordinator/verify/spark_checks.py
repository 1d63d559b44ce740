"""The Spark job: read the logs with the `kgclog` source and express the key-level checks as joins.

Stage 1 (the only pass over the bytes) runs the scan in the workers and is persisted: structure
(S1-S6, G1) and the batch-envelope checks (C4/C5, against the other log, envelopes.py) come out
as violation rows there, with no shuffle; split summaries are collected and joined across
splits on the driver by rules.continuity. Transactional records whose marker lies beyond their
split count only if their producer's next marker (a window over the markers) is a COMMIT; a log
without transactions skips that step. Stage 2 groups the per-split key aggregates per key
(latest, first, count) and checks them with joins: against the replayed ledger (G2/G3, the
ledger read as Parquet), against the before image (C1-C3, C6). Violation locations are exact
(file, position, offset) and identical to oracle.py's, which the tests assert. The stage-2
joins themselves are in spark_key_checks.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from coordinator.verify.layout import active_bases, segment_path
from coordinator.verify.rows import DECODED, SCHEMA_DDL
from coordinator.verify.rules import Report, continuity, offsets_dir
from coordinator.verify.spark_key_checks import AFTER, compaction_checks, latest_struct, offset_checks

__all__ = ["run", "load"]


def load(
    spark: SparkSession,
    path: str,
    *,
    region_end: dict[str, int] | None,
    split_bytes: int,
    num_partitions: int,
    pack_bytes: int | None = None,
    engine: str = "auto",
    other: str | None = None,
    side: str = "after",
    decode: bool = False,
) -> DataFrame:
    reader = (
        spark.read.format("kgclog")
        .schema(SCHEMA_DDL)
        .option("path", path)
        .option("split_bytes", str(split_bytes))
        .option("pack_bytes", str(pack_bytes or split_bytes))
        .option("num_offsets_partitions", str(num_partitions))
        .option("engine", engine)
        .option("side", side)
        .option("decode", "true" if decode else "false")
    )
    if region_end is not None:
        reader = reader.option("region_end", json.dumps(region_end))
    if other is not None:
        reader = reader.option("other", other)
    return reader.load().persist(StorageLevel.MEMORY_AND_DISK)


def _counted(df: DataFrame, transactions: bool) -> DataFrame:
    """The K rows of records that count (txn.py): plain and locally resolved rows, and deferred
    rows whose producer's next marker (the nearest M row at a higher offset) is a COMMIT."""
    K = df.where(F.col("kind") == "K")
    if not transactions:
        return K
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
    """Per (name, key) of the after log's counted K rows, in one aggregation (persisted: both
    check groups use it): the latest record, decoded (l), and over region 0 only: count, first
    (f0), latest (l0)."""
    first = F.struct(
        F.col("first_offset").alias("offset"), F.col("first_segment").alias("segment"), F.col("first_pos").alias("pos")
    )
    K = K.withColumn("_r0", F.col("region") == 0)
    return (
        K.groupBy("name", "key")
        .agg(
            F.max_by(latest_struct(*DECODED), "last_offset").alias("l"),
            F.sum(F.when(F.col("_r0"), F.col("count"))).alias("count0"),
            F.min_by(F.when(F.col("_r0"), first), F.when(F.col("_r0"), F.col("first_offset"))).alias("f0"),
            F.max_by(F.when(F.col("_r0"), latest_struct()), F.when(F.col("_r0"), F.col("last_offset"))).alias("l0"),
        )
        .persist(StorageLevel.MEMORY_AND_DISK)
    )


def _summaries(dfs: list[DataFrame]) -> list[tuple[list[dict[str, Any]], dict[str, str], int, dict[str, int]]]:
    """One job over every scanned log (it also fills their caches): the split summaries.
    Per log: (summaries, dir by name, max timestamp, stats)."""
    sel = None
    for i, df in enumerate(dfs):
        part = df.where(F.col("kind") == "S").withColumn("_side", F.lit(i))
        sel = part if sel is None else sel.unionByName(part)
    rows = [r.asDict() for r in sel.collect()] if sel is not None else []
    out = []
    for i in range(len(dfs)):
        summaries: list[dict[str, Any]] = []
        dirs: dict[str, str] = {}
        max_ts = -1
        stats = {"bytes": 0, "records": 0, "batches": 0, "splits": 0, "txn_batches": 0}
        for d in rows:
            if d["_side"] != i:
                continue
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


def run(
    spark: SparkSession,
    data_dir: str,
    *,
    before: str | None = None,
    ledger: str | None = None,
    cleaned_at_ms: int | None = None,
    num_partitions: int = 50,
    split_bytes: int = 64 << 20,
    pack_bytes: int | None = None,
    max_examples: int = 1000,
    engine: str = "auto",
    phase: Callable[[str], None] = lambda name: None,
) -> Report:
    """Two Spark jobs: stage 1 (scan, structure, envelopes), then every key-level check in one
    union (with the scan's violation rows, so every check is capped the same way)."""
    report = Report()
    t0 = time.perf_counter()
    region_end = active_bases(data_dir) if before else None
    opts: dict[str, Any] = dict(
        region_end=region_end,
        split_bytes=split_bytes,
        num_partitions=num_partitions,
        pack_bytes=pack_bytes,
        engine=engine,
    )
    phase("scan")
    post = load(spark, data_dir, other=before, side="after", decode=True, **opts)
    pre = load(spark, before, other=data_dir, side="before", **opts) if before else None
    logs = [post] + ([pre] if pre is not None else [])
    results = _summaries(logs)
    dirs: list[dict[str, str]] = []
    leos: list[dict[str, int]] = []
    for summaries, names, _, _ in results:
        viols, leo = continuity(summaries)
        for v in viols:
            report.add(*v)
        by_dir = {d: n for n, d in names.items()}
        leos.append({by_dir[d]: v for d, v in leo.items()})
        dirs.append(names)
    _, _, max_ts, stats = results[0]
    report.stats.update(stats)
    t1 = time.perf_counter()
    phase("keys")
    keys = _post_keys(_counted(post, stats["txn_batches"] > 0))
    frames = [offset_checks(keys, spark, ledger, placement=num_partitions > 0)]
    if pre is not None:
        _, _, pre_max, pre_stats = results[1]
        report.stats.update({f"before_{k}": v for k, v in pre_stats.items()})
        now = cleaned_at_ms if cleaned_at_ms is not None else max(max_ts, pre_max)
        frames.append(compaction_checks(_counted(pre, pre_stats["txn_batches"] > 0), keys, now))
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
    for side, df in enumerate(logs):
        frames.append(
            df.where(F.col("kind") == "V").select(
                "check", F.lit(side).alias("side"), "name", "segment", "file", "position", "offset", "message"
            )
        )
    viol = frames[0]
    for f in frames[1:]:
        viol = viol.unionByName(f)
    w = Window.partitionBy("check").orderBy("file", "name", "segment", "position", "offset")
    capped = (
        viol.withColumn("_n", F.row_number().over(w))
        .withColumn("_total", F.count(F.lit(1)).over(Window.partitionBy("check")))
        .where((F.col("_n") <= max_examples) | F.col("check").startswith("_"))
    )
    _collect(capped.collect(), report, dirs, data_dir, num_partitions, max_examples)
    report.stats["phases"] = {"stage1_scan_s": round(t1 - t0, 3), "stage2_keys_s": round(time.perf_counter() - t1, 3)}
    for df in logs + [keys]:
        df.unpersist()
    return report


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
