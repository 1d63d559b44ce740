"""SparkSession for the verifier, with the settings measured in shared/reference/pyspark.md.

Workers must run this interpreter (it has pyarrow and the project installed), bind to
loopback, and stay quiet (no UI, no console progress bars: the CLI draws its own progress).
pyspark is imported inside the function so that importing this module costs nothing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["get_session", "register", "stop_session", "JIT_OPTIONS"]

# C1 only: the C2 compiler's work does not pay back in a job of seconds to minutes (measured:
# 5 CPU-s less at start, the whole 1 GiB verification 25% less CPU).
JIT_OPTIONS = "-XX:TieredStopAtLevel=1"


def get_session(
    master: str = "local[*]",
    *,
    driver_memory: str = "8g",
    shuffle_partitions: int = 16,
    local_dir: str | None = None,
    extra: dict[str, str] | None = None,
    java_options: str = JIT_OPTIONS,
) -> Any:
    """The session (an existing one if this process has one). `java_options` go to the driver
    JVM (a `spark.driver.extraJavaOptions` in `extra` replaces them)."""
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
        # The checks read the local scan's files by name (a few per GiB): stat them on the
        # driver instead of a listing job once there are more than 32.
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
        .config("spark.driver.extraJavaOptions", java_options)
    )
    if local_dir:
        b = b.config("spark.local.dir", local_dir)
    for k, v in (extra or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def register(spark: Any) -> None:
    """Registers the `kgclog` source (only the executors' scan reads it). Not at start: the
    first registration makes Spark start a Python worker to look for installed sources."""
    from coordinator.verify.source import KafkaLogDataSource

    spark.dataSource.register(KafkaLogDataSource)


def stop_session(spark: Any) -> int | None:
    """Stops Spark and its driver JVM (it exits once its gateway's input closes) and waits for
    it; returns the JVM's exit code (None when it could not be waited for)."""
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return None
    gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        return int(proc.wait(timeout=300))
    except Exception:
        return None
