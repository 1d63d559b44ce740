"""Storage benchmarks: print figures, never pass/fail.

    .venv/bin/python bench/storage_bench.py [--recovery-mib 1024] [--profile]

Figures: appends with an fsync per append and with trio group commit (many concurrent
appenders), sequential read MiB/s, offset-index lookup µs, recovery MiB/s of an unclean log
(generated in a temp dir and deleted afterwards). Wall-clock time is read here only, never in
storage/ itself.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import trio  # noqa: E402

from storage.batch import Record, assign_base_offset, encode_batch  # noqa: E402
from storage.log import Log, LogConfig  # noqa: E402
from storage.recovery import RECOVERY_POINT_FILE  # noqa: E402

MiB = 1 << 20


class WallClock:
    def time_ms(self) -> int:
        return time.time_ns() // 1_000_000


def small_record(i: int) -> list[Record]:
    # About the size of an OffsetCommit record in __consumer_offsets.
    return [
        Record(
            key=b"\x00\x01\x00\x08group-%03d\x00\x05topic\x00\x00\x00\x07" % (i % 1000),
            value=b"\x00\x03" + b"\x00" * 8 + b"\xff\xff\xff\xff\x00\x00" + b"\x00" * 8,
        )
    ]


def bench_every_append(tmp: str, n: int) -> None:
    log = Log.open(os.path.join(tmp, "every"), LogConfig(durability="every_append"), WallClock())

    async def run() -> None:
        for i in range(n):
            await log.wait_durable(log.append_records(small_record(i)))

    t0 = time.perf_counter()
    trio.run(run)
    dt = time.perf_counter() - t0
    size = log.size_bytes
    log.close()
    print(
        f"append, fsync per append:        {n / dt:10,.0f} batches/s  {size / MiB / dt:7.2f} MiB/s  "
        f"({n} batches of {size // n} B)"
    )


def bench_append_only(tmp: str, n: int) -> None:
    """No fsync, no trio: the CPU cost of encoding and writing one small batch."""
    log = Log.open(os.path.join(tmp, "plain"), LogConfig(), WallClock())
    records = [small_record(i) for i in range(1000)]
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        log.append_records(records[i % 1000])
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    log.close()
    print(f"append only (no fsync/trio): {n / dt:10,.0f} batches/s  {cpu / n * 1e6:.1f} CPU-µs/batch")


def bench_group_commit(tmp: str, appenders: int, per_appender: int, profile: bool, label: str = "") -> None:
    log = Log.open(
        os.path.join(tmp, "group" + label.replace(" ", "-")), LogConfig(durability="group_commit"), WallClock()
    )
    fsyncs = 0
    fsync_seconds = 0.0
    from storage import fsutil

    real = fsutil.fdatasync

    def counting(fd: int) -> None:
        nonlocal fsyncs, fsync_seconds
        fsyncs += 1
        t = time.perf_counter()
        real(fd)
        fsync_seconds += time.perf_counter() - t

    fsutil.fdatasync = counting

    async def appender(k: int) -> None:
        for i in range(per_appender):
            await log.wait_durable(log.append_records(small_record(k * per_appender + i)))

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            for k in range(appenders):
                nursery.start_soon(appender, k)

    prof = cProfile.Profile() if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    trio.run(run)
    if prof:
        prof.disable()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    fsutil.fdatasync = real
    n = appenders * per_appender
    size = log.size_bytes
    log.close()
    print(
        f"append, group commit{label}: {n / dt:10,.0f} batches/s  {size / MiB / dt:7.2f} MiB/s  "
        f"{cpu / n * 1e6:.1f} CPU-µs/batch  "
        f"({appenders} appenders x {per_appender}, {fsyncs} fsyncs, {n / max(fsyncs, 1):.0f} batches/fsync, "
        f"fsync avg {fsync_seconds / max(fsyncs, 1) * 1000:.1f} ms = {fsync_seconds / dt:.0%} of wall time)"
    )
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def bench_read_and_lookup(tmp: str) -> None:
    log = Log.open(os.path.join(tmp, "read"), LogConfig(segment_bytes=64 * MiB), WallClock())
    template = encode_batch(0, [Record(None, 1, b"k%d" % i, b"v" * 100) for i in range(8)])
    for _ in range(200_000):
        log.append_batch(template)
    size = log.size_bytes
    t0 = time.perf_counter()
    offset, total = 0, 0
    while offset < log.log_end_offset:
        chunk = log.read(offset, MiB)
        total += len(chunk)
        offset = _next_offset_after(chunk)
    dt = time.perf_counter() - t0
    print(
        f"read (1 MiB fetches):       {total / MiB / dt:10.1f} MiB/s  "
        f"({size / MiB:.0f} MiB, {len(log.segments)} segments)"
    )
    seg = log.segments[0]
    rng = random.Random(1)
    targets = [rng.randrange(seg.base_offset, seg.next_offset) for _ in range(100_000)]
    t0 = time.perf_counter()
    for t in targets:
        seg.offset_index.lookup(t)
    dt = time.perf_counter() - t0
    print(f"offset index lookup:        {dt / len(targets) * 1e6:10.2f} µs  ({len(seg.offset_index)} entries)")
    t0 = time.perf_counter()
    for t in targets[:20_000]:
        log.read(t, 1)
    dt = time.perf_counter() - t0
    print(f"read one batch at offset:   {dt / 20_000 * 1e6:10.2f} µs  (index floor + header scan + pread)")
    log.close()


def _next_offset_after(chunk: bytes) -> int:
    from storage.batch import decode_header

    pos, nxt = 0, 0
    while pos < len(chunk):
        h = decode_header(chunk, pos)
        nxt = h.next_offset
        pos += h.size
    return nxt


def bench_recovery(tmp: str, mib: int, batch_records: int, value_size: int, profile: bool) -> None:
    path = os.path.join(tmp, f"recover-{batch_records}x{value_size}")
    log = Log.open(path, LogConfig(), WallClock())
    template = encode_batch(0, [Record(None, 1, b"key-%d" % i, b"v" * value_size) for i in range(batch_records)])
    count = mib * MiB // len(template)
    seg = log.active_segment
    # Write the file directly in big chunks (same bytes append_batch would write).
    buf = bytearray()
    offset = 0
    with open(seg.log_path, "ab") as f:
        for _ in range(count):
            buf += assign_base_offset(template, offset)
            offset += batch_records
            if len(buf) >= 8 * MiB:
                f.write(buf)
                buf.clear()
        f.write(buf)
        os.fsync(f.fileno())
    log.abandon()
    if os.path.exists(os.path.join(path, RECOVERY_POINT_FILE)):
        os.unlink(os.path.join(path, RECOVERY_POINT_FILE))
    size = os.path.getsize(seg.log_path)
    prof = cProfile.Profile() if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    again = Log.open(path, LogConfig(), WallClock())
    if prof:
        prof.disable()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert again.log_end_offset == offset, (again.log_end_offset, offset)
    print(
        f"recovery (unclean, CRC):    {size / MiB / dt:10.1f} MiB/s wall, "
        f"{size / MiB / cpu:.1f} MiB/s per CPU-second  "
        f"({size / MiB:.0f} MiB in {dt:.2f} s, "
        f"{count:,} batches of {len(template)} B, {len(again.active_segment.offset_index):,} index entries)"
    )
    again.close()
    shutil.rmtree(path)
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--recovery-mib", type=int, default=1024)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="storage-bench-")
    default_gc = gc.get_threshold()
    try:
        bench_every_append(tmp, 2_000)
        bench_append_only(tmp, 100_000)
        bench_group_commit(tmp, appenders=500, per_appender=200, profile=args.profile)
        # Where the time goes: trio's per-wakeup allocations trigger many GC passes.
        gc.set_threshold(100_000, 50, 100)
        bench_group_commit(tmp, appenders=500, per_appender=200, profile=False, label=" (gc 100k)")
        gc.set_threshold(*default_gc)
        bench_read_and_lookup(tmp)
        bench_recovery(tmp, args.recovery_mib, batch_records=8, value_size=120, profile=args.profile)
        bench_recovery(tmp, max(args.recovery_mib // 4, 1), batch_records=1, value_size=40, profile=args.profile)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
