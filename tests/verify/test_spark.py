"""The Spark job against generated logs: clean logs pass (through the CLI), every injected
fault is reported at its exact file/position/offset, and Spark agrees with the oracle."""

from __future__ import annotations

import json

import pytest

from coordinator.verify import cli

from .conftest import FAULT_KINDS, SPLIT_BYTES, run_oracle

pytestmark = pytest.mark.spark


def _key(f: dict) -> tuple:
    return (f["check"], f["file"], f["position"], f["offset"])


@pytest.mark.parametrize("scan, scan_in", [("python", "executors"), ("auto", "auto")])
def test_spark_cli_passes_clean_logs(spark, clean, tmp_path, scan, scan_in):
    """Both scans, and both places a scan runs: the executors (the kgclog source) and, the
    default on a local master, local processes whose Parquet files Spark reads."""
    report = tmp_path / "report.json"
    try:
        # getOrCreate hands back the shared session: --conf still sets its runtime SQL settings.
        rc = cli.main(
            [
                clean["after"],
                "--before",
                clean["before"],
                "--ledger",
                clean["ledger"],
                "--master",
                "local[2]",
                "--shuffle-partitions",
                "4",
                "--scan",
                scan,
                "--scan-in",
                scan_in,
                "--conf",
                "spark.sql.shuffle.partitions=3",
                "--split-bytes",
                str(SPLIT_BYTES),
                "--pack-bytes",
                str(1 << 20),
                "--cleaned-at-ms",
                str(clean["cleaned_at_ms"]),
                "--offsets-partitions",
                str(clean["partitions"]),
                "--report",
                str(report),
                "--quiet",
            ]
        )
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "4")
    doc = json.loads(report.read_text())
    assert (rc, doc["ok"], doc["violations"]) == (0, True, [])
    assert doc["stats"]["splits"] > 0
    assert doc["stats"]["records"] == run_oracle(clean).stats["records"]


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_spark_catches_fault(kind, faulty, faulty_spark_report):
    fault = next(f for f in faulty["faults"] if f["kind"] == kind)
    assert _key(fault) in faulty_spark_report.keys(), faulty_spark_report.violations


def test_spark_agrees_with_the_oracle(faulty_spark_report, faulty_oracle_report):
    assert faulty_spark_report.keys() == faulty_oracle_report.keys()
    assert faulty_spark_report.counts == faulty_oracle_report.counts


def test_spark_defaults_the_cleaning_time_like_the_oracle(spark, faulty):
    """Without --cleaned-at-ms both take the newest timestamp of the logs (Spark computes it in
    the same job as the checks that use it)."""
    from coordinator.verify import spark_checks
    from coordinator.verify.oracle import verify

    m = faulty
    got = spark_checks.run(
        spark,
        m["after"],
        before=m["before"],
        ledger=m["ledger"],
        num_partitions=m["partitions"],
        split_bytes=SPLIT_BYTES,
        pack_bytes=1 << 20,
    )
    want = verify(m["after"], before=m["before"], ledger=m["ledger"], num_partitions=m["partitions"])
    assert (got.keys(), got.counts) == (want.keys(), want.counts)
    assert got.keys()
