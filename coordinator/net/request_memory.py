"""The global bound on request bytes being received and held: Kafka's `queued.max.request.bytes`,
split in two budgets so that large frames cannot starve small ones.

Every connection reserves a frame's size here (a large frame as soon as its size prefix is read,
before its body is buffered; a small one before it is handled) and gives it back once the
request has been handled. Frames up to `small_frame` bytes (heartbeats, commits, joins) draw on a
reserve of their own, `capacity // 8` (at least 256 KiB, at most `capacity`); larger frames share
the rest. When a budget is spent the next connection wanting it waits (it stops reading its
socket, so TCP pushes back on its client) until enough comes back, in arrival order within that
budget: a large frame is not starved by small ones, and small frames never queue behind a large
one. Kafka's MemoryPool has one budget, so eight clients trickling 90 MiB frames would mute every
connection, heartbeats included, and groups would fall apart; kgc departs from it on purpose.
Each connection holds at most one reservation at a time (it handles one request at a time), so
waiters are served connection by connection. A frame larger than its budget on its own is let
through when that budget holds nothing else (it is within `socket.request.max.bytes`, which the
connection checked). Held bytes stay within `capacity` but for such a lone frame.
capacity <= 0: no bound (Kafka's -1).
"""

from __future__ import annotations

from collections import deque

import trio

SMALL_FRAME_BYTES = 65536  # frames up to this size use the small-request reserve
MIN_SMALL_RESERVE = 256 << 10


class _Budget:
    """One budget: bytes held, and the waiters for it in arrival order."""

    __slots__ = ("limit", "used", "waiters")

    def __init__(self, limit: int) -> None:
        self.limit = limit  # <= 0: no bound
        self.used = 0
        self.waiters: deque[tuple[int, trio.Event]] = deque()

    def fits(self, size: int) -> bool:
        return self.limit <= 0 or self.used == 0 or self.used + size <= self.limit


class RequestMemory:
    __slots__ = ("capacity", "small_frame", "used", "peak", "_small", "_large")

    def __init__(self, capacity: int, small_frame: int = SMALL_FRAME_BYTES) -> None:
        self.capacity = capacity
        self.small_frame = small_frame
        self.used = 0
        self.peak = 0  # the most ever held at once (tests and metrics)
        if capacity > 0:
            reserve = min(capacity, max(capacity // 8, MIN_SMALL_RESERVE))
            large = max(capacity - reserve, 1)  # nothing beside the reserve: large frames pass one at a time
        else:
            reserve = large = 0
        self._small = _Budget(reserve)
        self._large = _Budget(large)

    @property
    def small_reserve(self) -> int:
        return self._small.limit

    def _budget(self, size: int) -> _Budget:
        return self._small if size <= self.small_frame else self._large

    def try_reserve(self, size: int) -> bool:
        """Take `size` bytes now if they fit (and nobody waits before us for the same budget)."""
        budget = self._small if size <= self.small_frame else self._large  # once per request: inlined
        if budget.waiters:
            return False
        limit, used = budget.limit, budget.used
        if limit > 0 and used and used + size > limit:
            return False
        budget.used = used + size
        self.used += size
        if self.used > self.peak:
            self.peak = self.used
        return True

    async def reserve(self, size: int) -> None:
        """Take `size` bytes, waiting (in arrival order within its budget) until they fit."""
        if self.try_reserve(size):
            return
        budget = self._budget(size)
        entry = (size, trio.Event())
        budget.waiters.append(entry)
        try:
            await entry[1].wait()
        except BaseException:
            if entry[1].is_set():  # granted just as we were cancelled: give it back
                self.release(size)
            else:
                budget.waiters.remove(entry)
                self._grant(budget)  # we may have been the head blocking smaller requests behind us
            raise

    def release(self, size: int) -> None:
        budget = self._small if size <= self.small_frame else self._large
        budget.used -= size
        self.used -= size
        if budget.waiters:
            self._grant(budget)

    @property
    def waiting(self) -> int:
        """Connections waiting for memory now."""
        return len(self._small.waiters) + len(self._large.waiters)

    @property
    def waiting_small(self) -> int:
        return len(self._small.waiters)

    def _take(self, budget: _Budget, size: int) -> None:
        budget.used += size
        self.used += size
        if self.used > self.peak:
            self.peak = self.used

    def _grant(self, budget: _Budget) -> None:
        while budget.waiters and budget.fits(budget.waiters[0][0]):
            size, event = budget.waiters.popleft()
            self._take(budget, size)
            event.set()
