"""Request frames (`int32 Size` + `Size` bytes, protocol.md §1.1) out of one connection's socket.

Reads go into the listener's scratch buffer (one per listener, reused by every connection of its
trio loop), so an idle connection holds no buffer; complete frames are copied out once each, and
only the start of an incomplete small frame stays with the connection. A frame larger than the
scratch buffer first reserves its size from the shared `RequestMemory`'s large-frame budget
(waiting there is the backpressure: this socket is not read meanwhile), then is read straight
into its own buffer; small frames use their own reserve, so they keep flowing meanwhile.
A negative size or one above `socket.request.max.bytes` raises `FrameError` once the frames before
it were handed out, without reading that frame. The connection's `ConnectionState` learns when
a frame starts arriving (for the stalled-frame rule) and when the reader waits for memory.
A read tries the socket before waiting for readability, though a synchronous client's next
request is usually not there yet: measured across processes on this VM (bench/request_bench.py),
waiting first cost ~4-6 us of server CPU and ~7 us of latency more per Heartbeat (it goes to
sleep sooner, and a wake-up here is dear).
"""

from __future__ import annotations

import struct

import trio

from coordinator.net.idle import ConnectionState
from coordinator.net.request_memory import SMALL_FRAME_BYTES, RequestMemory
from coordinator.net.socket_io import RawSocket
from protocol.framing import FrameError

# One read; frames above this are read into a buffer of their own, and draw on the large-frame budget.
SCRATCH_BYTES = SMALL_FRAME_BYTES
_SIZE = struct.Struct(">i")


class FrameReader:
    __slots__ = (
        "_sock",
        "_scratch",
        "_max",
        "_memory",
        "_state",
        "_pending",
        "_big",
        "_big_filled",
        "_big_size",
        "_error",
        "reserved",
    )

    def __init__(
        self, sock: RawSocket, scratch: bytearray, max_frame_size: int, memory: RequestMemory, state: ConnectionState
    ) -> None:
        self._sock = sock
        self._scratch = scratch
        self._max = max_frame_size
        self._memory = memory
        self._state = state
        self._pending = bytearray()  # the start of an incomplete small frame
        self._big: bytearray | None = None
        self._big_filled = 0
        self._big_size = -1  # a big frame announced, not yet reserved
        self._error: str | None = None
        self.reserved = 0  # bytes reserved for the big frame being read or just handed out

    @property
    def yielded(self) -> bool:
        return self._sock.waited

    def take_reservation(self) -> int:
        """What was reserved for the frame `read` just handed out (0 for small frames, which the
        connection reserves itself); the caller releases it once the request is handled."""
        reserved, self.reserved = self.reserved, 0
        return reserved

    async def read(self) -> list[bytes] | None:
        """The next complete frames (at least one), or None at the end of the stream.
        `yielded` tells afterwards whether it had to wait for the socket."""
        self._sock.waited = False
        while True:
            if self._error is not None:
                raise FrameError(self._error)
            if self._big_size >= 0:
                await self._start_big()
            if self._big is not None:
                frame = await self._fill_big()
                if frame is None:
                    continue
                return [frame] if frame else None
            n = await self._sock.recv_into(self._scratch)
            if n == 0:
                return None
            frames = self._split(n)
            if frames:
                return frames

    def _split(self, n: int) -> list[bytes]:
        """The complete frames among the `n` bytes just read (and any pending before them). When
        it hands out frames and keeps nothing back, the clock is not read: the connection stamps
        `last_active` once it has answered them (it is busy meanwhile, so not idle)."""
        if not self._pending and n >= 4:  # the usual read: whole frames, nothing carried over
            (size,) = _SIZE.unpack_from(self._scratch)
            if n == size + 4 and 0 <= size <= self._max:
                with memoryview(self._scratch) as view:
                    frame = bytes(view[4:n])
                self._state.frame_started = None
                return [frame]
        state = self._state
        now = trio.current_time()
        state.last_active = now
        continuing = bool(self._pending)  # bytes of a frame that started in an earlier read
        if continuing:
            self._pending += memoryview(self._scratch)[:n]
            src: bytearray = self._pending
            end = len(src)
        else:
            src = self._scratch
            end = n
        frames: list[bytes] = []
        pos = 0
        unpack_from, limit = _SIZE.unpack_from, self._max
        with memoryview(src) as view:
            while end - pos >= 4:
                (size,) = unpack_from(view, pos)
                if size < 0 or size > limit:
                    self._error = (
                        f"negative frame size {size}" if size < 0 else f"frame size {size} exceeds the maximum {limit}"
                    )
                    break
                stop = pos + 4 + size
                if stop > end:
                    if size > SCRATCH_BYTES:  # read the rest into a buffer of its own
                        self._big_size = size
                        self._big = None
                        head = bytes(view[pos + 4 : end])
                        self._pending = bytearray(head)  # handed to the big buffer once reserved
                        pos = end
                    break
                frames.append(bytes(view[pos + 4 : stop]))
                pos = stop
            rest = bytes(view[pos:end]) if pos < end and self._error is None else b""
        if self._big_size < 0:
            self._pending = bytearray(rest) if rest else bytearray()
        if self._pending or self._big_size >= 0:
            if frames or not continuing:  # a new frame started arriving in this read
                state.frame_started = now
        else:
            state.frame_started = None
        return frames

    async def _start_big(self) -> None:
        size, state = self._big_size, self._state
        if not self._memory.try_reserve(size):
            state.waiting_memory = True
            try:
                await self._memory.reserve(size)
            finally:
                state.waiting_memory = False
            state.frame_started = trio.current_time()  # the stalled-frame clock starts now
        self.reserved = size
        big = bytearray(size)
        head = self._pending
        big[: len(head)] = head
        self._big, self._big_filled, self._big_size = big, len(head), -1
        self._pending = bytearray()

    async def _fill_big(self) -> bytes | None:
        big = self._big
        assert big is not None
        with memoryview(big) as view:
            n = await self._sock.recv_into(view[self._big_filled :])
        if n == 0:  # the client closed inside a frame: nothing to answer
            self.release()
            return b""
        self._big_filled += n
        self._state.last_active = trio.current_time()
        if self._big_filled < len(big):
            return None
        self._big = None
        self._state.frame_started = None
        return bytes(big)

    def release(self) -> None:
        """Give back what the reader still holds (the connection is closing)."""
        if self.reserved:
            self._memory.release(self.reserved)
            self.reserved = 0
        self._big = None

    def set_max_frame_size(self, size: int) -> None:
        """A new bound for the frames read from now on (a SASL connection's rises once it has
        authenticated: sasl.server.max.receive.size before, socket.request.max.bytes after)."""
        self._max = size
