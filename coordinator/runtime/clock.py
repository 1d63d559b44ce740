"""Clocks: the one place the coordinator learns what time it is.

Nothing else reads the wall clock. Group logic reads `Clock.time_ms()` (wall-clock milliseconds,
used for deadlines and the state timestamps written into records). `SystemClock` is production,
`FakeClock` drives unit tests by hand, and `TrioClock` follows trio's clock so a runtime under
`trio.testing.MockClock` sees group time advance exactly as trio's virtual time does.
"""

from __future__ import annotations

import time
from typing import Protocol

import trio


class Clock(Protocol):
    def time_ms(self) -> int:
        """Current wall-clock time in milliseconds."""
        ...


class SystemClock:
    """The real wall clock."""

    def time_ms(self) -> int:
        return time.time_ns() // 1_000_000


class FakeClock:
    """A clock that moves only when a test says so."""

    def __init__(self, start_ms: int = 0) -> None:
        self._now_ms = start_ms

    def time_ms(self) -> int:
        return self._now_ms

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("time does not go backwards")
        self._now_ms += ms


class TrioClock:
    """Wall-clock ms anchored at construction, advancing with `trio.current_time()`.

    Must be created and read inside `trio.run`. Under MockClock(autojump_threshold=0) the group
    logic and the runtime's sleeps then share one virtual timeline; in production it is a
    monotonic clock that cannot jump when the system wall clock is adjusted.
    """

    def __init__(self, epoch_ms: int | None = None) -> None:
        self._epoch_ms = SystemClock().time_ms() if epoch_ms is None else epoch_ms
        self._trio_start = trio.current_time()

    def time_ms(self) -> int:
        return self._epoch_ms + round((trio.current_time() - self._trio_start) * 1000)
