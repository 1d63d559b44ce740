"""`kgc verify DATA_DIR [--before DIR] [--ledger FILE] [--master URL] [--conf K=V]... [--report FILE]`.

Wiring: `add_arguments(subparser)` + `run(args)`, or `main(argv)`; also runnable as a script
(`spark-submit coordinator/verify/cli.py DATA_DIR ...` or `python -m coordinator.verify.cli`).
Prints progress on stderr while Spark runs, a summary table at the end, writes a JSON report,
and exits 1 on any violation (0 when clean, 2 on a usage error). pyspark is imported only
inside `run`, so importing this module is cheap. `--engine oracle` runs the single-process twin.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from typing import Any

from coordinator.verify.rules import CHECKS, Report

__all__ = ["add_arguments", "run", "main"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data_dir", help="data dir holding <topic>-<partition> dirs (after cleaning)")
    p.add_argument("--before", help="the same data dir before cleaning: enables compaction checks")
    p.add_argument("--ledger", help="acknowledged commits and deletions (Parquet, or JSON lines)")
    p.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    p.add_argument("--report", help="write the machine-readable report here (JSON)")
    p.add_argument(
        "--cleaned-at-ms",
        type=int,
        default=None,
        help="when the cleaner ran (default: the newest timestamp in the logs, a "
        "lower bound, so some expired tombstones may go unreported)",
    )
    p.add_argument(
        "--offsets-partitions",
        type=int,
        default=50,
        help="offsets.topic.num.partitions, for group placement (default 50; 0 skips the placement check)",
    )
    p.add_argument(
        "--share-state-partitions",
        type=int,
        default=50,
        help="share.coordinator.state.topic.num.partitions, for H2 (default 50; 0 skips it)",
    )
    p.add_argument(
        "--split-bytes", type=int, default=64 << 20, help="split segments at index entries about this far apart"
    )
    p.add_argument(
        "--pack-bytes",
        type=int,
        default=None,
        help="pack small splits into Spark tasks of about this size (default: --split-bytes)",
    )
    p.add_argument("--driver-memory", default="8g")
    p.add_argument(
        "--shuffle-partitions",
        type=int,
        default=None,
        help="spark.sql.shuffle.partitions (default: the task slots of a local master, else 16; "
        "the key-level rows are few, and every task costs scheduling)",
    )
    p.add_argument("--local-dir", default=None, help="spark.local.dir (shuffle spill)")
    p.add_argument("--max-examples", type=int, default=1000, help="violations listed per check (all are counted)")
    p.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting (repeatable), e.g. spark.executor.memory=4g",
    )
    p.add_argument(
        "--scan",
        choices=("auto", "compiled", "python"),
        default="auto",
        help="record scan in the workers: compiled (numba) or pure Python (default: compiled when numba is installed)",
    )
    p.add_argument(
        "--scan-in",
        choices=("auto", "local", "executors"),
        default="auto",
        help="where the scan runs: local processes started beside the JVM, their output read by "
        "Spark as Parquet (default for local masters), or the executors through the kgclog data "
        "source (default for cluster masters)",
    )
    p.add_argument("--engine", choices=("spark", "oracle"), default="spark")
    p.add_argument("--quiet", action="store_true", help="no progress display")


class _Progress:
    """Polls Spark's status tracker and redraws one stderr line (a new line when not a tty)."""

    def __init__(self, spark: Any, quiet: bool, scan: Any = None) -> None:
        self.spark, self.quiet, self.scan = spark, quiet, scan
        self.phase, self.t0 = "start", time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.tty = sys.stderr.isatty()

    def set_phase(self, name: str) -> None:
        self.phase = name
        self._draw(force=True)

    def _line(self) -> str:
        if self.phase == "scan" and self.scan is not None:
            done, total = self.scan.progress()
            return f"[kgc verify] scan: tasks {done}/{total}, {time.monotonic() - self.t0:.0f}s elapsed"
        tracker = self.spark.sparkContext.statusTracker()
        done = total = 0
        for sid in tracker.getActiveStageIds():
            info = tracker.getStageInfo(sid)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        tasks = f"tasks {done}/{total}" if total else "planning"
        return f"[kgc verify] {self.phase}: {tasks}, {time.monotonic() - self.t0:.0f}s elapsed"

    def _draw(self, force: bool = False) -> None:
        if self.quiet:
            return
        try:
            line = self._line()
        except Exception:  # the tracker is best effort; never fail the verification for it
            return
        sys.stderr.write(("\r" + line.ljust(78)) if self.tty else line + "\n")
        sys.stderr.flush()

    def _loop(self) -> None:
        every = 0.5 if self.tty else 10.0
        while not self._stop.wait(every):
            self._draw()

    def __enter__(self) -> _Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        if not self.quiet and self.tty:
            sys.stderr.write("\n")


