"""The Spark job's key-level checks, as joins over the per-key rows (one per partition and key:
final_keys.py's, or spark_checks.py's aggregation of the executors' rows): G1-G4 against the
replayed ledger (ledger.replay_table) and the placement of groups (`offset_checks`), and
C1-C3, C6 against the before image (`compaction_checks`). Owns the violation-row shape
(OUT_COLUMNS, `violation`, `violation_rows`); locations are exact (file, position, offset) and
identical to oracle.py's.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

__all__ = [
    "AFTER",
    "BEFORE",
    "OUT_COLUMNS",
    "violation",
    "violation_rows",
    "latest_struct",
    "offset_checks",
    "compaction_checks",
]

AFTER, BEFORE = 0, 1  # the `side` of a violation row: which log its name/segment are in
OUT_COLUMNS = ["check", "side", "name", "segment", "file", "position", "offset", "message"]


def typed_null(kind: str = "bigint") -> Column:
    return F.lit(None).cast(kind)


def violation(cond: Column, check: str, loc: str, message: Column | str, side: int = AFTER) -> Column:
    """A violation (or null where `cond` fails) located at struct column `loc` (offset,
    segment, pos) of the row's partition `name`; exploded into rows by violation_rows."""
    msg = F.lit(message) if isinstance(message, str) else message
    return F.when(
        cond,
        F.struct(
            F.lit(check).alias("check"),
            F.lit(side).alias("side"),
            F.col(f"{loc}.segment").alias("segment"),
            typed_null("string").alias("file"),
            F.col(f"{loc}.pos").alias("position"),
            F.col(f"{loc}.offset").alias("offset"),
            msg.alias("message"),
        ),
    )


def violation_rows(df: DataFrame, name: Column, candidates: list[Column]) -> DataFrame:
    """One pass over `df`: every candidate violation of each row, as rows of OUT_COLUMNS."""
    return (
        df.select(name.alias("name"), F.explode(F.array(*candidates)).alias("v"))
        .where(F.col("v").isNotNull())
        .select("v.check", "v.side", "name", "v.segment", "v.file", "v.position", "v.offset", "v.message")
    )


def latest_struct(*decoded: str) -> Column:
    return F.struct(
        F.col("last_offset").alias("offset"),
        "segment",
        F.col("last_pos").alias("pos"),
        "timestamp",
        "value_hash",
        "tombstone",
        "delete_horizon",
        *decoded,
    )


def offset_checks(keys: DataFrame, expected: DataFrame | None, placement: bool) -> DataFrame:
    """G1 (latest record decodes), G3, the G4 candidates (_G4: one row per (name, group)) and,
    with the replayed ledger `expected` (ledger.replay_table's columns), G2 (and _G2 for
    acknowledged commits the log lacks), in one pass."""
    ok = F.col("l.decode_error").isNull()
    rt = F.col("l.record_type")
    k = keys.where(F.col("name").startswith("__consumer_offsets-")).select(
        "name", "key", "l", F.when(ok, F.col("l.group")).alias("grp")
    )
    w = Window.partitionBy("name", "grp")
    k = k.withColumn(
        "tomb_offset", F.max(F.when(ok & (rt == 2) & F.col("l.tombstone"), F.col("l.offset"))).over(w)
    ).withColumn("rn", F.row_number().over(w.orderBy("key")))
    commit = F.col("l").isNotNull() & ok & rt.isin(0, 1)
    live = commit & ~F.col("l.tombstone")
    out = [
        violation(~ok, "G1", "l", F.concat(F.lit("latest record does not decode: "), F.col("l.decode_error"))),
        violation(
            live & (F.col("l.offset") < F.col("tomb_offset")), "G3", "l", "live offset older than its group's tombstone"
        ),
        F.when(
            (F.col("rn") == 1) & F.col("grp").isNotNull() & F.lit(placement),
            F.struct(
                F.lit("_G4").alias("check"),
                F.lit(AFTER).alias("side"),
                typed_null().alias("segment"),
                typed_null("string").alias("file"),
                typed_null().alias("position"),
                typed_null().alias("offset"),
                F.col("grp").alias("message"),
            ),
        ),
    ]
    name = F.col("name")
    if expected is not None:
        # The join keys as plain columns: a key expression would be evaluated in every
        # comparison of a sort and every probe of a hash table.
        k = k.select(
            "*", *(F.when(commit, F.col(f"l.{c}")).alias(f"_k{c[0]}") for c in ("group", "topic", "partition"))
        )
        e = expected.select(
            F.col("group").alias("eg"),
            F.col("topic").alias("et"),
            F.col("partition").alias("ep"),
            F.struct("seq", "offset", "metadata").alias("c"),
        )
        on = (F.col("_kg") == F.col("eg")) & (F.col("_kt") == F.col("et")) & (F.col("_kp") == F.col("ep"))
        # A hash join of the two shuffled sides: nothing to sort (full outer joins cannot broadcast).
        k = k.join(e.hint("shuffle_hash"), on, "full_outer")
        has_exp = F.col("c").isNotNull()
        out += [
            violation(
                has_exp & commit & F.col("l.tombstone"),
                "G2",
                "l",
                "acknowledged commit is missing (log has a tombstone)",
            ),
            violation(
                has_exp
                & live
                & (
                    (F.col("c.offset") != F.col("l.committed_offset"))
                    | (F.col("c.metadata") != F.coalesce("l.metadata", F.lit("")))
                ),
                "G2",
                "l",
                F.concat(
                    F.lit("log has offset "),
                    F.col("l.committed_offset").cast("string"),
                    F.lit(", acknowledged "),
                    F.col("c.offset").cast("string"),
                ),
            ),
            violation(~has_exp & live, "G2", "l", "committed offset never acknowledged or deleted"),
            # The log lacks it altogether: located on the driver (rules.offsets_dir).
            F.when(
                has_exp & F.col("l").isNull(),
                F.struct(
                    F.lit("_G2").alias("check"),
                    F.lit(AFTER).alias("side"),
                    typed_null().alias("segment"),
                    F.col("eg").alias("file"),
                    F.col("ep").cast("bigint").alias("position"),
                    F.col("c.offset").alias("offset"),
                    F.col("et").alias("message"),
                ),
            ),
        ]
        name = F.coalesce("name", F.lit(""))
    return violation_rows(k, name, out)


