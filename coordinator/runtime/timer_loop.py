"""Driving a `Timers` on a clock: fire what is due, sleep until the next deadline, repeat.

The coordinator runtime and the share manager each run one. Scheduling never wakes the loop by
itself (a heartbeat moves a session timer later, which needs no wake-up): whoever schedules calls
`scheduled()`, which wakes the loop only when a timer it scheduled is due before the deadline the
loop sleeps towards (Timers.earliest_new, reset at every wake-up). `wake()` wakes it whatever the
deadlines (a shard was installed: its timers are new).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from coordinator.runtime.clock import TimerClock
from coordinator.runtime.timers import Timers


class TimerLoop:
    __slots__ = ("_timers", "_clock", "_settle_ahead_ms", "_changed", "_sleeping_until")

    def __init__(self, timers: Timers, clock: TimerClock, settle_ahead_ms: int = 0) -> None:
        """`settle_ahead_ms`: Timers.next_wake's window for re-pushing moved timers' entries."""
        self._timers = timers
        self._clock = clock
        self._settle_ahead_ms = settle_ahead_ms
        self._changed = trio.Event()
        self._sleeping_until: float = float("-inf")  # the deadline the loop waits for

    def scheduled(self) -> None:
        """Timers were scheduled: wake the loop if one of them is due before its deadline."""
        if self._timers.earliest_new < self._sleeping_until:
            self._changed.set()

    def wake(self) -> None:
        self._changed.set()

    async def run(self, fire_due: Callable[[], Awaitable[object]]) -> None:
        """`await fire_due()` whenever timers may be due, until cancelled."""
        timers = self._timers
        try:
            while True:
                await fire_due()
                self._changed = trio.Event()
                timers.earliest_new = float("inf")
                deadline = timers.next_wake(self._clock.time_ms(), self._settle_ahead_ms)
                if deadline is None:
                    self._sleeping_until = float("inf")
                    await self._changed.wait()
                    continue
                self._sleeping_until = deadline
                await self._clock.wait_until(deadline, self._changed)
        finally:
            self._sleeping_until = float("-inf")
