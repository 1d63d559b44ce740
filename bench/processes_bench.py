"""Every core: `--connections` clients committing into as many groups, against a 2-broker cluster
in one process and against the same cluster with `--processes` (one process per broker).

    .venv/bin/python bench/processes_bench.py [--seconds 10] [--connections 64] [--brokers 2]
        [--workers 2] [--modes interval,group_commit]

Each client asks the bootstrap broker for its group's coordinator (FindCoordinator v1), connects
to that broker and commits one partition per OffsetCommit v8 (a simple commit, one in flight)
for `--seconds`. The clients run in `--workers` processes of their own (trio, raw protocol), so
the load generator does not sit on one core. Prints aggregate commits/s and the server's CPU
(every process of it) per commit. Figures only.

    .venv/bin/python bench/processes_bench.py --topic-changes [--partitions 100,1000,5000]

What a topic change costs the broker processes (coordinator/cluster/shared_topics.py), in one
process on a data dir of that many partitions: one CreateTopics under the lock (with its
fsyncs), another process's catch-up (the rescan), and the check that finds nothing new.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import cpu_seconds, start_kgc  # noqa: E402

from protocol.api import ApiKey  # noqa: E402
from protocol.codec import decode_response, encode_request  # noqa: E402
from protocol.headers import RequestHeader, decode_response_header, encode_request_header  # noqa: E402
from protocol.messages.find_coordinator import FindCoordinatorRequest  # noqa: E402
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic  # noqa: E402

TOPIC, PARTITIONS = "bench", 32


def frame(key: int, version: int, request: object, cid: int) -> bytes:
    payload = encode_request_header(RequestHeader(key, version, cid, "bench")) + encode_request(key, version, request)
    return struct.pack(">i", len(payload)) + payload


async def read_frame(stream: trio.SocketStream, buffer: bytearray) -> bytes:
    while True:
        if len(buffer) >= 4:
            (size,) = struct.unpack_from(">i", buffer)
            if len(buffer) >= 4 + size:
                data = bytes(buffer[4 : 4 + size])
                del buffer[: 4 + size]
                return data
        chunk = await stream.receive_some(1 << 16)
        if not chunk:
            raise SystemExit("the server closed a connection")
        buffer += chunk


async def client(bootstrap_port: int, group: str, until: float, counts: list[int]) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", bootstrap_port)
    buffer = bytearray()
    await stream.send_all(frame(ApiKey.FIND_COORDINATOR, 1, FindCoordinatorRequest(key=group), 1))
    data = await read_frame(stream, buffer)
    _, offset = decode_response_header(data, ApiKey.FIND_COORDINATOR, 1)
    found = decode_response(ApiKey.FIND_COORDINATOR, 1, data, offset)
    if found.error_code:
        raise SystemExit(f"FindCoordinator {group}: error {found.error_code}")
    if found.port != bootstrap_port:
        await stream.aclose()
        stream = await trio.open_tcp_stream("127.0.0.1", found.port)
    commits = [
        frame(
            ApiKey.OFFSET_COMMIT,
            8,
            OffsetCommitRequest(
                group_id=group,
                topics=[
                    OffsetCommitRequestTopic(
                        name=TOPIC,
                        partitions=[OffsetCommitRequestPartition(partition_index=n % PARTITIONS, committed_offset=n)],
                    )
                ],
            ),
            n,
        )
        for n in range(1, 257)
    ]
    done = 0
    while time.time() < until:
        await stream.send_all(commits[done % len(commits)])
        await read_frame(stream, buffer)
        done += 1
    counts.append(done)
    await stream.aclose()


async def worker(port: int, groups: list[str], until: float) -> int:
    counts: list[int] = []
    async with trio.open_nursery() as nursery:
        for group in groups:
            nursery.start_soon(client, port, group, until, counts)
    return sum(counts)


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and its children (the broker processes of --processes)."""
    total = cpu_seconds(pid)
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            for child in f.read().split():
                total += tree_cpu(int(child))
    except OSError:
        pass
    return total


def run(port: int, pid: int, connections: int, workers: int, seconds: float) -> tuple[float, float]:
    until = time.time() + 1.0 + seconds  # every worker starts within the second before
    groups = [f"bench-group-{i}" for i in range(connections)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--worker",
                str(port),
                str(until),
                json.dumps(groups[w::workers]),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    time.sleep(max(0.0, until - seconds - time.time()))
    cpu0 = tree_cpu(pid)
    total = sum(int(p.communicate()[0].strip() or 0) for p in procs)
    cpu = tree_cpu(pid) - cpu0
    return total / seconds, cpu / max(total, 1) * 1e6


def topic_changes(partitions: int, rounds: int = 5) -> None:
    from coordinator.cluster.cluster import BrokerNode
    from coordinator.cluster.shared_topics import shared_registry

    nodes = [BrokerNode(0, "h", 1), BrokerNode(1, "h", 2)]
    with tempfile.TemporaryDirectory(prefix="kgc-topic-changes-") as data:
        path = Path(data)
        creator, other = shared_registry(path, nodes, 0), shared_registry(path, nodes, 1)
        creator.load()
        for n in range(partitions // 100):
            creator.create(f"t{n}", 100)
        other.load()
        create = scan = idle = 0.0
        for n in range(rounds):
            t0 = time.perf_counter()
            creator.create(f"new-{n}", 1)
            t1 = time.perf_counter()
            assert other.catch_up()
            t2 = time.perf_counter()
            assert not other.catch_up()
            t3 = time.perf_counter()
            create, scan, idle = create + t1 - t0, scan + t2 - t1, idle + t3 - t2
        print(
            f"  {partitions:6d} partitions: CreateTopics {create / rounds * 1e3:7.2f} ms, the other's catch-up "
            f"{scan / rounds * 1e3:7.2f} ms, a check with nothing new {idle / rounds * 1e6:5.1f} us",
            flush=True,
        )


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        port, until, groups = int(sys.argv[2]), float(sys.argv[3]), json.loads(sys.argv[4])
        print(trio.run(worker, port, groups, until))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--brokers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--modes", default="interval,group_commit")
    parser.add_argument("--topic-changes", action="store_true", help="what a topic change costs instead")
    parser.add_argument("--partitions", default="100,1000,5000")
    args = parser.parse_args()
    if args.topic_changes:
        for partitions in map(int, args.partitions.split(",")):
            topic_changes(partitions)
        return
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    for mode in args.modes.split(","):
        for processes in (False, True):
            with tempfile.TemporaryDirectory(prefix="kgc-processes-bench-") as data:
                extra = ["--brokers", str(args.brokers)] + (["--processes"] if processes else [])
                server = start_kgc(data, settings={"log.flush.mode": mode}, topics={TOPIC: PARTITIONS}, extra=extra)
                try:
                    rate, cpu = run(server.port, server.pid, args.connections, args.workers, args.seconds)
                finally:
                    server.stop()
                where = f"{args.brokers} processes" if processes else "one process"
                print(
                    f"  {args.brokers} brokers in {where:12s} log.flush.mode={mode:12s}: {rate:8.0f} commits/s "
                    f"({args.connections} clients, {args.connections} groups)  server CPU {cpu:5.0f} us/commit",
                    flush=True,
                )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
