"""The early responder (net/early_responder.py): it answers ApiVersions on the CLI-bound sockets
and hands every connection to the server with what it did not answer still unread.

Clients are plain blocking sockets with a generous timeout (a safety net against a hang, never a
timing assertion); each step waits for the answer it needs, so the thread's progress is known.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from coordinator.config import Config
from coordinator.net.bind import bind_listeners
from coordinator.net.early_answers import EarlyAnswers
from coordinator.net.early_responder import MAX_ANSWERS, EarlyResponder
from coordinator.server import serve
from coordinator.telemetry.subscriptions import validate
from protocol.codec import decode_response, encode_request
from protocol.headers import RequestHeader, encode_request_header
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.get_telemetry_subscriptions import GetTelemetrySubscriptionsRequest
from protocol.messages.metadata import MetadataRequest

ANSWERS = EarlyAnswers(share_enabled=True)
KGC = Path(sys.executable).with_name("kgc")


def _request(key: int, version: int, correlation_id: int, body: object) -> bytes:
    payload = encode_request_header(RequestHeader(key, version, correlation_id, "early-test"))
    payload += encode_request(key, version, body)
    return struct.pack(">i", len(payload)) + payload


def _api_versions(correlation_id: int, version: int = 3) -> bytes:
    return _request(18, version, correlation_id, ApiVersionsRequest("kgc-test", "1.0"))


METADATA = _request(3, 12, 77, MetadataRequest(topics=None))


def _read_frame(sock: socket.socket) -> bytes:
    head = sock.recv(4, socket.MSG_WAITALL)
    assert len(head) == 4, "closed instead of answering"
    return head + sock.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)


@pytest.fixture
def bound() -> Iterator[list[list[socket.socket]]]:
    sockets = bind_listeners("127.0.0.1", 0, 1)
    yield sockets
    for sock in sockets[0]:
        sock.close()


def _client(bound: list[list[socket.socket]]) -> socket.socket:
    sock = socket.create_connection(bound[0][0].getsockname()[:2], timeout=30)
    return sock


def test_pipelined_api_versions_are_answered_in_order_and_the_next_frame_is_left_unread(bound):
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=1 << 20)
    early.start()
    with _client(bound) as client:
        client.sendall(_api_versions(1, version=0) + _api_versions(2) + METADATA)
        assert _read_frame(client) == ANSWERS.answer(_api_versions(1, version=0)[4:]).response
        assert _read_frame(client) == ANSWERS.answer(_api_versions(2)[4:]).response
        ((handed, software),) = early.take(bound[0])
        with handed:
            assert software == ("kgc-test", "1.0")
            handed.setblocking(True)
            assert handed.recv(len(METADATA), socket.MSG_WAITALL) == METADATA
    early.close()
    assert early.answered == 2


def test_a_frame_still_arriving_is_handed_over_unread(bound):
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=1 << 20)
    early.start()
    request = _api_versions(5)
    with _client(bound) as client:
        client.sendall(_api_versions(4))
        _read_frame(client)  # the responder accepted and answered: it watches this connection
        client.sendall(request[:9])
        ((handed, _),) = early.take(bound[0])
        client.sendall(request[9:])
        with handed:
            handed.setblocking(True)
            assert handed.recv(len(request), socket.MSG_WAITALL) == request
    assert early.answered == 1


def test_after_max_answers_the_connection_is_the_servers(bound):
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=1 << 20)
    early.start()
    requests = [_api_versions(i) for i in range(MAX_ANSWERS + 1)]
    with _client(bound) as client:
        client.sendall(b"".join(requests))
        for request in requests[:MAX_ANSWERS]:
            assert _read_frame(client) == ANSWERS.answer(request[4:]).response
        ((handed, _),) = early.take(bound[0])
        with handed:
            handed.setblocking(True)
            assert handed.recv(len(requests[-1]), socket.MSG_WAITALL) == requests[-1]


def test_past_max_connections_the_backlog_waits_for_the_server(bound):
    early = EarlyResponder(bound, ANSWERS, max_connections=1, max_frame_bytes=1 << 20)
    early.start()
    with _client(bound) as first, _client(bound) as second:
        first.sendall(_api_versions(1))
        _read_frame(first)  # accepted (the one allowed) and answered
        second.sendall(_api_versions(2))
        handed = early.take(bound[0])
        assert len(handed) == 1
        handed[0][0].close()
        listening = bound[0][0]
        listening.setblocking(True)
        waiting, _ = listening.accept()  # the second connection, still in the backlog, unanswered
        with waiting:
            assert waiting.recv(100) == _api_versions(2)


def test_a_frame_above_socket_request_max_bytes_is_the_servers(bound):
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=30)
    early.start()
    small, large = _api_versions(1, version=0), _api_versions(2)  # frames of 20 and 35 bytes
    with _client(bound) as client:
        client.sendall(small + large)
        _read_frame(client)
        ((handed, _),) = early.take(bound[0])
        with handed:
            handed.setblocking(True)
            assert handed.recv(len(large), socket.MSG_WAITALL) == large


def test_each_broker_takes_the_connections_its_port_accepted():
    bound = bind_listeners("127.0.0.1", 0, 2)
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=1 << 20)
    early.start()
    clients = [socket.create_connection(group[0].getsockname()[:2], timeout=30) for group in bound]
    try:
        for i, client in enumerate(clients):
            client.sendall(_api_versions(i))
            _read_frame(client)
        for group, client in zip(bound, clients, strict=True):
            ((handed, _),) = early.take(group)
            with handed:
                assert handed.getpeername() == client.getsockname()
    finally:
        for sock in [*clients, *(s for group in bound for s in group)]:
            sock.close()


def test_a_client_that_closes_is_not_handed_over(bound):
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=1 << 20)
    early.start()
    with _client(bound) as client:
        client.sendall(_api_versions(1))
        _read_frame(client)
        client.shutdown(socket.SHUT_WR)
        assert client.recv(1) == b""  # the responder saw the end and closed its side
    assert early.take(bound[0]) == []


async def test_the_server_takes_over_the_connections_it_answered_on(tmp_path, bound):
    """End to end: ApiVersions answered early, then the server serves the same connection (the
    Metadata sent meanwhile, and KIP-714 selectors see the software its ApiVersions named)."""
    config = Config({"data.dir": str(tmp_path / "data"), "port": bound[0][0].getsockname()[1]})
    early = EarlyResponder(bound, ANSWERS, max_connections=100, max_frame_bytes=1 << 20)
    early.start()
    client = _client(bound)
    client.sendall(_api_versions(1))
    assert await trio.to_thread.run_sync(_read_frame, client) == ANSWERS.answer(_api_versions(1)[4:]).response
    client.sendall(METADATA)  # waits in the socket until the server is up
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            lambda task_status: serve(config, bound=bound, early=early, task_status=task_status)
        )
        metadata = await trio.to_thread.run_sync(_read_frame, client)
        assert struct.unpack_from(">i", metadata, 4)[0] == 77
        assert decode_response(3, 12, metadata, 9).brokers[0].port == config.port  # header v1: 4 + 4 + 1
        server.telemetry.subscriptions.replace(
            "kgc-test-only", validate("kgc-test-only", {"metrics": "*", "match": "client_software_name=kgc-test"})
        )
        client.sendall(_request(71, 0, 78, GetTelemetrySubscriptionsRequest()))
        got = await trio.to_thread.run_sync(_read_frame, client)
        assert decode_response(71, 0, got, 9).requested_metrics == ["*"]
        client.close()
        server.stop()
    assert early.answered == 1


def test_kgc_serve_answers_on_the_port_it_binds_and_its_server_takes_over(tmp_path):
    """The real command: ApiVersions and a Metadata pipelined as the port first accepts; the
    answers are the server's (early or not, the bytes are the same) and the early path ran."""
    command = [str(KGC)] if KGC.exists() else [sys.executable, "-m", "coordinator"]
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # free a moment ago (the bench's way to know the port early)
    args = ["serve", "--port", str(port), "--data-dir", str(tmp_path / "d"), "--log-level", "DEBUG"]
    proc = subprocess.Popen(command + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    answering = threading.Event()

    def drain() -> None:  # its log, read as it comes (a full pipe would stop the server)
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "early responder: answering ApiVersions on port" in line:
                answering.set()  # bound, and answering
        answering.set()  # or ended

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert answering.wait(30) and proc.poll() is None, "".join(lines)[-2000:]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(_api_versions(1) + METADATA)
            assert _read_frame(client) == ANSWERS.answer(_api_versions(1)[4:]).response
            assert struct.unpack_from(">i", _read_frame(client), 4)[0] == 77
    finally:
        proc.terminate()
        proc.wait(30)
        reader.join(30)
    assert any("connections handed over" in line for line in lines), "".join(lines)[-2000:]
