"""ApiVersions round trips per second against a real `kgc serve` process.

    .venv/bin/python bench/server_bench.py [--seconds 5] [--window 32]

The server runs in its own process (as users run it); the load comes from this process over
loopback with raw frames, with `window` requests in flight per connection (pipelining), over 1
and over 16 connections. Prints requests/s; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import time

import trio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import start_kgc  # noqa: E402

from protocol.api import ApiKey
from protocol.codec import encode_request
from protocol.headers import RequestHeader, encode_request_header
from protocol.messages.api_versions import ApiVersionsRequest


def request_frame(version: int, correlation_id: int) -> bytes:
    header = encode_request_header(RequestHeader(ApiKey.API_VERSIONS, version, correlation_id, "bench"))
    body = encode_request(
        ApiKey.API_VERSIONS, version, ApiVersionsRequest(client_software_name="bench", client_software_version="1")
    )
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


async def drive(port: int, seconds: float, window: int, version: int) -> int:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    frame = request_frame(version, 1)
    done = 0
    buffer = bytearray()
    deadline = trio.current_time() + seconds
    await stream.send_all(frame * window)
    in_flight = window
    while True:
        data = await stream.receive_some(1 << 16)
        buffer += data
        answered = 0
        while len(buffer) >= 4:
            size = struct.unpack_from(">i", buffer)[0]
            if len(buffer) < 4 + size:
                break
            del buffer[: 4 + size]
            answered += 1
        done += answered
        in_flight -= answered
        if trio.current_time() < deadline:
            await stream.send_all(frame * answered)
            in_flight += answered
        elif in_flight == 0:
            break
    await stream.aclose()
    return done


async def measure(port: int, connections: int, seconds: float, window: int, version: int) -> float:
    results: list[int] = []

    async def one() -> None:
        results.append(await drive(port, seconds, window, version))

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(connections):
            nursery.start_soon(one)
    return sum(results) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--window", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        server = start_kgc(data_dir)
        port = server.port
        try:
            print(f"ApiVersions round trips, {args.window} in flight per connection, {args.seconds:.0f} s each")
            print(f"{'connections':>12} {'version':>8} {'requests/s':>12}")
            for connections in (1, 16):
                for version in (0, 3):
                    rate = trio.run(measure, port, connections, args.seconds, args.window, version)
                    print(f"{connections:>12} {version:>8} {rate:>12,.0f}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
