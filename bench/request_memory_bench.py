"""Server memory with many large request frames in flight at once (issue 17).

    .venv/bin/python bench/request_memory_bench.py [--connections 8] [--mib 90] [--baseline DIR]

`--connections` connections each send one `--mib` MiB frame (a padded ApiVersions v0 request, which
Kafka answers) at the same time, as fast as the server reads them; every one is answered. The
server's peak RSS (VmHWM) is printed for this tree with the default queued.max.request.bytes, for
this tree without the bound (-1), and for --baseline. Figures only.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import time

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import Running, start_kgc  # noqa: E402

from protocol.api import ApiKey  # noqa: E402
from protocol.headers import RequestHeader, encode_request_header  # noqa: E402


def hwm_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def send_one(port: int, size: int, cid: int) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    payload = encode_request_header(RequestHeader(ApiKey.API_VERSIONS, 0, cid, "big"))
    frame = struct.pack(">i", size) + payload + b"\0" * (size - len(payload))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream.send_all, frame)
        buffer = b""
        while len(buffer) < 4 or len(buffer) < 4 + struct.unpack(">i", buffer[:4])[0]:
            chunk = await stream.receive_some(65536)
            if not chunk:
                raise SystemExit("the server closed a connection")
            buffer += chunk
    await stream.aclose()


async def load(server: Running, connections: int, size: int) -> float:
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for i in range(connections):
            nursery.start_soon(send_one, server.port, size, i + 1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--mib", type=int, default=90)
    parser.add_argument("--baseline", metavar="DIR")
    args = parser.parse_args()
    size = args.mib << 20
    runs: list[tuple[str, dict[str, object], str | None]] = [
        ("default bound", {}, None),
        ("no bound (-1)", {"queued.max.request.bytes": -1}, None),
    ]
    if args.baseline:
        runs.append(("baseline", {}, args.baseline))
    for label, settings, tree in runs:
        with tempfile.TemporaryDirectory() as data:
            server = start_kgc(data, settings=settings, baseline=tree)
            try:
                before = server.rss_mib()
                took = trio.run(load, server, args.connections, size)
                print(
                    f"{server.name:14s} {label:14s}: {args.connections} x {args.mib} MiB frames answered in "
                    f"{took:5.1f} s; server RSS before {before:6.1f} MiB, peak {hwm_mib(server.pid):7.1f} MiB, "
                    f"after {server.rss_mib():6.1f} MiB",
                    flush=True,
                )
            finally:
                server.stop()


if __name__ == "__main__":
    main()
