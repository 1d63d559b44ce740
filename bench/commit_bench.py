"""OffsetCommit throughput, latency and server CPU: kgc against librdkafka's mock cluster (and an
earlier kgc checkout with --baseline), every server in its own process, in the same run.

    .venv/bin/python bench/commit_bench.py [--seconds 5] [--connections 64] [--baseline /work/wt/base]
        [--modes group_commit,interval] [--no-mock] [--only confluent|raw] [--profile PATH]

1. The disk: fdatasync latency of a small append in the data dir's filesystem (what a durable
   commit cannot beat: one client committing synchronously gets at most 1/latency per second).
2. One confluent-kafka consumer, a member of a group (subscribe, wait for the assignment),
   commits synchronously (`commit(offsets=..., asynchronous=False)`) 32 partitions per commit,
   then 1 partition per commit: commits/s, p50/p99 latency, server CPU per commit. For kgc with
   log.flush.mode=group_commit (the default: every reply waits for its fsync) and =interval (no
   fsync on the reply path), then the mock (memory only).
3. `--connections` raw-protocol connections (OffsetCommit v8, simple commits, one in flight
   each), all in one group and then each in its own group: aggregate commits/s (kgc only).
Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import Running, cpu_seconds, start_kgc, start_mock  # noqa: E402

from protocol.api import ApiKey  # noqa: E402
from protocol.codec import encode_request  # noqa: E402
from protocol.headers import RequestHeader, encode_request_header  # noqa: E402
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic  # noqa: E402

TOPIC, PARTITIONS = "bench", 32


class CpuMeter:
    """Server CPU per commit over one phase: robust on a busy machine, unlike commits/s."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> CpuMeter:
        self.start = cpu_seconds(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = cpu_seconds(self.pid) - self.start

    def per(self, n: int) -> float:
        return self.seconds / max(n, 1) * 1e6


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def fdatasync_latency(directory: str, samples: int = 300) -> tuple[float, float]:
    """(median, p99) seconds of append 200 bytes + fdatasync, as a commit's batch costs."""
    path = os.path.join(directory, "fdatasync-probe")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
    try:
        os.ftruncate(fd, 0)
        os.fsync(fd)
        times = []
        for _ in range(samples):
            os.write(fd, b"x" * 200)
            t = time.perf_counter()
            os.fdatasync(fd)
            times.append(time.perf_counter() - t)
    finally:
        os.close(fd)
        os.unlink(path)
    return statistics.median(times), _percentile(times, 0.99)


def confluent_commits(server: Running, seconds: float) -> dict[int, tuple[float, float, float, float]]:
    """width -> (commits/s, p50 s, p99 s, server CPU us per commit)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": server.bootstrap,
            "group.id": "bench-confluent",
            "enable.auto.commit": False,
            "session.timeout.ms": 30000,
            "log_level": 3,
        }
    )
    consumer.subscribe([TOPIC])
    deadline = time.monotonic() + 60
    while len(consumer.assignment()) < PARTITIONS:
        if time.monotonic() > deadline:
            raise SystemExit(f"{server.name}: the consumer was never assigned every partition")
        consumer.poll(0.05)
    results = {}
    for width in (PARTITIONS, 1):
        latencies: list[float] = []
        offset = 0
        end = time.monotonic() + seconds
        with CpuMeter(server.pid) as cpu:
            while time.monotonic() < end:
                offset += 1
                offsets = [TopicPartition(TOPIC, p, offset, metadata="bench") for p in range(width)]
                started = time.perf_counter()
                consumer.commit(offsets=offsets, asynchronous=False)
                latencies.append(time.perf_counter() - started)
        results[width] = (
            len(latencies) / sum(latencies),
            statistics.median(latencies),
            _percentile(latencies, 0.99),
            cpu.per(len(latencies)),
        )
    consumer.close()
    return results


def commit_frame(group: str, offset: int) -> bytes:
    header = encode_request_header(RequestHeader(ApiKey.OFFSET_COMMIT, 8, offset, "bench"))
    body = encode_request(
        ApiKey.OFFSET_COMMIT,
        8,
        OffsetCommitRequest(
            group_id=group,
            topics=[
                OffsetCommitRequestTopic(
                    name=TOPIC,
                    partitions=[
                        OffsetCommitRequestPartition(partition_index=offset % PARTITIONS, committed_offset=offset)
                    ],
                )
            ],
        ),
    )
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


async def one_connection(port: int, group: str, seconds: float, counts: list[int]) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    frames = [commit_frame(group, n) for n in range(1, 257)]
    buffer = bytearray()
    done = 0
    deadline = trio.current_time() + seconds
    while trio.current_time() < deadline:
        await stream.send_all(frames[done % len(frames)])
        while True:  # one commit in flight: wait for its answer
            if len(buffer) >= 4:
                size = struct.unpack_from(">i", buffer)[0]
                if len(buffer) >= 4 + size:
                    del buffer[: 4 + size]
                    break
            data = await stream.receive_some(1 << 16)
            if not data:
                raise SystemExit("the server closed a connection")
            buffer += data
        done += 1
    counts.append(done)
    await stream.aclose()


async def many_connections(server: Running, connections: int, seconds: float, same_group: bool) -> None:
    counts: list[int] = []
    started = trio.current_time()
    with CpuMeter(server.pid) as cpu:
        async with trio.open_nursery() as nursery:
            for i in range(connections):
                group = "bench-raw" if same_group else f"bench-raw-{i}"
                nursery.start_soon(one_connection, server.port, group, seconds, counts)
    elapsed = trio.current_time() - started
    where = "one group" if same_group else f"{connections} groups"
    print(
        f"  {server.name:14s} {connections} connections, 1 partition per commit, {where:10s}: "
        f"{sum(counts) / elapsed:8.0f} commits/s aggregate  server CPU {cpu.per(sum(counts)):5.0f} us/commit"
    )


def print_row(name: str, mode: str, results: dict[int, tuple[float, float, float, float]]) -> None:
    for width, (rate, p50, p99, cpu) in results.items():
        print(
            f"  {name:14s} {mode:13s} {width:3d}p {rate:9.0f}/s  p50 {p50 * 1e3:6.3f} ms  p99 {p99 * 1e3:6.3f} ms"
            f"  server CPU {cpu:5.0f} us/commit"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--only", choices=["confluent", "raw"], help="run one part only")
    parser.add_argument("--modes", default="group_commit,interval", help="kgc log.flush.mode values to run")
    parser.add_argument("--baseline", metavar="DIR", help="also run the kgc checked out in DIR (A/B)")
    parser.add_argument("--no-mock", action="store_true")
    parser.add_argument(
        "--profile", metavar="PATH", help="run this tree's server under cProfile, write stats to PATH, print the top"
    )
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    trees = [None] + ([args.baseline] if args.baseline else [])
    with tempfile.TemporaryDirectory(prefix="kgc-commit-bench-") as root:
        median, p99 = fdatasync_latency(root)
        print(
            f"disk: fdatasync after a 200-byte append: median {median * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms"
            f" -> at most {1 / median:,.0f} durable sync commits/s for one client"
        )
        if args.only != "raw":
            print("one confluent-kafka consumer, synchronous commits:")
            for tree in trees:
                for mode in args.modes.split(","):
                    data_dir = tempfile.mkdtemp(dir=root)
                    server = start_kgc(
                        data_dir,
                        settings={"log.flush.mode": mode},
                        topics={TOPIC: PARTITIONS},
                        baseline=tree,
                        profile=args.profile if tree is None else None,
                    )
                    try:
                        print_row(server.name, mode, confluent_commits(server, args.seconds))
                    finally:
                        server.stop()
            if not args.no_mock:
                mock = start_mock({TOPIC: PARTITIONS})
                try:
                    print_row("mock", "memory", confluent_commits(mock, args.seconds))
                finally:
                    mock.stop()
        if args.only != "confluent":
            print(f"{args.connections} raw connections (log.flush.mode=group_commit):")
            for tree in trees:
                server = start_kgc(tempfile.mkdtemp(dir=root), topics={TOPIC: PARTITIONS}, baseline=tree)
                try:
                    trio.run(many_connections, server, args.connections, args.seconds, True)
                    trio.run(many_connections, server, args.connections, args.seconds, False)
                finally:
                    server.stop()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.profile:
        import pstats

        pstats.Stats(args.profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
