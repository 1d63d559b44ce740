"""Bad input costs one connection and nothing else: no crash, no hang, others keep being served.

Every case ends with a fresh connection getting a normal ApiVersions answer from the same server.
"""

from __future__ import annotations

import random
import resource
import struct

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.headers import RequestHeader, encode_request_header
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.metadata import MetadataRequest
from tests.integration.raw_client import RawClient

DEADLINE = 20  # seconds: a safety net against hangs, never a timing assertion


async def assert_still_serving(server) -> None:
    with trio.fail_after(DEADLINE):
        other = await RawClient.connect(server.host, server.port)
        response = await other.request(
            ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="probe", client_software_version="1")
        )
        assert response.error_code == ErrorCode.NONE
        await other.aclose()


async def assert_closed(client) -> None:
    with trio.fail_after(DEADLINE):
        assert await client.closed_by_server()


def header(api_key: int, version: int, correlation_id: int = 7, client_id: str = "bad") -> bytes:
    return encode_request_header(
        RequestHeader(api_key=api_key, api_version=version, correlation_id=correlation_id, client_id=client_id)
    )


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


async def test_truncated_frame_then_eof(server, client):
    await client.send_raw(struct.pack(">i", 100) + b"\x00" * 10)
    await client.stream.send_eof()
    await assert_closed(client)
    await assert_still_serving(server)


async def test_frame_size_over_the_maximum_closes_without_reading_it(server, client):
    await client.send_raw(struct.pack(">i", 200 * 1024 * 1024))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_negative_frame_size(server, client):
    await client.send_raw(struct.pack(">i", -5))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_unknown_api_key(server, client):
    await client.send_raw(framed(header(999, 0)))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_unsupported_version_of_another_api(server, client):
    await client.send_raw(framed(header(ApiKey.METADATA, 99)))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_trailing_bytes_after_a_valid_body_are_ignored_as_kafka_does(server, client):
    cid, data = client.encode(ApiKey.METADATA, 4, MetadataRequest(topics=None))
    await client.send_raw(framed(data[4:] + b"\x00\x01\x02"))
    response = await client.read_response(ApiKey.METADATA, 4, cid)
    assert [t.name for t in response.topics if not t.name.startswith("__")] == ["orders"]


async def test_librdkafka_all_topics_metadata_v12_with_stray_bytes(server, client):
    # The exact body librdkafka 2.16's AdminClient.list_topics() sends: null topics, flags and
    # tags, then 3 bytes Kafka never reads. Closing on it broke list_topics.
    await client.send_raw(framed(header(ApiKey.METADATA, 12, 3, "rdkafka") + bytes.fromhex("00000000010000")))
    response = await client.read_response(ApiKey.METADATA, 12, 3)
    assert [t.name for t in response.topics if not t.name.startswith("__")] == ["orders"]


async def test_huge_array_count_inside_a_body(server, client):
    # Metadata v1 topics array claiming 2^31-1 entries in a 4-byte body.
    await client.send_raw(framed(header(ApiKey.METADATA, 1) + struct.pack(">i", 2**31 - 1)))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_negative_string_length_inside_a_body(server, client):
    # Metadata v1 with one topic whose name length is -7.
    await client.send_raw(framed(header(ApiKey.METADATA, 1) + struct.pack(">ih", 1, -7)))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_truncated_header(server, client):
    await client.send_raw(framed(b"\x00\x03"))
    await assert_closed(client)
    await assert_still_serving(server)


async def test_random_garbage_frames(server):
    rng = random.Random(20261125)
    for _ in range(200):
        client = await RawClient.connect(server.host, server.port)
        garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        await client.send_raw(framed(garbage) + framed(garbage))
        await client.stream.send_eof()
        with trio.fail_after(DEADLINE):
            while await client.receive_frame() is not None:
                pass  # answered (some garbage is a valid request) or closed: both are fine
        await client.aclose()
    await assert_still_serving(server)


def _raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_a_thousand_silent_connections(server):
    _raise_fd_limit(4096)
    before = _rss_kib()
    silent = [await trio.open_tcp_stream(server.host, server.port) for _ in range(1000)]
    await assert_still_serving(server)
    grown_mib = (_rss_kib() - before) / 1024
    # Both ends live in this process: 2,000 sockets and 1,000 connection tasks.
    assert grown_mib < 64, f"RSS grew {grown_mib:.1f} MiB for 1,000 idle connections"
    for stream in silent:
        await stream.aclose()
    await assert_still_serving(server)


async def test_idle_connections_are_closed(tmp_path):
    async with open_server(tmp_path, settings={"connections.max.idle.ms": 200}) as server:
        clients = [await RawClient.connect(server.host, server.port) for _ in range(20)]
        for client in clients:
            await assert_closed(client)
            await client.aclose()
        await assert_still_serving(server)


@pytest.mark.parametrize("cut", range(0, 14))  # the body is 14 bytes: every proper prefix
async def test_body_cut_short_inside_a_valid_frame(server, client, cut):
    cid, data = client.encode(
        ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="abcdef", client_software_version="1.2.3")
    )
    payload = data[4:]
    header_len = len(header(ApiKey.API_VERSIONS, 3, cid, client.client_id))
    assert len(payload) - header_len == 14
    await client.send_raw(framed(payload[: header_len + cut]))
    await assert_closed(client)
    await assert_still_serving(server)
