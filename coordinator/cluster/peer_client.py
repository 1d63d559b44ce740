"""One connection to another broker process (`kgc serve --processes`): Kafka requests out, their
responses matched back by correlation id (Kafka's NetworkClient, for one fixed peer).

Requests are pipelined: each call writes its whole frame (under a lock, so frames never
interleave) and waits for the response with its correlation id, which the one reader task
(`run`, in the server's nursery) hands over. A call waits at most `timeout_ms` (then
PeerUnavailable; a late response is dropped). When the peer's end closes (its process is gone),
or a frame could not be written whole, the connection is dead: every waiting and later call fails
at once with PeerUnavailable, never hangs. The socketpair cannot be reconnected; a dead peer
process stops the whole cluster anyway (processes.py).
"""

from __future__ import annotations

import itertools
from typing import Any

import trio

from protocol.codec import decode_response, encode_request
from protocol.errors import DecodeError
from protocol.framing import FrameDecoder, FrameError, frame
from protocol.headers import RequestHeader, decode_response_header, encode_request_header

_READ_BYTES = 65536


class PeerUnavailable(Exception):
    """The peer did not answer: gone, or not within the call's timeout."""


class _Waiting:
    __slots__ = ("answered", "frame")

    def __init__(self) -> None:
        self.answered = trio.Event()
        self.frame: bytes | None = None  # None once answered: the connection died


class PeerClient:
    def __init__(self, stream: trio.abc.Stream, peer: str, client_id: str, timeout_ms: int) -> None:
        self.peer = peer  # for messages: "broker 1"
        self._stream = stream
        self._client_id = client_id
        self._timeout = timeout_ms / 1000
        self._send_lock = trio.Lock()
        self._waiting: dict[int, _Waiting] = {}
        self._ids = itertools.count(1)
        self.dead: str | None = None  # why the connection is unusable

    async def call(self, api_key: int, version: int, request: Any) -> Any:
        """The decoded response to `request`; PeerUnavailable if none comes."""
        if self.dead is not None:
            raise PeerUnavailable(f"{self.peer}: {self.dead}")
        correlation_id = next(self._ids) & 0x7FFFFFFF
        data = frame(
            encode_request_header(RequestHeader(api_key, version, correlation_id, self._client_id)),
            encode_request(api_key, version, request),
        )
        waiting = self._waiting[correlation_id] = _Waiting()
        deadline = trio.current_time() + self._timeout
        writing = written = False
        try:
            async with self._send_lock:
                with trio.move_on_at(deadline):
                    writing = True
                    await self._stream.send_all(data)
                    written = True
            if written:
                with trio.move_on_at(deadline):
                    await waiting.answered.wait()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._die(f"sending failed: {exc!r}")
        finally:
            self._waiting.pop(correlation_id, None)
            if writing and not written:  # a frame cut short: nothing after it can be read right
                self._die("a request could not be written whole")
        if waiting.frame is None:
            why = self.dead or f"no answer within {self._timeout * 1000:.0f} ms"
            raise PeerUnavailable(f"{self.peer}: {why}")
        try:
            _, offset = decode_response_header(waiting.frame, api_key, version)
            return decode_response(api_key, version, waiting.frame, offset)
        except DecodeError as exc:
            raise PeerUnavailable(f"{self.peer}: unreadable response: {exc}") from None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read responses until the peer closes; then fail everything that waits."""
        task_status.started()
        decoder = FrameDecoder()
        try:
            while True:
                data = await self._stream.receive_some(_READ_BYTES)
                if not data:
                    self._die("the peer closed the connection (its process is gone)")
                    return
                for payload in decoder.feed(bytes(data)):
                    if len(payload) < 4:
                        raise FrameError("response shorter than its correlation id")
                    waiting = self._waiting.get(int.from_bytes(payload[:4], "big", signed=True))
                    if waiting is not None:  # else: its call gave up already
                        waiting.frame = payload
                        waiting.answered.set()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, FrameError) as exc:
            self._die(f"reading failed: {exc!r}")
        finally:
            self._die("closed")

    def _die(self, why: str) -> None:
        if self.dead is None:
            self.dead = why
        for waiting in self._waiting.values():
            waiting.answered.set()  # frame None: PeerUnavailable
