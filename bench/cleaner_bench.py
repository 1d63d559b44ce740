"""Log cleaner throughput: MiB/s of input and peak RSS of one compaction round.

Builds a compacted log in /tmp (default 1 GiB, 90% of records overwritten), then cleans it
in a fresh child process so that its peak RSS (getrusage ru_maxrss and /proc VmHWM) is the
cleaner's alone, prints the figures and deletes the log. Patterns:
  rounds  every key rewritten in each of 10 rounds (consumer-offset-like: whole batches die)
  random  each record picks a random key (most surviving batches are partially kept)
Never pass/fail on time (bench/ rule). Usage:
  .venv/bin/python bench/cleaner_bench.py [--size-mib 1024] [--pattern rounds|random]
      [--value-bytes 150] [--batch 10] [--dedupe-mib 128] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from storage.batch import Record, native  # noqa: E402
from storage.cleaner import Cleaner, CleanerConfig  # noqa: E402
from storage.log import Log, LogConfig  # noqa: E402


class Clock:
    def time_ms(self) -> int:
        return int(time.time() * 1000)


def config() -> LogConfig:
    # __consumer_offsets settings: 100 MiB segments, compact.
    return LogConfig(segment_bytes=100 << 20, cleanup_policy="compact", durability="interval")


def generate(path: str, size: int, pattern: str, value_bytes: int, batch: int, seed: int = 1) -> dict:
    rng = random.Random(seed)
    log = Log.open(path, config(), Clock())
    key_fmt = "group-%06d/topic-%04d/partition-%03d"
    record_size = len(key_fmt % (0, 0, 0)) + value_bytes + 10
    total_records = size // record_size
    keys = max(1, total_records // 10)  # 90% of the records are overwritten
    value = bytes(rng.getrandbits(8) for _ in range(value_bytes))
    written = 0
    t0 = time.perf_counter()
    order = list(range(keys))
    while log.size_bytes < size:
        if pattern == "rounds":
            rng.shuffle(order)
            stream = order
        else:
            stream = [rng.randrange(keys) for _ in range(keys)]
        for i in range(0, len(stream), batch):
            recs = [Record(key=(key_fmt % (k, k % 97, k % 50)).encode(), value=value) for k in stream[i : i + batch]]
            log.append_records(recs)
            written += len(recs)
            if log.size_bytes >= size:
                break
    log.roll()  # everything written becomes cleanable
    log.append_records([Record(key=b"tail", value=b"x")])
    log.close()
    return {"records": written, "keys": keys, "generate_s": round(time.perf_counter() - t0, 1)}


def clean_only(path: str, dedupe_mib: int, profile: bool) -> None:
    log = Log.open(path, config(), Clock())
    size_in = sum(s.size for s in log.non_active_segments())
    cleaner = Cleaner(CleanerConfig(dedupe_buffer_size=dedupe_mib << 20))
    r0, c0 = time.perf_counter(), time.process_time()
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile(time.process_time)
        stats = prof.runcall(cleaner.clean, log, force=True)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(15)
    else:
        stats = cleaner.clean(log, force=True)
    wall, cpu = time.perf_counter() - r0, time.process_time() - c0
    size_out = sum(s.size for s in log.non_active_segments())
    log.close()
    hwm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    print(
        json.dumps(
            {
                "input_mib": round(size_in / 2**20, 1),
                "output_mib": round(size_out / 2**20, 1),
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "mib_per_s": round(size_in / 2**20 / wall, 1),
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "vm_hwm_mib": round(hwm / 2**20, 1),
                "copied": stats.batches_copied,
                "rebuilt": stats.batches_rebuilt,
                "dropped": stats.batches_dropped,
                "emptied": stats.batches_emptied,
                "map_entries": stats.map_entries,
                "segments_in": stats.segments_in,
                "segments_out": stats.segments_out,
                "kernels": "compiled" if native.KERNELS is not native.kernels else "pure",
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--pattern", choices=["rounds", "random"], default="rounds")
    ap.add_argument("--value-bytes", type=int, default=150)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--dedupe-mib", type=int, default=128)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--clean-only", metavar="DIR")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it (for --clean-only A/B runs on copies)")
    args = ap.parse_args()
    if args.clean_only:
        clean_only(args.clean_only, args.dedupe_mib, args.profile)
        return
    root = args.keep or tempfile.mkdtemp(prefix="cleaner-bench-", dir="/tmp")
    path = os.path.join(root, "__consumer_offsets-0")
    try:
        gen = generate(path, args.size_mib << 20, args.pattern, args.value_bytes, args.batch)
        print(
            json.dumps({"pattern": args.pattern, "value_bytes": args.value_bytes, "batch": args.batch, **gen}),
            flush=True,
        )
        if args.keep:
            return
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--clean-only",
            path,
            "--dedupe-mib",
            str(args.dedupe_mib),
        ] + (["--profile"] if args.profile else [])
        subprocess.run(cmd, check=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
