"""The scan in local processes beside the JVM's start, into Parquet files Spark reads natively.

With a local[N] master this machine is the executor: the record scan (rows.task_rows, the very
Arrow batches the `kgclog` source yields) runs in a pool of N processes, started before the
JVM so that the two overlap, and each task writes its batches as one Parquet file. Spark then
reads those files with its vectorised reader: no Python worker, data source planner or
row conversion between the scan and the checks. Invariants: a task's file holds exactly the
rows task_rows yields for its splits (layout.plan_splits, packed as source.py packs them);
the files live in a private temporary directory that closing the scan removes.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import tempfile
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from types import TracebackType

from coordinator.verify.layout import Split, active_bases, log_starts, pack, plan_splits

__all__ = ["LogScan", "LocalScan", "logs_to_scan", "local_cores"]


@dataclass(frozen=True)
class LogScan:
    """One log the job reads: the after image (its latest records decoded, for the G checks)
    or the before image; `other` is the log its batch envelopes are compared with (C4/C5)."""

    side: str  # "after" | "before"
    path: str
    other: str | None
    decode: bool
    region_end: dict[str, int] | None  # dir name -> first offset of the uncleanable region
    log_start: dict[str, int] | None  # dir name -> log start offset the after image set


def logs_to_scan(data_dir: str, before: str | None) -> list[LogScan]:
    """The after log and, with a before image, the before log (whose segments below the after
    image's log start offsets are skipped: DeleteRecords removed them on purpose)."""
    region_end = active_bases(data_dir) if before else None
    out = [LogScan("after", data_dir, before, True, region_end, None)]
    if before:
        out.append(LogScan("before", before, data_dir, False, region_end, log_starts(data_dir)))
    return out


def local_cores(master: str) -> int | None:
    """The task slots of a local master (local, local[N], local[*], local[N,F]); None otherwise."""
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if m is None:
        return None
    n = m.group(1) or "1"
    return os.cpu_count() or 1 if n == "*" else max(1, int(n))


def _scan_task(splits: list[Split], engine: str, other: str | None, side: str, decode: bool, stem: str) -> None:
    """One task of whole dirs: its V and S rows into `stem`.rows.parquet, its finished per-key
    rows (final_keys) into `stem`.keys.parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from coordinator.verify.final_keys import AFTER_SCHEMA, BEFORE_SCHEMA, finish
    from coordinator.verify.rows import ARROW_SCHEMA, scan_task

    task = scan_task(splits, engine=engine, other_root=other, side=side, decode=decode)
    # M rows stay out: their markers are applied in the task (final_keys).
    rows = [b for b in task.batches if b.num_rows and b["kind"][0].as_py() != "M"]
    # Uncompressed: each file is read once, from the page cache, on this machine.
    pq.write_table(pa.Table.from_batches(rows, schema=ARROW_SCHEMA), f"{stem}.rows.parquet", compression="none")
    keys = (
        finish(task.keys, task.markers, side=side)
        if task.keys is not None
        else (AFTER_SCHEMA if side == "after" else BEFORE_SCHEMA).empty_table()
    )
    pq.write_table(keys, f"{stem}.keys.parquet", compression="none")


def _ledger_task(ledger: str, path: str) -> None:
    """The ledger replayed (ledger.replay_table) into one Parquet file."""
    import pyarrow.parquet as pq

    from coordinator.verify.ledger import replay_table

    pq.write_table(replay_table(ledger), path, compression="none")


class LocalScan:
    """Scans `logs` (and replays `ledger`) in a process pool of `workers`; `files(side, what)`
    waits for a log's "rows" or "keys" files, `expected()` for the replayed ledger. Use as a
    context manager: entering plans the splits and submits every task, leaving stops the pool
    and removes the files."""

    def __init__(
        self,
        logs: list[LogScan],
        *,
        workers: int,
        split_bytes: int,
        pack_bytes: int | None,
        num_partitions: int,
        engine: str,
        ledger: str | None = None,
        work_dir: str | None = None,
    ) -> None:
        self.logs = logs
        self.workers = workers
        self.split_bytes = split_bytes
        self.pack_bytes = pack_bytes or split_bytes
        self.num_partitions = num_partitions
        self.engine = engine
        self.ledger = ledger
        self.work_dir = work_dir
        self._dir: str | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[str, list[tuple[str, Future[None]]]] = {}

    def __enter__(self) -> LocalScan:
        self._dir = tempfile.mkdtemp(prefix="kgc-verify-scan-", dir=self.work_dir)
        try:
            self._submit(self._dir)
        except BaseException:
            self.close()
            raise
        return self

    def _submit(self, out: str) -> None:
        from coordinator.verify.rows import engine_for

        engine = engine_for(self.engine)  # fails here, not in a worker, without numba
        # fork is the cheapest start (the workers inherit what is imported) and safe while this
        # process has one thread; a process that already runs threads (a live SparkSession's
        # py4j) starts its workers from a fresh server process instead.
        method = "fork" if threading.active_count() == 1 else "forkserver"
        if method not in multiprocessing.get_all_start_methods():
            method = "spawn"
        self._pool = pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context(method))
        tasks = []
        for log in self.logs:
            splits = plan_splits(
                log.path,
                split_bytes=self.split_bytes,
                region_end=log.region_end,
                num_offsets_partitions=self.num_partitions,
                log_start=log.log_start,
            )
            for i, bin_ in enumerate(pack(splits, self.pack_bytes, whole_dirs=True)):
                tasks.append((sum(s.end - s.start for s in bin_), log, os.path.join(out, f"{log.side}-{i:05d}"), bin_))
            self._futures[log.side] = []
        if self.ledger is not None:
            path = os.path.join(out, "expected.parquet")
            self._futures["ledger"] = [(path, pool.submit(_ledger_task, self.ledger, path))]
        # Biggest first over both logs: on few cores a large task started last idles the others.
        for _, log, stem, bin_ in sorted(tasks, key=lambda t: -t[0]):
            fut = pool.submit(_scan_task, bin_, engine, log.other, log.side, log.decode, stem)
            self._futures[log.side].append((stem, fut))

    def progress(self) -> tuple[int, int]:
        """(tasks done, tasks in all)."""
        futs = [f for side in self._futures.values() for _, f in side]
        return sum(f.done() for f in futs), len(futs)

    def _wait(self, what: str) -> list[str]:
        out = []
        for path, fut in self._futures.get(what, []):
            fut.result()  # a task's error is raised here
            out.append(path)
        return out

    def files(self, side: str, what: str) -> list[str]:
        """The Parquet files of one log's `what` ("rows" or "keys"), once they are written."""
        return [f"{stem}.{what}.parquet" for stem in self._wait(side)]

    def expected(self) -> str | None:
        """The replayed ledger's Parquet file (None without a ledger), once it is written."""
        found = self._wait("ledger")
        return found[0] if found else None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
