"""The __share_group_state keys' latest records between the Spark job and the driver's H checks
(share_checks.py): `_H` rows out of the job, LatestShareRecord back on the driver."""

from __future__ import annotations

import base64
import json
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from coordinator.verify.layout import segment_path
from coordinator.verify.share_checks import SHARE_PREFIX, LatestShareRecord
from coordinator.verify.spark_key_checks import AFTER

__all__ = ["share_rows", "latest_share"]


def share_rows(keys: DataFrame) -> DataFrame:
    """Each __share_group_state record key's latest record (decoded), as `_H` rows for the
    driver's H checks (share_checks.py): one per record key, a small set."""
    facts = F.struct(
        F.base64("key").alias("key"),
        F.col("l.tombstone").alias("tombstone"),
        *(F.col(f"l.{c}").alias(c) for c in ("record_type", "group", "topic", "partition", "decode_error")),
    )
    return keys.where(F.col("name").startswith(SHARE_PREFIX)).select(
        F.lit("_H").alias("check"),
        F.lit(AFTER).alias("side"),
        "name",
        F.col("l.segment").alias("segment"),
        F.lit(None).cast("string").alias("file"),
        F.col("l.pos").alias("position"),
        F.col("l.offset").alias("offset"),
        F.to_json(facts).alias("message"),
    )


def latest_share(row: Any, dirs: dict[str, str]) -> LatestShareRecord:
    facts = json.loads(row["message"])  # to_json leaves nulls out
    decoded = {c: facts.get(c) for c in ("record_type", "group", "topic", "partition", "decode_error")}
    decoded.update(committed_offset=None, metadata=None)
    return LatestShareRecord(
        row["name"],
        base64.b64decode(facts.get("key") or ""),
        row["offset"],
        bool(facts.get("tombstone")),
        segment_path(dirs[row["name"]], row["segment"]),
        row["position"],
        decoded,
    )
