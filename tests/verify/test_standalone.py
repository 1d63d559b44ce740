"""`kgc verify --master spark://...` against a Spark standalone cluster (a master and two
workers started from the pyspark distribution, loopback only), not only local[*]: executors in
their own JVMs and Python workers read the data dirs by path and find every injected fault at
its exact location, as the oracle does."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import SPLIT_BYTES, run_oracle
from .standalone import standalone_cluster

pytestmark = pytest.mark.spark


def _key(v: dict) -> tuple:
    return (v["check"], v["file"], v["position"], v["offset"])


def test_kgc_verify_on_a_standalone_cluster(faulty, faulty_oracle_report, tmp_path):
    pytest.importorskip("pyspark")
    report = tmp_path / "report.json"
    with standalone_cluster(tmp_path, workers=2) as master:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "coordinator",
                "verify",
                faulty["after"],
                "--before",
                faulty["before"],
                "--ledger",
                faulty["ledger"],
                "--master",
                master,
                "--cleaned-at-ms",
                str(faulty["cleaned_at_ms"]),
                "--offsets-partitions",
                str(faulty["partitions"]),
                "--driver-memory",
                "1g",
                "--shuffle-partitions",
                "4",
                "--split-bytes",
                str(SPLIT_BYTES),
                "--pack-bytes",
                str(1 << 20),
                "--report",
                str(report),
                "--quiet",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        workers_used = sorted(p.parent.name for p in tmp_path.glob("worker-*/app-*/*/stderr"))
    assert proc.returncode == 1, proc.stderr[-3000:]  # the faults are violations
    doc = json.loads(report.read_text())
    assert {_key(v) for v in doc["violations"]} == faulty_oracle_report.keys()
    assert all(_key(f) in faulty_oracle_report.keys() for f in faulty["faults"])
    assert doc["stats"]["records"] == run_oracle(faulty).stats["records"]
    assert len(workers_used) == 2, workers_used  # an executor on each worker
