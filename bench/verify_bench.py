"""Benchmark `kgc verify` (Spark at local[2] and local[1]) beside the single-process oracle.

Generates one seed dataset with the real writer and cleaner (coordinator.verify.generate), then
builds datasets of the requested sizes by hard-linking the seed's partition dirs under more
`__consumer_offsets-<n>` names (no extra disk; the placement check G4 is disabled since copies
sit in "wrong" partitions, every other check runs). Sizes count before/ + after/ bytes. Each
engine runs as its own process through the CLI; figures come from its JSON report. Prints
figures only, never passes/fails on time. Files are read warm from the page cache.
Spark runs once per master and record scan (--scans: compiled numba kernels, pure Python); CPU
seconds of each run's whole process tree are sampled from /proc (steadier than wall time here;
a standalone cluster's JVMs are not in that tree, so its figure is the driver's only).
The driver JVM's class archive (verify/class_archive.py) is recorded by the first Spark run on
a machine and mapped by every later one: each row says which ("recorded" runs pay for writing it).
Masters: local[N], spark://HOST:PORT, or `standalone` (a loopback master with two 1-core
workers started from the pyspark distribution for the run, as tests/verify/test_standalone.py does).
Usage: .venv/bin/python bench/verify_bench.py [--sizes 1 5] [--masters local[2] standalone]
       [--scans compiled] [--conf spark.executor.memory=2g]... [--work DIR --keep]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from coordinator.verify.generate import generate
from coordinator.verify.layout import list_partition_dirs


def _dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs if f.endswith(".log"))


def build(seed: dict, out: str, gib: float) -> dict:
    """Hard-link copies of the seed partitions until before+after reach `gib` GiB."""
    shutil.rmtree(out, ignore_errors=True)
    per_copy = _dir_bytes(seed["before"]) + _dir_bytes(seed["after"])
    copies = max(1, round(gib * (1 << 30) / per_copy))
    nparts = seed["partitions"]
    for side in ("before", "after"):
        for p in list_partition_dirs(seed[side]):
            for k in range(copies):
                dst = os.path.join(out, side, f"{p.topic}-{p.partition + k * nparts}")
                os.makedirs(dst)
                for f in os.listdir(p.path):
                    os.link(os.path.join(p.path, f), os.path.join(dst, f))
    return {
        **seed,
        "before": os.path.join(out, "before"),
        "after": os.path.join(out, "after"),
        "copies": copies,
        "bytes": per_copy * copies,
    }


class _TreeCpu:
    """CPU seconds of a process and all its descendants (driver, JVM, Python workers), sampled
    from /proc: steadier than wall time on a shared machine. A process that lives shorter than
    the sampling period is missed (Spark's workers are long-lived)."""

    def __init__(self, root: int, every: float = 0.25) -> None:
        self.root, self.every, self.seen = root, every, {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        parent, cpu = {}, {}
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(pid)] = int(fields[1])
            cpu[int(pid)] = (int(fields[11]) + int(fields[12])) / tick
        for pid in cpu:
            p = pid
            while p in parent and p != self.root:
                p = parent[p]
            if p == self.root:
                self.seen[pid] = max(self.seen.get(pid, 0.0), cpu[pid])

    def _loop(self) -> None:
        while not self._done.wait(self.every):
            self._sample()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def total(self) -> float:
        return sum(self.seen.values())


@contextlib.contextmanager
def master_url(master: str) -> Iterator[str]:
    """The master URL to pass to kgc verify; `standalone` starts a loopback cluster for the run."""
    if master != "standalone":
        yield master
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.verify.standalone import standalone_cluster

    with tempfile.TemporaryDirectory(prefix="kgc-verify-standalone-") as tmp:
        with standalone_cluster(Path(tmp), workers=2, cores=1, memory="3g") as url:
            yield url


def run_engine(ds: dict, engine: str, master: str, scan: str, report: str, conf: list[str] | None = None) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "coordinator.verify.cli",
        ds["after"],
        "--before",
        ds["before"],
        "--ledger",
        ds["ledger"],
        "--cleaned-at-ms",
        str(ds["cleaned_at_ms"]),
        "--offsets-partitions",
        "0",
        "--engine",
        engine,
        "--report",
        report,
        "--quiet",
    ]
    if engine == "spark":
        cmd += ["--master", master, "--scan", scan]
        for c in conf or []:
            cmd += ["--conf", c]
    if os.path.exists(report):
        os.unlink(report)
    t0 = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        cpu = _TreeCpu(proc.pid)
        out, err = proc.communicate()
        cpu.stop()
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1) or not os.path.exists(report):
        print(out[-2000:], err[-4000:], file=sys.stderr)
        raise SystemExit(f"{engine} {master} failed with exit code {proc.returncode}")
    with open(report) as f:
        doc = json.load(f)
    s = doc["stats"]
    return {
        "engine": engine,
        "master": master if engine == "spark" else "-",
        "scan": scan if engine == "spark" else "-",
        "wall_s": wall,
        "bytes": s["bytes"] + s.get("before_bytes", 0),
        "records": s["records"] + s.get("before_records", 0),
        "violations": sum(doc["counts"].values()),
        "phases": s.get("phases", {}),
        "class_archive": s.get("class_archive", "-"),
        "elapsed_s": s["elapsed_s"],
        "cpu_s": max(cpu.total(), 1e-3),
        "load": os.getloadavg()[0],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1.0], help="GiB (before+after)")
    ap.add_argument(
        "--masters", nargs="+", default=["local[2]", "local[1]"], help="local[N], spark://HOST:PORT or standalone"
    )
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="passed to kgc verify")
    ap.add_argument(
        "--scans",
        nargs="+",
        default=["compiled", "python"],
        choices=("compiled", "python"),
        help="record scans to run in Spark's workers (kgc verify --scan)",
    )
    ap.add_argument("--work", default="/tmp/kgc-verify-bench")
    ap.add_argument("--seed-records", type=int, default=4_000_000)
    ap.add_argument("--no-oracle", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the seed and datasets")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    free = shutil.disk_usage(a.work).free
    print(f"free space in {a.work}: {free / (1 << 30):.1f} GiB")
    seed_dir = os.path.join(a.work, "seed")
    if os.path.exists(os.path.join(seed_dir, "manifest.json")):
        with open(os.path.join(seed_dir, "manifest.json")) as f:
            seed = json.load(f)
        print(f"reusing seed dataset {seed_dir}")
    else:
        t0 = time.monotonic()
        seed = generate(
            seed_dir,
            records=a.seed_records,
            partitions=8,
            groups=2000,
            segment_bytes=16 << 20,
            workers=os.cpu_count() or 1,
        )
        print(f"generated seed ({a.seed_records} records written) in {time.monotonic() - t0:.0f}s")
    rows = []
    for gib in a.sizes:
        ds = build(seed, os.path.join(a.work, f"ds-{gib:g}G"), gib)
        print(
            f"\n== {ds['bytes'] / (1 << 30):.2f} GiB ({ds['copies']} hard-linked copies of the "
            f"seed's {seed['partitions']} partitions, before+after)"
        )
        engines = ([] if a.no_oracle else [("oracle", "-", "-")]) + [
            ("spark", m, scan) for m in a.masters for scan in a.scans
        ]
        for engine, master, scan in engines:
            with master_url(master) as url:
                r = run_engine(ds, engine, url, scan, os.path.join(a.work, "report.json"), a.conf)
            r["master"] = master if engine == "spark" else "-"
            r["gib"] = gib
            rows.append(r)
            mib = r["bytes"] / (1 << 20)
            print(
                f"{engine:<7} {r['master']:<9} {r['scan']:<8} {mib:8.0f} MiB {r['records']:>11,} rec "
                f"{r['wall_s']:7.1f}s wall  {mib / r['wall_s']:6.1f} MiB/s "
                f"{r['records'] / r['wall_s']:>9,.0f} rec/s  cpu {r['cpu_s']:6.1f}s "
                f"({mib / r['cpu_s']:5.1f} MiB per cpu-s)  load {r['load']:.1f}  "
                f"violations={r['violations']}  class archive {r['class_archive']}  phases={r['phases']}",
                flush=True,
            )
        if not a.keep:
            shutil.rmtree(os.path.join(a.work, f"ds-{gib:g}G"))
    print(json.dumps(rows, indent=1))
    if not a.keep:
        shutil.rmtree(seed_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
