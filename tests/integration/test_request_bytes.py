"""Issue 17: request bytes held across all connections are bounded (queued.max.request.bytes:
past it connections wait, so the server does not grow), and a frame still arriving after
connections.max.idle.ms is dropped (a slow-loris sender cannot hold its memory for ever)."""

from __future__ import annotations

import struct

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.headers import RequestHeader, encode_request_header
from tests.integration.raw_client import RawClient

DEADLINE = 20  # seconds: a safety net against hangs, never a timing assertion


async def wait_until(predicate, what: str) -> None:
    with trio.fail_after(DEADLINE):
        while not predicate():
            await trio.sleep(0.002)  # polling a condition under a deadline, not a timed wait


def padded_api_versions(size: int, correlation_id: int) -> bytes:
    """A `size`-byte ApiVersions v0 request: header, empty body, then padding Kafka ignores."""
    payload = encode_request_header(RequestHeader(ApiKey.API_VERSIONS, 0, correlation_id, "big"))
    return struct.pack(">i", size) + payload + b"\0" * (size - len(payload))


async def test_connections_wait_for_request_memory_instead_of_growing_the_server(tmp_path):
    capacity, size = 1 << 20, 900 * 1024  # room for one such frame, not two
    async with open_server(tmp_path, settings={"queued.max.request.bytes": capacity}) as server:
        memory = server.request_memory
        first = await RawClient.connect(server.host, server.port)
        second = await RawClient.connect(server.host, server.port)
        one, two = padded_api_versions(size, 1), padded_api_versions(size, 2)
        await first.send_raw(one[:4096])
        await wait_until(lambda: memory.used == size, "the first frame's reservation")
        await second.send_raw(two[:4096])
        await wait_until(lambda: memory.waiting == 1, "the second connection waiting for memory")
        assert memory.used == size  # the second frame's body is not being buffered
        await first.send_raw(one[4096:])
        assert await first.receive_frame() is not None  # answered; its memory comes back
        await wait_until(lambda: memory.waiting == 0, "the second connection's turn")
        await second.send_raw(two[4096:])
        assert await second.receive_frame() is not None
        await wait_until(lambda: memory.used == 0, "every reservation given back")
        assert memory.peak <= capacity
        await first.aclose()
        await second.aclose()


@pytest.mark.trio
async def test_a_frame_still_arriving_after_max_idle_is_dropped(tmp_path, autojump_clock):
    settings = {"connections.max.idle.ms": 300, "log.flush.mode": "interval"}
    async with open_server(tmp_path, settings=settings) as server:
        client = await RawClient.connect(server.host, server.port)
        await client.send_raw(struct.pack(">i", 100) + b"\0")
        closed = False
        for _ in range(60):  # one byte every 100 ms (virtual): the frame would take 10 s to arrive
            await trio.sleep(0.1)
            try:
                await client.send_raw(b"\0")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                closed = True
                break
            with trio.move_on_after(0):
                if await client.receive_frame() is None:
                    closed = True
                    break
        assert closed, "a frame trickling in byte by byte kept its connection open"
        await client.aclose()
        other = await RawClient.connect(server.host, server.port)  # the server still serves
        await other.send_raw(padded_api_versions(64, 3))
        assert await other.receive_frame() is not None
        await other.aclose()
