"""Clocks: the one place the coordinator learns what time it is, and how its timers wait.

Nothing else reads the wall clock. Group logic reads `Clock.time_ms()` (wall-clock milliseconds,
used for deadlines and the state timestamps written into records); the runtime's timer loop waits
with `wait_until(deadline, changed)`, which returns at the deadline or as soon as `changed` is set.
`TrioClock` follows trio's clock (so MockClock tests see exact times) and is what `kgc serve`
runs on; `ManualClock` (clock.mode=manual) moves only when told, so every timer waits for
`set_time`; `SystemClock` is the wall clock for code outside trio; `FakeClock` drives unit tests
of the group core by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import trio

try:  # trio's default clock (not exported); if it moves, TrioClock just reads it through trio
    from trio._core._run import SystemClock as _TrioSystemClock

    _TRIO_SYSTEM_CLOCK: type | None = _TrioSystemClock
except ImportError:  # pragma: no cover
    _TRIO_SYSTEM_CLOCK = None


class Clock(Protocol):
    def time_ms(self) -> int:
        """Current wall-clock time in milliseconds."""
        ...


class TimerClock(Clock, Protocol):
    async def wait_until(self, deadline_ms: int, changed: trio.Event) -> None:
        """Return once the clock reaches `deadline_ms` or `changed` is set, whichever is first."""
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

    async def wait_until(self, deadline_ms: int, changed: trio.Event) -> None:
        """Time never passes by itself here: wait for a change (tests advance by hand)."""
        if self._now_ms < deadline_ms:
            await changed.wait()


class TrioClock:
    """Wall-clock ms anchored at construction, advancing with `trio.current_time()`.

    Must be created and read inside `trio.run`. Under MockClock(autojump_threshold=0) the group
    logic and the runtime's sleeps then share one virtual timeline; in production it is a
    monotonic clock that cannot jump when the system wall clock is adjusted.
    """

    mode = "system"

    def __init__(self, epoch_ms: int | None = None) -> None:
        self._epoch_ms = SystemClock().time_ms() if epoch_ms is None else epoch_ms
        # The run's clock (trio's SystemClock, or a test's MockClock) read directly: time_ms is read
        # several times per request (sessions, tracking), and trio.current_time() would look the
        # run up each time. epoch + (now - start) * 1000, rounded half up, is one multiply-add.
        clock = trio.lowlevel.current_clock()
        # trio's own clock is `offset + perf_counter()` (a constant offset): read perf_counter
        # itself, one C call instead of two Python ones. The ms differences are the same.
        self._now = time.perf_counter if type(clock) is _TRIO_SYSTEM_CLOCK else clock.current_time
        self._trio_start = self._now()
        self._offset_ms = self._epoch_ms - self._trio_start * 1000.0 + 0.5

    def time_ms(self) -> int:
        return int(self._now() * 1000.0 + self._offset_ms)

    async def wait_until(self, deadline_ms: int, changed: trio.Event) -> None:
        with trio.move_on_after(max(0, deadline_ms - self.time_ms()) / 1000):
            await changed.wait()


class ManualClock:
    """clock.mode=manual: time stands still until `set_time` moves it (the control plane's clock
    advance steps it from deadline to deadline, so timers fire in deadline order, each at its
    own time). Starts at the wall clock's time, so records carry plausible timestamps."""

    mode = "manual"

    def __init__(self, start_ms: int | None = None) -> None:
        self._now_ms = SystemClock().time_ms() if start_ms is None else start_ms
        self._waiting: set[trio.Event] = set()
        self.before_move: list[Callable[[], None]] = []  # told before time moves (the tap's waits)

    def time_ms(self) -> int:
        return self._now_ms

    def set_time(self, now_ms: int) -> None:
        """Move to `now_ms` (never backwards) and wake every timer loop to look again."""
        if now_ms < self._now_ms:
            raise ValueError(f"time does not go backwards ({now_ms} < {self._now_ms})")
        for listener in self.before_move:
            listener()
        self._now_ms = now_ms
        for changed in self._waiting:
            changed.set()

    async def wait_until(self, deadline_ms: int, changed: trio.Event) -> None:
        if self._now_ms >= deadline_ms:
            return
        self._waiting.add(changed)
        try:
            await changed.wait()
        finally:
            self._waiting.discard(changed)
