"""Server CPU per request on the hot paths: Heartbeat and a 32-partition OffsetCommit, kgc against
librdkafka's mock cluster (and an earlier kgc checkout with --baseline), in the same run.

    .venv/bin/python bench/request_bench.py [--seconds 3] [--baseline DIR] [--no-mock] [--window 1]
        [--mode interval] [--profile PATH] [--in-process]

One member joins a group over the raw protocol (JoinGroup v5, SyncGroup v3, blocking sockets so the
load generator costs little), then sends Heartbeat v3 back-to-back for `--seconds`, then
OffsetCommit v8 with 32 partitions (its generation and member id) back-to-back. `--window` requests
are in flight at once (1: a synchronous client). kgc runs with log.flush.mode=`--mode` (interval:
no fsync on the reply path, the setting the issue's CPU targets name). Prints requests/s, p50/p99
and server CPU per request (utime+stime of the server process / requests): the last is robust on a
busy machine. Asserts nothing about speed. `--in-process` also runs this tree's server in this
process (no control plane, as `serve`) and times `dispatch()` of the same frames, no sockets:
process CPU per request, best of 9 runs, which varies far less with the machine's state.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import Running, start_kgc, start_mock  # noqa: E402

from protocol.api import ApiKey  # noqa: E402
from protocol.codec import decode_response, encode_request  # noqa: E402
from protocol.errors import ErrorCode  # noqa: E402
from protocol.headers import RequestHeader, decode_response_header, encode_request_header  # noqa: E402
from protocol.messages.heartbeat import HeartbeatRequest  # noqa: E402
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol  # noqa: E402
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic  # noqa: E402
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment  # noqa: E402

TOPIC, PARTITIONS = "bench", 32
SUBSCRIPTION = struct.pack(">hih5si", 0, 1, 5, b"bench", -1)


class Client:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.cid = 0

    def frame(self, key: int, version: int, request: object) -> bytes:
        self.cid += 1
        payload = encode_request_header(RequestHeader(key, version, self.cid, "bench")) + encode_request(
            key, version, request
        )
        return struct.pack(">i", len(payload)) + payload

    def read(self) -> bytes:
        while True:
            if len(self.buf) >= 4:
                (size,) = struct.unpack_from(">i", self.buf)
                if len(self.buf) >= 4 + size:
                    payload = bytes(self.buf[4 : 4 + size])
                    del self.buf[: 4 + size]
                    return payload
            data = self.sock.recv(1 << 16)
            if not data:
                raise SystemExit("the server closed the connection")
            self.buf += data

    def call(self, key: int, version: int, request: object) -> object:
        self.sock.sendall(self.frame(key, version, request))
        payload = self.read()
        _, offset = decode_response_header(payload, key, version)
        return decode_response(key, version, payload, offset)


def join(client: Client, group: str) -> tuple[str, int]:
    member = ""
    for _ in range(5):
        response = client.call(
            ApiKey.JOIN_GROUP,
            5,
            JoinGroupRequest(
                group_id=group,
                session_timeout_ms=30000,
                rebalance_timeout_ms=30000,
                member_id=member,
                protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
            ),
        )
        if response.error_code == ErrorCode.MEMBER_ID_REQUIRED:  # type: ignore[attr-defined]
            member = response.member_id  # type: ignore[attr-defined]
            continue
        if response.error_code != ErrorCode.NONE:  # type: ignore[attr-defined]
            raise SystemExit(f"JoinGroup: {response}")
        member, generation = response.member_id, response.generation_id  # type: ignore[attr-defined]
        synced = client.call(
            ApiKey.SYNC_GROUP,
            3,
            SyncGroupRequest(
                group_id=group,
                generation_id=generation,
                member_id=member,
                assignments=[SyncGroupRequestAssignment(member_id=member, assignment=b"")],
            ),
        )
        if synced.error_code != ErrorCode.NONE:  # type: ignore[attr-defined]
            raise SystemExit(f"SyncGroup: {synced}")
        return member, generation
    raise SystemExit("JoinGroup never succeeded")


def run_phase(
    server: Running, client: Client, frames: list[bytes], seconds: float, window: int
) -> tuple[float, float, float, float]:
    """(requests/s, p50 s, p99 s, server CPU us/request), `window` in flight."""
    latencies: list[float] = []
    cpu0 = server.cpu_seconds()
    began = time.perf_counter()
    end = began + seconds
    n = 0
    sent_at: list[float] = []
    for i in range(window):
        sent_at.append(time.perf_counter())
        client.sock.sendall(frames[i % len(frames)])
    while True:
        client.read()
        now = time.perf_counter()
        latencies.append(now - sent_at.pop(0))
        n += 1
        if now < end:
            sent_at.append(time.perf_counter())
            client.sock.sendall(frames[n % len(frames)])
        elif not sent_at:
            break
    wall = time.perf_counter() - began
    cpu = server.cpu_seconds() - cpu0
    ordered = sorted(latencies)
    return n / wall, statistics.median(ordered), ordered[int(0.99 * (len(ordered) - 1))], cpu / n * 1e6


def bench_server(server: Running, seconds: float, window: int) -> dict[str, tuple[float, float, float, float]]:
    client = Client(server.port)
    group = f"request-bench-{time.monotonic_ns()}"
    member, generation = join(client, group)
    heartbeats = [
        client.frame(ApiKey.HEARTBEAT, 3, HeartbeatRequest(group_id=group, generation_id=generation, member_id=member))
        for _ in range(64)
    ]
    commits = [
        client.frame(
            ApiKey.OFFSET_COMMIT,
            8,
            OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=generation,
                member_id=member,
                topics=[
                    OffsetCommitRequestTopic(
                        name=TOPIC,
                        partitions=[
                            OffsetCommitRequestPartition(
                                partition_index=p, committed_offset=i * 100 + p, committed_metadata="bench"
                            )
                            for p in range(PARTITIONS)
                        ],
                    )
                ],
            ),
        )
        for i in range(64)
    ]
    results = {
        "Heartbeat": run_phase(server, client, heartbeats, seconds, window),
        "OffsetCommit 32p": run_phase(server, client, commits, seconds, window),
    }
    client.sock.close()
    return results


def bench_in_process(mode: str) -> dict[str, float]:
    """CPU us per request of dispatch() alone (decode, handler, op, append, encode), best of 9."""
    import trio

    from coordinator.config import Config
    from coordinator.net.dispatch import Connection, dispatch
    from coordinator.server import serve
    from protocol.headers import RequestHeader as Header

    def frame(key: int, version: int, request: object) -> bytes:
        return encode_request_header(Header(key, version, 1, "bench")) + encode_request(key, version, request)

    async def call(broker: object, conn: Connection, key: int, version: int, request: object) -> object:
        answer = await dispatch(frame(key, version, request), conn, broker)  # type: ignore[arg-type]
        assert answer is not None
        return decode_response(key, version, answer[1], 0)

    async def run(root: str) -> dict[str, float]:
        config = Config({"data.dir": root, "host": "127.0.0.1", "port": 0, "log.flush.mode": mode})
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve, config, {TOPIC: PARTITIONS})
            try:
                await server.runtime.loaded.wait()
                broker, conn = server.broker, Connection(1, "127.0.0.1")
                protocols = [JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)]
                joining = JoinGroupRequest(
                    group_id="g",
                    session_timeout_ms=30000,
                    rebalance_timeout_ms=30000,
                    member_id="",
                    protocol_type="consumer",
                    protocols=protocols,
                )
                joining.member_id = (await call(broker, conn, ApiKey.JOIN_GROUP, 5, joining)).member_id  # type: ignore[attr-defined]
                joined: Any = await call(broker, conn, ApiKey.JOIN_GROUP, 5, joining)
                member, generation = joined.member_id, joined.generation_id
                await call(
                    broker,
                    conn,
                    ApiKey.SYNC_GROUP,
                    3,
                    SyncGroupRequest(
                        group_id="g",
                        generation_id=generation,
                        member_id=member,
                        assignments=[SyncGroupRequestAssignment(member_id=member, assignment=b"")],
                    ),
                )
                phases = {
                    "Heartbeat": [
                        frame(
                            ApiKey.HEARTBEAT,
                            3,
                            HeartbeatRequest(group_id="g", generation_id=generation, member_id=member),
                        )
                    ],
                    "OffsetCommit 32p": [
                        frame(
                            ApiKey.OFFSET_COMMIT,
                            8,
                            OffsetCommitRequest(
                                group_id="g",
                                generation_id_or_member_epoch=generation,
                                member_id=member,
                                topics=[
                                    OffsetCommitRequestTopic(
                                        name=TOPIC,
                                        partitions=[
                                            OffsetCommitRequestPartition(
                                                partition_index=p,
                                                committed_offset=i * 100 + p,
                                                committed_metadata="bench",
                                            )
                                            for p in range(PARTITIONS)
                                        ],
                                    )
                                ],
                            ),
                        )
                        for i in range(64)
                    ],
                }
                results = {}
                for what, frames in phases.items():
                    best = float("inf")
                    for _ in range(9):
                        began = time.process_time()
                        for i in range(2000):
                            await dispatch(frames[i % len(frames)], conn, broker)
                        best = min(best, (time.process_time() - began) / 2000 * 1e6)
                    results[what] = best
                return results
            finally:
                server.stop()

    with tempfile.TemporaryDirectory(prefix="kgc-request-bench-") as root:
        return trio.run(run, root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--window", type=int, default=1)
    parser.add_argument("--mode", default="interval", help="kgc log.flush.mode")
    parser.add_argument("--baseline", metavar="DIR")
    parser.add_argument("--no-mock", action="store_true")
    parser.add_argument("--repeat", type=int, default=1, help="run every server this many times")
    parser.add_argument("--profile", metavar="PATH", help="run this tree's server under cProfile")
    parser.add_argument(
        "--in-process", action="store_true", help="also time dispatch() of this tree in this process (no sockets)"
    )
    args = parser.parse_args()
    print(
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs); "
        f"window {args.window}, kgc log.flush.mode={args.mode}"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgc-request-bench-") as root:
        for _ in range(args.repeat):
            servers = [
                lambda: start_kgc(
                    tempfile.mkdtemp(dir=root),
                    settings={"log.flush.mode": args.mode},
                    topics={TOPIC: PARTITIONS},
                    profile=args.profile,
                )
            ]
            if args.baseline:
                servers.append(
                    lambda: start_kgc(
                        tempfile.mkdtemp(dir=root),
                        settings={"log.flush.mode": args.mode},
                        topics={TOPIC: PARTITIONS},
                        baseline=args.baseline,
                    )
                )
            if not args.no_mock:
                servers.append(lambda: start_mock({TOPIC: PARTITIONS}))
            for start in servers:
                server = start()
                try:
                    for what, (rate, p50, p99, cpu) in bench_server(server, args.seconds, args.window).items():
                        rows.append((server.name, what, rate, p50, p99, cpu))
                        print(
                            f"  {server.name:16s} {what:17s} {rate:8.0f}/s  p50 {p50 * 1e3:6.3f} ms  "
                            f"p99 {p99 * 1e3:6.3f} ms  server CPU {cpu:6.1f} us/request",
                            flush=True,
                        )
                finally:
                    server.stop()
    if args.in_process:
        for what, cpu in bench_in_process(args.mode).items():
            print(
                f"  {'kgc in process':16s} {what:17s} dispatch() only, no sockets: CPU {cpu:6.1f} us/request "
                "(best of 9)",
                flush=True,
            )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.profile:
        import pstats

        pstats.Stats(args.profile).sort_stats("tottime").print_stats(35)


if __name__ == "__main__":
    main()
