"""SparkSession for the verifier, with the settings measured in shared/reference/pyspark.md.

Workers must run this interpreter (it has pyarrow and the project installed), bind to
loopback, and stay quiet (no UI, no console progress bars: the CLI draws its own progress).
pyspark is imported inside the function so that importing this module costs nothing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["get_session", "register"]


def get_session(
    master: str = "local[*]",
    *,
    driver_memory: str = "8g",
    shuffle_partitions: int = 16,
    local_dir: str | None = None,
    extra: dict[str, str] | None = None,
) -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    b = (
        SparkSession.builder.master(master)
        .appName("kgc-verify")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.python.worker.reuse", "true")
    )
    if local_dir:
        b = b.config("spark.local.dir", local_dir)
    for k, v in (extra or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def register(spark: Any) -> None:
    from coordinator.verify.source import KafkaLogDataSource

    spark.dataSource.register(KafkaLogDataSource)
