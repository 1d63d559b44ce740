"""Closing connections that say nothing, or that never finish a frame: `connections.max.idle.ms`.

Each connection keeps a `ConnectionState` (two timestamps and two flags the connection updates as
it reads, no timer per request); one `ConnectionWatch` per listener looks at all of them every
max.idle/10 (at most every second, Kafka's Selector checks idleness as coarsely) and closes
- a connection with nothing in progress and no byte received or response sent for max.idle, and
- a connection whose current frame started arriving more than max.idle ago and is still
  incomplete (a slow-loris sender), so a stalled frame cannot hold its memory for ever.
A connection whose request is being handled (a parked JoinGroup) or that waits for request
memory (backpressure, request_memory.py) is not idle.
"""

from __future__ import annotations

import trio


class ConnectionState:
    __slots__ = (
        "connection_id",
        "client_host",
        "last_active",
        "frame_started",
        "busy",
        "waiting_memory",
        "scope",
        "closed_because",
    )

    def __init__(self, connection_id: int, client_host: str, now: float) -> None:
        self.connection_id = connection_id
        self.client_host = client_host
        self.last_active = now  # last byte received or response sent
        self.frame_started: float | None = None  # when the incomplete frame's first bytes came
        self.busy = False  # a request is being handled
        self.waiting_memory = False
        self.scope = trio.CancelScope()
        self.closed_because: str | None = None

    def expired(self, now: float, idle: float) -> str | None:
        if self.busy or self.waiting_memory:
            return None
        if self.frame_started is not None:
            if now - self.frame_started > idle:
                return "frame still arriving after connections.max.idle.ms"
            return None
        if now - self.last_active > idle:
            return "idle"
        return None

    def close(self, reason: str) -> None:
        self.closed_because = reason
        self.scope.cancel()


class ConnectionWatch:
    def __init__(self, idle_ms: int) -> None:
        self.idle = idle_ms / 1000
        self.connections: set[ConnectionState] = set()
        self._added = trio.Event()

    def add(self, state: ConnectionState) -> None:
        self.connections.add(state)
        self._added.set()

    def discard(self, state: ConnectionState) -> None:
        self.connections.discard(state)

    def sweep(self, now: float) -> int:
        """Close every expired connection; returns how many."""
        closed = 0
        for state in list(self.connections):
            reason = state.expired(now, self.idle)
            if reason is not None:
                state.close(reason)
                self.connections.discard(state)
                closed += 1
        return closed

    async def run(self) -> None:
        period = min(1.0, max(self.idle / 10, 0.001))
        while True:
            if not self.connections:  # sleep until there is something to watch
                self._added = trio.Event()
                await self._added.wait()
            await trio.sleep(period)
            self.sweep(trio.current_time())
