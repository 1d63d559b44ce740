"""Verifier fixtures: small generated datasets (once per session) and one shared SparkSession.

`clean` is a generated data dir (before/after/ledger) cleaned by storage's cleaner, a fifth of
its commits in transactions (committed, aborted, some left open); `faulty`
is a copy with every fault kind injected, each into a different partition dir, so one Spark run
covers all of them. Spark costs ~10 s to start, so the session is shared by every test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from coordinator.verify.faults import FAULTS, inject
from coordinator.verify.generate import generate

GEN = dict(
    records=30_000,
    partitions=10,
    groups=100,
    segment_bytes=32 << 10,
    workers=2,
    user_topic_records=2_000,
    seed=7,
    transactions=0.2,
)
SPLIT_BYTES = 16 << 10  # smaller than a segment: exercises index-aligned sub-ranges
FAULT_KINDS = sorted(FAULTS)


def relocate(manifest: dict, src: str, dst: str) -> dict:
    return {k: v.replace(src, dst) if isinstance(v, str) else v for k, v in manifest.items()}


@pytest.fixture(scope="session")
def clean(tmp_path_factory) -> dict:
    out = str(tmp_path_factory.mktemp("verify") / "clean")
    return generate(out, **GEN)


@pytest.fixture(scope="session")
def faulty(clean, tmp_path_factory) -> dict:
    src = str(Path(clean["after"]).parent)
    out = str(tmp_path_factory.mktemp("verify") / "faulty")
    shutil.copytree(src, out)
    m = relocate(clean, src, out)
    m["faults"] = [inject(out, kind, m, target=i) for i, kind in enumerate(FAULT_KINDS)]
    with open(Path(out) / "manifest.json", "w") as f:
        json.dump(m, f)
    return m


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from coordinator.verify.session import get_session

    session = get_session("local[2]", driver_memory="2g", shuffle_partitions=4)
    yield session
    session.stop()


def run_spark(spark, m: dict):
    from coordinator.verify import spark_checks

    return spark_checks.run(
        spark,
        m["after"],
        before=m["before"],
        ledger=m["ledger"],
        cleaned_at_ms=m["cleaned_at_ms"],
        num_partitions=m["partitions"],
        split_bytes=SPLIT_BYTES,
        pack_bytes=1 << 20,
    )


def run_oracle(m: dict):
    from coordinator.verify.oracle import verify

    return verify(
        m["after"],
        before=m["before"],
        ledger=m["ledger"],
        cleaned_at_ms=m["cleaned_at_ms"],
        num_partitions=m["partitions"],
    )


@pytest.fixture(scope="session")
def faulty_spark_report(spark, faulty):
    return run_spark(spark, faulty)


@pytest.fixture(scope="session")
def faulty_oracle_report(faulty):
    return run_oracle(faulty)