def _summary(report: Report, elapsed: float, out: Any) -> None:
    out.write(f"\n{'check':<6} {'violations':>10}  invariant\n{'-' * 72}\n")
    for check, what in CHECKS.items():
        out.write(f"{check:<6} {report.counts.get(check, 0):>10}  {what}\n")
    s = report.stats
    mib = s.get("bytes", 0) / (1 << 20) + s.get("before_bytes", 0) / (1 << 20)
    out.write(
        f"{'-' * 72}\n{mib:.1f} MiB, {s.get('records', 0) + s.get('before_records', 0)} "
        f"records in {elapsed:.1f}s: {'OK' if report.ok else 'VIOLATIONS FOUND'}\n"
    )
    for v in sorted(report.violations, key=lambda v: (v["check"], v["file"] or ""))[:20]:
        out.write(f"  {v['check']} {v['file']} position={v['position']} offset={v['offset']}: {v['message']}\n")


def _run_spark(args: argparse.Namespace, t0: float) -> Report:
    from pyspark import SparkContext

    from coordinator.verify import spark_checks
    from coordinator.verify.class_archive import class_archive
    from coordinator.verify.local_scan import LocalScan, local_cores, logs_to_scan
    from coordinator.verify.session import JIT_OPTIONS, get_session, stop_session

    cores = local_cores(args.master)
    # The JVM is this run's unless the process already has one (a caller's session).
    owned = SparkContext._active_spark_context is None
    archive = class_archive() if owned else None
    with contextlib.ExitStack() as stack:
        scan = None
        if cores is not None and args.scan_in != "executors":
            # Started before the JVM: the scan runs while Spark starts.
            scan = stack.enter_context(
                LocalScan(
                    logs_to_scan(args.data_dir, args.before),
                    workers=cores,
                    split_bytes=args.split_bytes,
                    pack_bytes=args.pack_bytes,
                    num_partitions=args.offsets_partitions,
                    engine=args.scan,
                    ledger=args.ledger,
                    work_dir=args.local_dir,
                )
            )
        if not args.quiet:
            print("[kgc verify] starting Spark...", file=sys.stderr)
        spark = get_session(
            args.master,
            driver_memory=args.driver_memory,
            shuffle_partitions=args.shuffle_partitions or cores or 16,
            local_dir=args.local_dir,
            extra=dict(c.split("=", 1) for c in args.conf),
            java_options=f"{JIT_OPTIONS} {archive.options}" if archive else JIT_OPTIONS,
        )
        session_s = time.monotonic() - t0
        try:
            with _Progress(spark, args.quiet, scan) as progress:
                report = spark_checks.run(
                    spark,
                    args.data_dir,
                    before=args.before,
                    ledger=args.ledger,
                    cleaned_at_ms=args.cleaned_at_ms,
                    num_partitions=args.offsets_partitions,
                    share_partitions=args.share_state_partitions,
                    split_bytes=args.split_bytes,
                    pack_bytes=args.pack_bytes,
                    max_examples=args.max_examples,
                    engine=args.scan,
                    phase=progress.set_phase,
                    scan_in=args.scan_in,
                    scan=scan,
                )
        finally:
            if archive is not None and archive.writing is not None:
                # This run recorded Spark's classes: the JVM writes them as it exits.
                archive.publish(stop_session(spark))
    report.stats.setdefault("phases", {})["session_s"] = round(session_s, 3)
    report.stats["class_archive"] = "off" if archive is None else "recorded" if archive.writing else "mapped"
    return report


def run(args: argparse.Namespace) -> int:
    for path in [args.data_dir] + [p for p in (args.before,) if p]:
        if not os.path.isdir(path):
            print(f"kgc verify: {path} is not a directory", file=sys.stderr)
            return 2
    if any("=" not in c for c in args.conf):
        print("kgc verify: --conf takes KEY=VALUE", file=sys.stderr)
        return 2
    if args.ledger and not os.path.isfile(args.ledger):
        print(f"kgc verify: ledger {args.ledger} not found", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    if args.engine == "oracle":
        from coordinator.verify.oracle import verify

        report = verify(
            args.data_dir,
            before=args.before,
            ledger=args.ledger,
            cleaned_at_ms=args.cleaned_at_ms,
            num_partitions=args.offsets_partitions,
            share_partitions=args.share_state_partitions,
        )
    else:
        from coordinator.verify.local_scan import local_cores

        if args.scan_in == "local" and local_cores(args.master) is None:
            print("kgc verify: --scan-in local needs a local master (local[N])", file=sys.stderr)
            return 2
        report = _run_spark(args, t0)
    elapsed = time.monotonic() - t0
    report.stats["elapsed_s"] = round(elapsed, 3)
    _summary(report, elapsed, sys.stdout)
    if args.report:
        doc = report.to_json()
        doc["args"] = {k: v for k, v in vars(args).items() if not callable(v)}
        with open(args.report, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kgc verify", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