def compaction_checks(pre_keys: DataFrame, keys: DataFrame, now: int | DataFrame) -> DataFrame:
    """C1-C3 and C6: the before log's latest counted record per key in region 0 (`pre_keys`:
    name, key, P) against the after log's. `now` (the cleaning time) is a number, or a one-row
    DataFrame of column `_now` computed in the same job."""
    # `key` null-safe as plain columns (an expression would be evaluated in every comparison or
    # probe), joined by hashing the shuffled sides: nothing to sort.
    p = pre_keys.select(
        F.col("name").alias("pn"), F.coalesce("key", F.lit(b"")).alias("pk"), F.col("key").isNull().alias("pz"), "P"
    )
    a = keys.where(F.col("l0").isNotNull()).select(
        F.col("name").alias("an"),
        F.coalesce("key", F.lit(b"")).alias("ak"),
        F.col("key").isNull().alias("az"),
        F.col("count0").alias("count"),
        F.col("f0").alias("f"),
        F.col("l0").alias("A"),
    )
    on = (F.col("pn") == F.col("an")) & (F.col("pk") == F.col("ak")) & (F.col("pz") == F.col("az"))
    j = (
        p.hint("shuffle_hash")
        .join(a, on, "full_outer")
        .select(F.coalesce("pn", "an").alias("name"), "P", "count", "f", "A")
    )
    if isinstance(now, DataFrame):
        j, now_c = j.crossJoin(F.broadcast(now)), F.col("_now")
    else:
        now_c = F.lit(now)
    P, A = F.col("P"), F.col("A")
    expired = F.col("P.tombstone") & F.col("P.delete_horizon").isNotNull() & (F.col("P.delete_horizon") <= now_c)
    same_val = (F.col("A.value_hash") == F.col("P.value_hash")) & (F.col("A.tombstone") == F.col("P.tombstone"))
    both = A.isNotNull() & P.isNotNull()
    return violation_rows(
        j,
        F.col("name"),
        [
            violation(
                A.isNotNull()
                & F.col("A.tombstone")
                & (F.col("A.delete_horizon").isNull() | (F.col("A.delete_horizon") <= now_c)),
                "C6",
                "A",
                "kept tombstone has no delete horizon or it has passed",
            ),
            violation(F.col("count") > 1, "C3", "f", "older record of the key survived"),
            violation(A.isNotNull() & P.isNull(), "C1", "A", "record is not in the before log"),
            violation(
                both & (F.col("A.offset") != F.col("P.offset")),
                "C1",
                "A",
                F.when(
                    same_val, F.concat(F.lit("renumbered: was offset "), F.col("P.offset").cast("string"))
                ).otherwise(F.lit("surviving record is not the key's latest")),
            ),
            violation(
                both & (F.col("A.offset") == F.col("P.offset")) & ~same_val, "C1", "A", "value changed by cleaning"
            ),
            violation(
                P.isNotNull()
                & ~F.coalesce(expired, F.lit(False))
                & (A.isNull() | ((F.col("P.offset") != F.col("f.offset")) & (F.col("P.offset") != F.col("A.offset")))),
                "C2",
                "P",
                "latest record of the key was removed",
                side=BEFORE,
            ),
        ],
    )
