"""Restart cost: open every log of a data dir after a simulated kill -9 vs after a clean close.

For each total size (default 0, 100 MiB and 1 GiB) spread over 50 `__consumer_offsets`-like
partitions (100 MiB segments, compact, group commit): write the data, run one recovery-point
checkpoint as the running server does every log.flush.offset.checkpoint.interval.ms (skipped
with --no-checkpoint, or where the storage has no Log.checkpoint), write `--tail-kib` more per
partition, then abandon every log (no flush, no trim, no marker: what kill -9 leaves) and time
opening all 50 (unclean); close them cleanly and time opening all 50 again (clean). Files are
warm in the page cache for both. Figures only, never pass/fail (bench/ rule).
Usage: .venv/bin/python bench/recovery_bench.py [--sizes-mib 0 100 1024] [--partitions 50]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import trio  # noqa: E402

from storage.batch import Record, assign_base_offset, encode_batch  # noqa: E402
from storage.log import Log, LogConfig  # noqa: E402

MiB = 1 << 20


class WallClock:
    def time_ms(self) -> int:
        return time.time_ns() // 1_000_000


def config() -> LogConfig:
    return LogConfig(segment_bytes=100 * MiB, cleanup_policy="compact", durability="group_commit")


def template() -> bytes:
    """A batch like one OffsetCommit operation: 5 records of ~110 bytes (about 700 bytes)."""
    return encode_batch(
        0,
        [
            Record(
                None,
                1_700_000_000_000,
                b"\x00\x01\x00\x08group-%03d\x00\x05topic\x00\x00\x00%c" % (i, i),
                b"\x00\x03" + b"\x00" * 90,
            )
            for i in range(5)
        ],
    )


def open_all(root: str, partitions: int) -> tuple[list[Log], float]:
    t0 = time.perf_counter()
    logs = [Log.open(os.path.join(root, f"__consumer_offsets-{n}"), config(), WallClock()) for n in range(partitions)]
    return logs, time.perf_counter() - t0


def write(logs: list[Log], per_partition: int, batch: bytes) -> None:
    for log in logs:
        for _ in range(per_partition // len(batch)):
            log.append_batch(assign_base_offset(batch, 0))


def run(root: str, size: int, partitions: int, tail: int, checkpoint: bool) -> None:
    batch = template()
    logs, _ = open_all(root, partitions)
    write(logs, size // partitions, batch)
    checkpointed = checkpoint and hasattr(Log, "checkpoint")
    if checkpointed:

        async def all_checkpoints() -> None:
            for log in logs:
                await log.checkpoint()  # type: ignore[attr-defined]

        trio.run(all_checkpoints)
    write(logs, tail, batch)
    on_disk = sum(log.size_bytes for log in logs)
    for log in logs:
        log.abandon()
    logs, unclean = open_all(root, partitions)
    for log in logs:
        log.close()
    logs, clean = open_all(root, partitions)
    for log in logs:
        log.close()
    print(
        f"{on_disk / MiB:8.1f} MiB in {partitions} partitions "
        f"({'checkpoint' if checkpointed else 'no checkpoint'}, {tail // 1024} KiB after it per partition): "
        f"unclean {unclean * 1000:8.1f} ms   clean {clean * 1000:8.1f} ms   "
        f"ratio {unclean / clean:5.2f}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-mib", type=int, nargs="+", default=[0, 100, 1024])
    ap.add_argument("--partitions", type=int, default=50)
    ap.add_argument("--tail-kib", type=int, default=64)
    ap.add_argument("--no-checkpoint", action="store_true")
    args = ap.parse_args()
    for mib in args.sizes_mib:
        root = tempfile.mkdtemp(prefix="recovery-bench-", dir="/tmp")
        try:
            run(root, mib * MiB, args.partitions, args.tail_kib * 1024, not args.no_checkpoint)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
