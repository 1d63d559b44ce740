"""Durable OffsetCommit throughput and latency against a real `kgc serve` process.

    .venv/bin/python bench/commit_bench.py [--seconds 5] [--connections 64]

1. One confluent-kafka consumer, a member of a group (subscribe, wait for the assignment),
   commits synchronously (`commit(offsets=..., asynchronous=False)`) 32 partitions per commit,
   then 1 partition per commit: commits/s, p50/p99 latency.
2. `--connections` raw-protocol connections (OffsetCommit v8, simple commits, one in flight
   each), all in one group and then each in its own group: aggregate commits/s.
Every commit is fsync'd before its answer (log.flush.mode=group_commit, the default): one fsync
covers every commit that arrived meanwhile. Prints figures; asserts nothing about speed.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol.api import ApiKey  # noqa: E402
from protocol.codec import encode_request  # noqa: E402
from protocol.headers import RequestHeader, encode_request_header  # noqa: E402
from protocol.messages.offset_commit import (  # noqa: E402
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)

TOPIC, PARTITIONS = "bench", 32


def start_server(data_dir: str, profile: str | None = None) -> tuple[subprocess.Popen, int]:
    prefix = ["-m", "cProfile", "-o", profile] if profile else []
    proc = subprocess.Popen(
        [sys.executable, *prefix, "-m", "coordinator", "serve", "--port", "0", "--data-dir", data_dir,
         "--log-level", "WARNING", "--create-topic", f"{TOPIC}:{PARTITIONS}"],
        stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    match = re.search(r"bootstrap=[\d.]+:(\d+)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, int(match.group(1))


def server_cpu_seconds(pid: int) -> float:
    """utime + stime of the server process (Linux /proc), all threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """Server CPU per commit over one phase: robust on a busy machine, unlike commits/s."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> CpuMeter:
        self.start = server_cpu_seconds(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = server_cpu_seconds(self.pid) - self.start

    def per(self, n: int) -> str:
        return f"server CPU {self.seconds / max(n, 1) * 1e6:.0f} us/commit"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def confluent_commits(port: int, seconds: float, pid: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "bench-confluent",
                         "enable.auto.commit": False, "session.timeout.ms": 30000})
    consumer.subscribe([TOPIC])
    deadline = time.monotonic() + 30
    while len(consumer.assignment()) < PARTITIONS:
        if time.monotonic() > deadline:
            raise SystemExit("the consumer was never assigned every partition")
        consumer.poll(0.1)
    for width in (PARTITIONS, 1):
        latencies: list[float] = []
        offset = 0
        end = time.monotonic() + seconds
        with CpuMeter(pid) as cpu:
            while time.monotonic() < end:
                offset += 1
                offsets = [TopicPartition(TOPIC, p, offset, metadata="bench") for p in range(width)]
                started = time.perf_counter()
                consumer.commit(offsets=offsets, asynchronous=False)
                latencies.append(time.perf_counter() - started)
        total = sum(latencies)
        print(f"confluent-kafka sync commit, {width:>2} partition(s): {len(latencies) / total:8.0f} commits/s"
              f"  p50 {statistics.median(latencies) * 1e3:.2f} ms  p99 {_percentile(latencies, 0.99) * 1e3:.2f} ms"
              f"  ({len(latencies)} commits, {cpu.per(len(latencies))})")
    consumer.close()


def commit_frame(group: str, offset: int) -> bytes:
    header = encode_request_header(RequestHeader(ApiKey.OFFSET_COMMIT, 8, offset, "bench"))
    body = encode_request(ApiKey.OFFSET_COMMIT, 8, OffsetCommitRequest(group_id=group, topics=[
        OffsetCommitRequestTopic(name=TOPIC, partitions=[
            OffsetCommitRequestPartition(partition_index=offset % PARTITIONS, committed_offset=offset)])]))
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
                    del buffer[:4 + size]
                    break
            data = await stream.receive_some(1 << 16)
            if not data:
                raise SystemExit("the server closed a connection")
            buffer += data
        done += 1
    counts.append(done)
    await stream.aclose()


async def many_connections(port: int, connections: int, seconds: float, same_group: bool,
                           pid: int) -> None:
    counts: list[int] = []
    started = trio.current_time()
    with CpuMeter(pid) as cpu:
        async with trio.open_nursery() as nursery:
            for i in range(connections):
                group = "bench-raw" if same_group else f"bench-raw-{i}"
                nursery.start_soon(one_connection, port, group, seconds, counts)
    elapsed = trio.current_time() - started
    where = "one group" if same_group else f"{connections} groups"
    print(f"{connections} connections, 1 partition per commit, {where}: "
          f"{sum(counts) / elapsed:8.0f} commits/s aggregate ({sum(counts)} commits, {cpu.per(sum(counts))})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--only", choices=["confluent", "raw"], help="run one part only")
    parser.add_argument("--profile", metavar="PATH",
                        help="run the server under cProfile, write stats to PATH, print the top")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgc-commit-bench-") as data_dir:
        proc, port = start_server(data_dir, args.profile)
        try:
            if args.only != "raw":
                confluent_commits(port, args.seconds, proc.pid)
            if args.only != "confluent":
                trio.run(many_connections, port, args.connections, args.seconds, True, proc.pid)
                trio.run(many_connections, port, args.connections, args.seconds, False, proc.pid)
        finally:
            proc.send_signal(signal.SIGINT)  # a clean stop (and cProfile writes its stats)
            proc.wait(30)
    if args.profile:
        import pstats
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
