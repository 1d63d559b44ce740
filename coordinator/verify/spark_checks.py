"""The Spark job: read the logs with the `kgclog` source and express S/C/G checks as joins.

Stage 1 (the only pass over the bytes) runs scan.py in the workers and is persisted; violations
and split summaries are collected (they are small) and joined across splits on the driver by
rules.continuity. Stage 2 groups per-split key aggregates per key (latest, first, count) and
checks them with joins: against the replayed ledger (G2/G3), against the before image (C1-C6),
batch envelopes with anti-joins (C4/C5). Violation locations are exact (file, position, offset)
and identical to oracle.py's, which the tests assert.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from coordinator.verify.layout import active_bases
from coordinator.verify.rules import Report, continuity, offsets_dir

__all__ = ["run"]

_VCOLS = ["check", "file", "position", "offset", "message"]


def _file(dir_col: Column, seg_col: Column) -> Column:
    return F.concat(dir_col, F.lit("/"), F.lpad(seg_col.cast("string"), 20, "0"), F.lit(".log"))


def load(spark: SparkSession, path: str, *, region_end: dict[str, int] | None,
         emit_batches: bool, split_bytes: int, num_partitions: int,
         pack_bytes: int | None = None) -> DataFrame:
    from coordinator.verify.source import SCHEMA_DDL
    reader = (spark.read.format("kgclog").schema(SCHEMA_DDL).option("path", path)
              .option("split_bytes", str(split_bytes))
              .option("pack_bytes", str(pack_bytes or split_bytes))
              .option("num_offsets_partitions", str(num_partitions))
              .option("emit_batches", "true" if emit_batches else "false"))
    if region_end is not None:
        reader = reader.option("region_end", json.dumps(region_end))
    return reader.load().persist(StorageLevel.MEMORY_AND_DISK)


def _last_struct() -> Column:
    return F.struct(F.col("last_offset").alias("offset"), "segment", F.col("last_pos").alias("pos"),
                    "dir", "timestamp", "value_hash", "tombstone", "delete_horizon", "record_type",
                    "group", "topic", "partition", "committed_offset", "metadata", "decode_error")


def _viol(df: DataFrame, check: str, loc: str, message: Column | str) -> DataFrame:
    """Violation rows located at struct column `loc` (offset, segment, pos, dir)."""
    msg = F.lit(message) if isinstance(message, str) else message
    return df.select(F.lit(check).alias("check"),
                     _file(F.col(f"{loc}.dir"), F.col(f"{loc}.segment")).alias("file"),
                     F.col(f"{loc}.pos").alias("position"), F.col(f"{loc}.offset").alias("offset"),
                     msg.alias("message"))


def _offsets(df: DataFrame, spark: SparkSession, ledger: str | None) -> tuple[list[DataFrame], DataFrame, DataFrame | None]:
    K = df.where((F.col("kind") == "K") & F.col("name").startswith("__consumer_offsets-"))
    overall = K.groupBy("name", "key").agg(F.max_by(_last_struct(), "last_offset").alias("l"))
    out = [_viol(overall.where(F.col("l.decode_error").isNotNull()), "G1", "l",
                 F.concat(F.lit("latest record does not decode: "), F.col("l.decode_error")))]
    ok = overall.where(F.col("l.decode_error").isNull())
    groups = ok.where(F.col("l.group").isNotNull()).select(
        "name", F.col("l.dir").alias("dir"), F.col("l.group").alias("group")).distinct()
    commits = ok.where(F.col("l.record_type").isin(0, 1)).select(
        "name", F.col("l.group").alias("group"), F.col("l.topic").alias("topic"),
        F.col("l.partition").alias("partition"), "l")
    tombs = ok.where((F.col("l.record_type") == 2) & F.col("l.tombstone")).select(
        "name", F.col("l.group").alias("group"), F.col("l.offset").alias("tomb_offset"))
    g3 = commits.where(~F.col("l.tombstone")).join(tombs, ["name", "group"]).where(
        F.col("l.offset") < F.col("tomb_offset"))
    out.append(_viol(g3, "G3", "l", "live offset older than its group's tombstone"))
    missing = None
    if ledger is not None:
        lg = spark.read.schema("op string, seq long, `group` string, topic string, partition int, "
                               "offset long, metadata string, ack_ms long").json(ledger)
        tp = ["group", "topic", "partition"]
        c = lg.where(F.col("op") == "commit").groupBy(*tp).agg(F.max_by(
            F.struct("seq", "offset", F.coalesce("metadata", F.lit("")).alias("metadata")),
            "seq").alias("c"))
        do = lg.where(F.col("op") == "delete_offset").groupBy(*tp).agg(F.max("seq").alias("dseq"))
        dg = lg.where(F.col("op") == "delete_group").groupBy("group").agg(F.max("seq").alias("gseq"))
        exp = (c.join(do, tp, "left").join(dg, ["group"], "left")
               .where((F.col("c.seq") > F.coalesce("dseq", F.lit(-1)))
                      & (F.col("c.seq") > F.coalesce("gseq", F.lit(-1)))))
        j = exp.join(commits, tp, "full_outer")
        has_exp, has_act = F.col("c").isNotNull(), F.col("l").isNotNull()
        live = has_act & ~F.col("l.tombstone")
        lost = j.where(has_exp & ~F.coalesce(live, F.lit(False)))
        out.append(_viol(lost.where(has_act), "G2", "l",
                         "acknowledged commit is missing (log has a tombstone)"))
        missing = lost.where(~has_act).select(*tp, F.col("c.offset").alias("offset"))
        differ = j.where(has_exp & live & (
            (F.col("c.offset") != F.col("l.committed_offset"))
            | (F.col("c.metadata") != F.coalesce("l.metadata", F.lit("")))))
        out.append(_viol(differ, "G2", "l", F.concat(
            F.lit("log has offset "), F.col("l.committed_offset").cast("string"),
            F.lit(", acknowledged "), F.col("c.offset").cast("string"))))
        out.append(_viol(j.where(~has_exp & live), "G2", "l",
                         "committed offset never acknowledged or deleted"))
    return out, groups, missing


def _region0(df: DataFrame) -> DataFrame:
    K = df.where((F.col("kind") == "K") & (F.col("region") == 0))
    first = F.struct(F.col("first_offset").alias("offset"), "segment",
                     F.col("first_pos").alias("pos"), "dir")
    return K.groupBy("name", "key").agg(F.sum("count").alias("count"),
                                        F.min_by(first, "first_offset").alias("f"),
                                        F.max_by(_last_struct(), "last_offset").alias("l"))


def _compaction(pre: DataFrame, post: DataFrame, now: int) -> list[DataFrame]:
    p, a = _region0(pre).alias("p"), _region0(post).alias("a")
    j = p.join(a, (F.col("p.name") == F.col("a.name")) & F.col("p.key").eqNullSafe(F.col("a.key")),
               "full_outer").select(F.col("p.l").alias("P"), F.col("a.count").alias("count"),
                                    F.col("a.f").alias("f"), F.col("a.l").alias("A"))
    P, A = F.col("P"), F.col("A")
    expired = (F.col("P.tombstone") & F.col("P.delete_horizon").isNotNull()
               & (F.col("P.delete_horizon") <= now))
    same_val = ((F.col("A.value_hash") == F.col("P.value_hash"))
                & (F.col("A.tombstone") == F.col("P.tombstone")))
    out = [
        _viol(j.where(A.isNotNull() & F.col("A.tombstone") & (
            F.col("A.delete_horizon").isNull() | (F.col("A.delete_horizon") <= now))), "C6", "A",
            "kept tombstone has no delete horizon or it has passed"),
        _viol(j.where(F.col("count") > 1), "C3", "f", "older record of the key survived"),
        _viol(j.where(A.isNotNull() & P.isNull()), "C1", "A", "record is not in the before log"),
        _viol(j.where(A.isNotNull() & P.isNotNull() & (F.col("A.offset") != F.col("P.offset"))),
              "C1", "A", F.when(same_val, F.concat(F.lit("renumbered: was offset "),
                                                  F.col("P.offset").cast("string")))
              .otherwise(F.lit("surviving record is not the key's latest"))),
        _viol(j.where(A.isNotNull() & P.isNotNull() & (F.col("A.offset") == F.col("P.offset"))
                      & ~same_val), "C1", "A", "value changed by cleaning"),
        _viol(j.where(P.isNotNull() & ~F.coalesce(expired, F.lit(False)) & (
            A.isNull() | ((F.col("P.offset") != F.col("f.offset"))
                          & (F.col("P.offset") != F.col("A.offset"))))),
              "C2", "P", "latest record of the key was removed"),
    ]
    loc = F.struct(F.col("offset"), "segment", F.col("position").alias("pos"), "dir")
    env = ["name", "offset", "last_offset", "producer_id", "producer_epoch", "base_sequence"]
    preB = pre.where(F.col("kind") == "B")
    postB = post.where(F.col("kind") == "B")
    c5 = postB.where(F.col("region") == 0).join(preB.select(*env), env, "left_anti")
    out.append(_viol(c5.select(loc.alias("b")), "C5", "b",
                     "batch envelope (base, last, producer) not in before"))
    ident = ["last_offset", "crc", "size"]
    b1 = [x.where(F.col("region") == 1).select("name", "offset", F.struct(*ident).alias("id"),
                                                loc.alias("loc")) for x in (preB, postB)]
    j4 = b1[0].alias("x").join(b1[1].alias("y"), ["name", "offset"], "full_outer")
    out.append(_viol(j4.where(F.col("y.loc").isNull()).select(F.col("x.loc").alias("b")), "C4",
                     "b", "uncleanable batch missing after cleaning"))
    out.append(_viol(j4.where(F.col("y.loc").isNotNull() & (
        F.col("x.loc").isNull() | (F.col("x.id") != F.col("y.id")))).select(
        F.col("y.loc").alias("b")), "C4", "b", "uncleanable batch differs from before"))
    return out


def _stage1(dfs: list[DataFrame], report: Report) -> list[tuple[dict[str, int], dict[str, str], int, dict]]:
    """One job over every scanned log (it also fills their caches): structural violations and
    split summaries. Per log: (leo by name, dir by name, max timestamp, stats)."""
    sel = None
    for i, df in enumerate(dfs):
        part = df.where(F.col("kind").isin("V", "S")).withColumn("_side", F.lit(i))
        sel = part if sel is None else sel.unionByName(part)
    rows = sel.collect() if sel is not None else []
    out = []
    for i in range(len(dfs)):
        summaries, dirs, max_ts = [], {}, -1
        stats = {"bytes": 0, "records": 0, "batches": 0, "splits": 0}
        for r in rows:
            if r["_side"] != i:
                continue
            d = r.asDict()
            dirs[d["name"]] = d["dir"]
            if d["kind"] == "V":
                report.add(d["check"], d["file"], d["position"], d["offset"], d["message"])
                continue
            d["end"] = d["end_pos"]
            d["start_entry"] = (None if d["entry_pos"] is None
                                else (d["entry_pos"], d["entry_offset"]))
            summaries.append(d)
            max_ts = max(max_ts, d["max_timestamp"])
            stats["bytes"] += d["end_pos"] - d["start"]
            stats["records"] += d["records"]
            stats["batches"] += d["batches"]
            stats["splits"] += 1
        viols, leo = continuity(summaries)
        for v in viols:
            report.add(*v)
        names = {d: n for n, d in dirs.items()}
        out.append(({names[d]: v for d, v in leo.items()}, dirs, max_ts, stats))
    return out


def run(spark: SparkSession, data_dir: str, *, before: str | None = None,
        ledger: str | None = None, cleaned_at_ms: int | None = None, num_partitions: int = 50,
        split_bytes: int = 64 << 20, pack_bytes: int | None = None, max_examples: int = 1000,
        phase: Callable[[str], None] = lambda name: None) -> Report:
    """Two Spark jobs: stage 1 (scan + structure), then every key-level check in one union."""
    report = Report()
    t0 = time.perf_counter()
    region_end = active_bases(data_dir) if before else None
    opts: dict[str, Any] = dict(region_end=region_end, emit_batches=before is not None,
                                split_bytes=split_bytes, num_partitions=num_partitions,
                                pack_bytes=pack_bytes)
    phase("scan")
    post = load(spark, data_dir, **opts)
    pre = load(spark, before, **opts) if before else None
    results = _stage1([post] + ([pre] if pre is not None else []), report)
    leo, dirs, max_ts, report.stats = results[0]
    t1 = time.perf_counter()
    frames, groups, missing = _offsets(post, spark, ledger)
    if pre is not None:
        pre_leo, _, pre_max, pre_stats = results[1]
        report.stats.update({f"before_{k}": v for k, v in pre_stats.items()})
        now = cleaned_at_ms if cleaned_at_ms is not None else max(max_ts, pre_max)
        frames += _compaction(pre, post, now)
        for name in sorted(set(pre_leo) | set(leo)):
            if pre_leo.get(name) != leo.get(name):
                report.add("C5", dirs.get(name, f"{data_dir.rstrip('/')}/{name}"), None,
                           leo.get(name), f"log end offset changed from {pre_leo.get(name)}")
    phase("keys")
    # Driver-side follow-ups ride in the same job as rows with a private check id.
    if num_partitions <= 0:  # placement check disabled
        groups = groups.limit(0)
    frames.append(groups.select(F.lit("_G4").alias("check"), F.col("dir").alias("file"),
                                F.lit(None).cast("bigint").alias("position"),
                                F.lit(None).cast("bigint").alias("offset"),
                                F.concat_ws("\0", "name", "group").alias("message")))
    if missing is not None:
        frames.append(missing.select(F.lit("_G2").alias("check"),
                                     F.col("group").alias("file"),
                                     F.col("partition").cast("bigint").alias("position"),
                                     F.col("offset"), F.col("topic").alias("message")))
    viol = frames[0]
    for f in frames[1:]:
        viol = viol.unionByName(f)
    from pyspark.sql.window import Window
    w = Window.partitionBy("check").orderBy("file", "position", "offset")
    capped = (viol.withColumn("_n", F.row_number().over(w))
              .withColumn("_total", F.count(F.lit(1)).over(Window.partitionBy("check")))
              .where((F.col("_n") <= max_examples) | F.col("check").startswith("_")))
    totals: dict[str, int] = {}
    from coordinator.groups.placement import partition_for
    for r in capped.collect():
        check = r["check"]
        if check == "_G4":
            name, group = r["message"].split("\0", 1)
            want = f"__consumer_offsets-{partition_for(group, num_partitions)}"
            if want != name:
                report.add("G4", r["file"], None, None,
                           f"group {group!r} has records here but belongs in {want}")
        elif check == "_G2":
            report.add("G2", offsets_dir(data_dir, r["file"], num_partitions), None, None,
                       f"acknowledged commit ({r['file']}, {r['message']}, {r['position']}) -> "
                       f"{r['offset']} is missing from the log")
        else:
            report.add(check, r["file"], r["position"], r["offset"], r["message"])
            totals[check] = r["_total"]
    for check, n in totals.items():  # totals beyond the examples kept
        report.counts[check] += n - min(n, max_examples)
    report.stats["phases"] = {"stage1_scan_s": round(t1 - t0, 3),
                              "stage2_keys_s": round(time.perf_counter() - t1, 3)}
    post.unpersist()
    if pre is not None:
        pre.unpersist()
    return report
