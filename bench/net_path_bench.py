"""CPU per request of kgc's connection path, in one process, against a bare trio echo of the same frames.

    .venv/bin/python bench/net_path_bench.py [--requests 20000] [--rounds 5] [--baseline DIR]

One trio loop holds this tree's server (no control plane, as `serve`) and a client task on a real
loopback TCP connection that sends one request and waits for its response (a synchronous client).
The same client drives, in turn: a bare trio server (recv_into, wait_readable when empty, send a
canned response: the floor), kgc's `serve_connection` with ApiVersions v3 (a cached answer, almost
no handler) and with Heartbeat v3, and `dispatch()` of the same frames called directly (no
sockets). Client and server share the process, so nothing sleeps between requests and the figures
(process CPU per request, best of `--rounds`) vary far less than cross-process ones on a busy VM:
kgc's path minus the bare echo is what kgc's own Python adds per request. What it cannot see:
the cost of going to sleep and being woken across processes (dear on a VM), which decides
changes such as when to wait for readability: check those with bench/request_bench.py. `--baseline DIR` runs
the same in a child process with DIR's modules first (A/B, interleaved round by round).
Figures only: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBSCRIPTION = struct.pack(">hih5si", 0, 1, 5, b"bench", -1)  # consumer protocol v0, topic "bench"


def _frame(key: int, version: int, request: object, cid: int = 1) -> bytes:
    from protocol.codec import encode_request
    from protocol.headers import RequestHeader, encode_request_header

    payload = encode_request_header(RequestHeader(key, version, cid, "bench")) + encode_request(key, version, request)
    return struct.pack(">i", len(payload)) + payload


async def _client(sock: Any, request: bytes, n: int) -> None:
    """Send `request`, read one whole response frame, `n` times (raw non-blocking socket in trio)."""
    import trio

    buf = bytearray(1 << 16)
    fd = sock.fileno()
    for _ in range(n):
        sock.send(request)
        got, need = 0, -1
        while need < 0 or got < need:
            try:
                got += sock.recv_into(memoryview(buf)[got:])
            except BlockingIOError:
                await trio.lowlevel.wait_readable(fd)
                continue
            if need < 0 and got >= 4:
                need = 4 + struct.unpack_from(">i", buf)[0]


class _StepCounter:
    def __init__(self) -> None:
        self.steps = self.waits = 0
        self.names: dict[str, int] = {}

    def before_task_step(self, task: Any) -> None:
        self.steps += 1
        self.names[task.name] = self.names.get(task.name, 0) + 1

    def before_io_wait(self, timeout: float) -> None:
        self.waits += 1


async def _bare_echo(sock: Any, response: bytes) -> None:
    """The floor: read a frame (any size), answer `response`."""
    import trio

    buf = bytearray(1 << 16)
    fd = sock.fileno()
    while True:
        try:
            n = sock.recv_into(buf)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(fd)
            continue
        if n == 0:
            return
        sock.send(response)


async def _pair() -> tuple[Any, Any]:
    import trio

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    listener.close()
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
    await trio.lowlevel.checkpoint()
    return client, server


async def _measure(kind: str, broker: Any, request: bytes, response: bytes, n: int) -> float:
    import trio

    from coordinator.net.connection import ListenerShared, serve_connection
    from coordinator.net.idle import ConnectionWatch
    from coordinator.net.request_memory import RequestMemory

    client, server = await _pair()
    async with trio.open_nursery() as nursery:
        if kind == "bare":
            nursery.start_soon(_bare_echo, server, response)
        else:
            stream = trio.SocketStream(trio.socket.from_stdlib_socket(server))
            shared = ListenerShared(RequestMemory(broker.config.queued_max_request_bytes), ConnectionWatch(600_000))
            nursery.start_soon(serve_connection, stream, broker, shared)
        await _client(client, request, 200)  # warm up
        counter = _StepCounter()
        if os.environ.get("NET_PATH_STEPS"):
            trio.lowlevel.add_instrument(counter)
        began = time.process_time()
        await _client(client, request, n)
        spent = time.process_time() - began
        if os.environ.get("NET_PATH_STEPS"):
            trio.lowlevel.remove_instrument(counter)
            print(
                f"# {kind}: {counter.steps / n:.2f} task steps, {counter.waits / n:.2f} io waits per request",
                file=sys.stderr,
            )
        client.close()
    if kind == "bare":
        server.close()
    return spent / n * 1e6


async def _measure_dispatch(broker: Any, request: bytes, n: int) -> float:
    import trio

    from coordinator.net.dispatch import Connection, dispatch

    conn = Connection(1, "127.0.0.1")
    payload = request[4:]
    began = time.process_time()
    for _ in range(n):
        await dispatch(payload, conn, broker)
        await trio.lowlevel.checkpoint()  # the one scheduler pass a socket request costs at least
    return (time.process_time() - began) / n * 1e6


def run_here(requests: int, rounds: int) -> dict[str, float]:
    import trio

    from coordinator.config import Config
    from coordinator.net.dispatch import Connection, dispatch
    from coordinator.server import serve
    from protocol.api import ApiKey
    from protocol.codec import decode_response
    from protocol.messages.api_versions import ApiVersionsRequest
    from protocol.messages.heartbeat import HeartbeatRequest
    from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
    from protocol.messages.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment

    async def call(broker: Any, key: int, version: int, request: object) -> Any:
        answer = await dispatch(_frame(key, version, request)[4:], Connection(1, "127.0.0.1"), broker)
        assert answer is not None
        return decode_response(key, version, answer[1], 0)

    async def main(root: str) -> dict[str, float]:
        config = Config({"data.dir": root, "host": "127.0.0.1", "port": 0, "log.flush.mode": "interval"})
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve, config, {"bench": 32})
            try:
                await server.runtime.loaded.wait()
                broker = server.broker
                protocols = [JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)]
                joining = JoinGroupRequest(
                    group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id="",
                    protocol_type="consumer", protocols=protocols,
                )  # fmt: skip
                joining.member_id = (await call(broker, ApiKey.JOIN_GROUP, 5, joining)).member_id
                joined = await call(broker, ApiKey.JOIN_GROUP, 5, joining)
                assignment = [SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"")]
                sync = SyncGroupRequest(
                    group_id="g", generation_id=joined.generation_id, member_id=joined.member_id, assignments=assignment
                )
                await call(broker, ApiKey.SYNC_GROUP, 3, sync)
                requests_by_name = {
                    "ApiVersions v3": _frame(
                        ApiKey.API_VERSIONS,
                        3,
                        ApiVersionsRequest(client_software_name="b", client_software_version="1"),
                    ),
                    "Heartbeat v3": _frame(
                        ApiKey.HEARTBEAT,
                        3,
                        HeartbeatRequest(group_id="g", generation_id=joined.generation_id, member_id=joined.member_id),
                    ),
                    "OffsetCommit v8 32p": _frame(
                        ApiKey.OFFSET_COMMIT,
                        8,
                        OffsetCommitRequest(
                            group_id="g",
                            generation_id_or_member_epoch=joined.generation_id,
                            member_id=joined.member_id,
                            topics=[
                                OffsetCommitRequestTopic(
                                    name="bench",
                                    partitions=[
                                        OffsetCommitRequestPartition(
                                            partition_index=p, committed_offset=100 + p, committed_metadata="bench"
                                        )
                                        for p in range(32)
                                    ],
                                )
                            ],
                        ),
                    ),
                }
                results: dict[str, float] = {}
                for _ in range(rounds):
                    for name, request in requests_by_name.items():
                        answer = await dispatch(request[4:], Connection(1, "127.0.0.1"), broker)
                        assert answer is not None
                        response = struct.pack(">i", len(answer[0]) + len(answer[1])) + answer[0] + answer[1]
                        for label, cost in (
                            (
                                f"bare trio echo ({name} sizes)",
                                await _measure("bare", broker, request, response, requests),
                            ),
                            (f"kgc socket path {name}", await _measure("kgc", broker, request, response, requests)),
                            (f"dispatch()+checkpoint {name}", await _measure_dispatch(broker, request, requests)),
                        ):
                            results[label] = min(results.get(label, float("inf")), cost)
                return results
            finally:
                server.stop()

    with tempfile.TemporaryDirectory(prefix="kgc-net-path-bench-") as root:
        return trio.run(main, root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", metavar="DIR")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, os.getcwd())
        for label, cost in run_here(args.requests, 1).items():
            print(f"{label}\t{cost:.2f}", flush=True)
        return
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    trees = [("this tree", ROOT)] + ([("baseline", os.path.abspath(args.baseline))] if args.baseline else [])
    table: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.rounds):  # interleaved: one round of each tree in turn
        for name, tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", "--requests", str(args.requests)],
                env=env, cwd=tree, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            costs = dict(line.split("\t") for line in out.splitlines())
            for label, cost in list(costs.items()):
                if label.startswith("kgc socket path "):  # what kgc adds above the floor, this round
                    floor = costs[f"bare trio echo ({label.removeprefix('kgc socket path ')} sizes)"]
                    costs[f"  kgc minus bare echo {label.removeprefix('kgc socket path ')}"] = float(cost) - float(
                        floor
                    )
            for label, cost in costs.items():
                table.setdefault(label, {}).setdefault(name, []).append(float(cost))
    for label, row in table.items():  # best of the rounds; the differences: their median
        pick = statistics.median if "minus" in label else min
        print(f"  {label:45s} " + "  ".join(f"{name}: {pick(costs):6.2f} us" for name, costs in row.items()))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
