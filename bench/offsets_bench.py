"""Benchmark: write N offset commits to __consumer_offsets with the real writer, then load them.

Prints figures only (never pass/fail): write rate, load time and records/s for the whole topic,
and startup time on an empty data dir. Commits are written the way a consumer group produces
them: one op = `--per-op` partitions of one group, one batch per op, group commit every
`--ops-per-fsync` ops.

    .venv/bin/python bench/offsets_bench.py --records 1000000
    .venv/bin/python bench/offsets_bench.py --dir /tmp/ob     # keeps the data dir, then:
    .venv/bin/python bench/offsets_bench.py --dir /tmp/ob --load-only --repeat 3
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import trio

from coordinator.config import Config
from coordinator.groups.lifecycle import group_runtime
from coordinator.groups.placement import partition_for
from coordinator.groups.record_types import OffsetCommitRecord
from coordinator.runtime.clock import SystemClock
from storage.batch import native
from storage.log_manager import LogManager


async def write(data_dir: Path, records: int, groups: int, topics: int, per_op: int, ops_per_fsync: int) -> float:
    config = Config({"data.dir": str(data_dir)})
    clock = SystemClock()
    writer = group_runtime(config, clock, LogManager(data_dir, clock)).writer
    started = time.perf_counter()
    written, op_index, pending = 0, 0, []
    while written < records:
        group = f"group-{op_index % groups}"
        base = (op_index // groups) * per_op
        op = [
            OffsetCommitRecord(
                group,
                f"topic-{(base + i) // 16 % topics}",
                (base + i) % 16,
                op_index,
                -1,
                "",
                1_700_000_000_000 + op_index,
                None,
            )
            for i in range(min(per_op, records - written))
        ]
        partition = partition_for(group)
        pending.append((partition, writer.append(partition, op)))
        written += len(op)
        op_index += 1
        if len(pending) >= ops_per_fsync:
            await wait_all(writer, pending)
            pending.clear()
    await wait_all(writer, pending)
    elapsed = time.perf_counter() - started
    writer.close()
    return elapsed


async def wait_all(writer, pending) -> None:
    """Wait like concurrent clients do, so one fsync per partition covers many ops."""
    async with trio.open_nursery() as nursery:
        for partition, offset in pending:
            nursery.start_soon(writer.wait_durable, partition, offset)


async def load(data_dir: Path) -> tuple[float, float, int, int, int]:
    config = Config({"data.dir": str(data_dir)})
    started, cpu_started = time.perf_counter(), time.process_time()
    runtime = group_runtime(config, SystemClock(), LogManager(data_dir, SystemClock()))
    await runtime.load_all()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    total = sum(s.records for s in runtime.stats.values())
    live = sum(len(shard.offsets) for shard in runtime.shards())
    n_groups = sum(len(shard.groups) for shard in runtime.shards())
    runtime.writer.close()
    return elapsed, cpu, total, live, n_groups


def kernels() -> str:
    return "pure Python" if native.KERNELS is native.kernels else "compiled"


async def empty_start(data_dir: Path) -> float:
    config = Config({"data.dir": str(data_dir)})
    started = time.perf_counter()
    runtime = group_runtime(config, SystemClock(), LogManager(data_dir, SystemClock()))
    await runtime.load_all()
    elapsed = time.perf_counter() - started
    runtime.writer.close()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--per-op", type=int, default=5)
    parser.add_argument("--ops-per-fsync", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None, help="data dir (default: a temp dir)")
    parser.add_argument("--repeat", type=int, default=1, help="with --load-only: loads in a row")
    parser.add_argument("--load-only", action="store_true", help="load --dir's data as a previous run left it")
    parser.add_argument(
        "--serve-gc", action="store_true", help="load under kgc serve's GC policy (runtime/gc_governor.install)"
    )
    args = parser.parse_args()
    if args.serve_gc:
        from coordinator.runtime import gc_governor

        gc_governor.install()
    if args.load_only:
        if args.dir is None:
            parser.error("--load-only needs --dir")
        for _ in range(args.repeat):
            elapsed, cpu, total, live, n_groups = await load(args.dir / "data")
            print(
                f"load:  {total} records in {elapsed:.2f} s wall, {cpu:.2f} s CPU = "
                f"{total / cpu:,.0f} records/s per CPU second ({kernels()} kernels)"
            )
        return
    root = args.dir or Path(tempfile.mkdtemp(prefix="offsets-bench-"))
    try:
        print(f"empty data dir start: {await empty_start(root / 'empty') * 1000:.1f} ms")
        data_dir = root / "data"
        w = await write(data_dir, args.records, args.groups, args.topics, args.per_op, args.ops_per_fsync)
        size = sum(f.stat().st_size for f in data_dir.rglob("*.log"))
        print(
            f"write: {args.records} records in {w:.2f} s = {args.records / w:,.0f} records/s "
            f"({args.per_op} per batch, {size / 2**20:.1f} MiB of .log)"
        )
        elapsed, cpu, total, live, n_groups = await load(data_dir)
        print(
            f"load:  {total} records in {elapsed:.2f} s = {total / elapsed:,.0f} records/s wall, "
            f"{cpu:.2f} s CPU = {total / cpu:,.0f} records/s per CPU second "
            f"({live} live offsets, {n_groups} groups, 50 partitions; {kernels()} kernels)"
        )
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    trio.run(main)
