"""The global bound on request bytes being received and held: Kafka's `queued.max.request.bytes`.

Every connection reserves a frame's size here as soon as the frame's size prefix is read, before
it buffers the body, and gives it back once the request has been handled. When the reservations
of all connections would pass `capacity`, the next connection waits (it stops reading its socket,
so TCP pushes back on its client) until enough is given back: the server's memory for requests
stays near `capacity` however many connections send large frames at once, instead of growing with
them. Waiters are served in arrival order, so a large frame is not starved by small ones. A frame
larger than `capacity` on its own is let through when nothing else is held (it is within
`socket.request.max.bytes`, which the connection checked). capacity <= 0: no bound (Kafka's -1).
"""

from __future__ import annotations

from collections import deque

import trio


class RequestMemory:
    __slots__ = ("capacity", "used", "peak", "_waiters")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        self.peak = 0  # the most ever held at once (tests and metrics)
        self._waiters: deque[tuple[int, trio.Event]] = deque()

    def try_reserve(self, size: int) -> bool:
        """Take `size` bytes now if they fit (and nobody waits before us)."""
        if self._waiters or not self._fits(size):
            return False
        self._take(size)
        return True

    async def reserve(self, size: int) -> None:
        """Take `size` bytes, waiting (in arrival order) until they fit."""
        if self.try_reserve(size):
            return
        entry = (size, trio.Event())
        self._waiters.append(entry)
        try:
            await entry[1].wait()
        except BaseException:
            if entry[1].is_set():  # granted just as we were cancelled: give it back
                self.release(size)
            else:
                self._waiters.remove(entry)
                self._grant()  # we may have been the head blocking smaller requests behind us
            raise

    def release(self, size: int) -> None:
        self.used -= size
        if self._waiters:
            self._grant()

    @property
    def waiting(self) -> int:
        """Connections waiting for memory now."""
        return len(self._waiters)

    def _fits(self, size: int) -> bool:
        return self.capacity <= 0 or self.used == 0 or self.used + size <= self.capacity

    def _take(self, size: int) -> None:
        self.used += size
        if self.used > self.peak:
            self.peak = self.used

    def _grant(self) -> None:
        while self._waiters and self._fits(self._waiters[0][0]):
            size, event = self._waiters.popleft()
            self._take(size)
            event.set()
