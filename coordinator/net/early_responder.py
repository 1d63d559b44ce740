"""ApiVersions answered while `kgc serve` still imports and builds the server (issue 26).

Every client opens every connection with ApiVersions, and a fresh process needs ~250 ms to import
trio and the server and open its logs. `EarlyResponder` serves the listening sockets the CLI bound
(net/bind.py) in that time, from a thread, with the standard library alone: it accepts, answers
each complete ApiVersions frame as the server would (early_answers.py), and stops reading a
connection at the first frame it does not answer, which it leaves unread in the socket (it only
peeks before it consumes a frame it answered). `take(listening)` stops the thread (once) and hands
the connections accepted on those sockets to their listener (net/listener.py), which serves them
from the next unread byte: no byte is lost or read twice, and nothing here answers with an error.
Past `max.connections` it stops accepting (the backlog waits for the server). The CLI starts it
for PLAINTEXT listeners only, and only when nothing but the server's own state shapes the answer
(`early_plan`).
"""

from __future__ import annotations

import selectors
import socket
import struct
import sys
import threading
from typing import Any

from coordinator.net.early_answers import EarlyAnswers
from coordinator.observe.logs import get_logger

_log = get_logger("early")

PEEK_BYTES = 4096  # an ApiVersions request is ~50 bytes: a larger frame is the server's
MAX_ANSWERS = 4  # per connection (a client retries a refused version once or twice); then the server's
SWITCH_INTERVAL = 0.001  # s: how long the importing main thread may keep the GIL from a waiting answer
_SIZE = struct.Struct(">i")


def early_plan(config: Any) -> EarlyAnswers | None:
    """The answers to give before the server is up, or None when the early path must not run: a
    listener with TLS or SASL (`listeners` set at all), a broker process of --processes (the CLI
    never starts it for their parent), the transcript or metrics (they record every request), or
    the control plane (its rules and limits apply to every request)."""
    if config.cluster_processes or config.listeners or config.transcript_file:
        return None
    if config.metrics_port >= 0 or config.control_enable or config.control_port >= 0:
        return None
    return EarlyAnswers(share_enabled=bool(config.get("group.share.enable")))


class _Connection:
    __slots__ = ("answered", "listening", "sock", "software", "watched")

    def __init__(self, sock: socket.socket, listening: socket.socket) -> None:
        self.sock = sock
        self.listening = listening  # the listening socket that accepted it (its broker's)
        self.answered = 0
        self.software: tuple[str, str] | None = None  # what its last valid v3+ ApiVersions named
        self.watched = False  # registered with the selector


class EarlyResponder:
    def __init__(
        self, bound: list[list[socket.socket]], answers: EarlyAnswers, max_connections: int, max_frame_bytes: int
    ) -> None:
        """`max_connections` (max.connections) and `max_frame_bytes` (socket.request.max.bytes): what
        goes beyond them is the server's (it refuses such connections and frames)."""
        self._listening = [sock for group in bound for sock in group]
        self._answers = answers
        self._max = max_connections
        self._max_frame = max_frame_bytes
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._connections: list[_Connection] = []
        self._thread = threading.Thread(target=self._run, name="kgc-early-responder", daemon=True)
        self._switch_interval = sys.getswitchinterval()
        self._stopped = False
        self.answered = 0  # ApiVersions requests answered

    def start(self) -> None:
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        for sock in self._listening:
            sock.setblocking(False)
            self._selector.register(sock, selectors.EVENT_READ, sock)
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread.start()
        ports = sorted({sock.getsockname()[1] for sock in self._listening})
        _log.debug("early responder: answering ApiVersions on port %s until the server is up", ports)

    def take(self, listening: list[socket.socket]) -> list[tuple[socket.socket, tuple[str, str] | None]]:
        """Stop answering (the first call) and hand over the connections `listening` accepted, each
        with the client software its ApiVersions named."""
        self._stop()
        mine = [c for c in self._connections if any(c.listening is s for s in listening)]
        self._connections = [c for c in self._connections if c not in mine]
        return [(c.sock, c.software) for c in mine]

    def close(self) -> None:
        """Stop, and close every connection no listener took (the server did not start)."""
        self._stop()
        for conn in self._connections:
            conn.sock.close()
        self._connections.clear()

    def _stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._thread.is_alive():
            self._wake_write.send(b"\x00")
            self._thread.join()
        sys.setswitchinterval(self._switch_interval)
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()
        _log.debug(
            "early responder: %d ApiVersions answered, %d connections handed over",
            self.answered,
            len(self._connections),
        )

    # -- the thread --------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while True:
                for key, _ in self._selector.select():
                    if key.data is None:
                        return  # take() or close(): the server takes over
                    if isinstance(key.data, socket.socket):
                        self._accept(key.data)
                    else:
                        self._serve(key.data)
        except Exception:  # a bug here must not cost the start: the server takes every connection as it is
            _log.exception("early responder stopped")

    def _accept(self, listening: socket.socket) -> None:
        while len(self._connections) < self._max:
            try:
                sock, _ = listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError:  # out of descriptors or memory: the backlog waits for the server
                self._selector.unregister(listening)
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(sock, listening)
            self._connections.append(conn)
            self._serve(conn)  # its request may be there already
        for sock in self._listening:  # max.connections reached: accept no more
            if sock in self._selector.get_map():
                self._selector.unregister(sock)

    def _serve(self, conn: _Connection) -> None:
        """Answer every complete ApiVersions frame that is there; then wait for more, or leave the
        connection to the server (the next frame is not ApiVersions, or is incomplete)."""
        while True:
            try:
                data = conn.sock.recv(PEEK_BYTES, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                self._watch(conn, True)
                return
            except OSError:
                return self._drop(conn)  # reset by the peer: nothing for the server to do
            if not data:
                return self._drop(conn)  # the client closed, every request answered
            answer = None
            end = 4 + _SIZE.unpack_from(data)[0] if len(data) >= 4 else 0
            if 4 < end <= len(data) and end - 4 <= self._max_frame and conn.answered < MAX_ANSWERS:
                answer = self._answers.answer(data[4:end])
            if answer is None:  # a frame the server reads (or one still arriving): leave it unread
                self._watch(conn, False)
                return
            try:
                conn.sock.recv(end)  # consume exactly the frame peeked (it is there, whole)
                sent = conn.sock.send(answer.response)
            except OSError:
                return self._drop(conn)
            if sent != len(answer.response):  # a few hundred bytes into a fresh socket's buffer: never
                return self._drop(conn)  # seen; a partial answer cannot be handed over
            conn.answered += 1
            self.answered += 1
            if answer.software is not None:
                conn.software = answer.software

    def _watch(self, conn: _Connection, on: bool) -> None:
        if on and not conn.watched:
            self._selector.register(conn.sock, selectors.EVENT_READ, conn)
        elif not on and conn.watched:
            self._selector.unregister(conn.sock)
        conn.watched = on

    def _drop(self, conn: _Connection) -> None:
        self._watch(conn, False)
        self._connections.remove(conn)
        conn.sock.close()
