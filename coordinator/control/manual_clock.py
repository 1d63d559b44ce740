"""Clocks the timer loop can wait on: `TrioTimerClock` (system time) and `ManualClock` (moves
only when told), with one waiting method so the runtime's loop is the same code on both:

    while True:
        fire_due_timers()
        changed = trio.Event()          # set by whoever schedules or cancels a timer
        await clock.wait_until(timers.next_deadline(), changed)

`wait_until` returns when the clock reaches `deadline_ms` (None: never) or `changed` is set.
`ManualClock.advance(ms)` moves time in steps, to each waiting deadline in order, wakes those
waiters and waits until each has come back to `wait_until` (that is, has fired what was due)
before the next step; so timers fire in deadline order, each at its own deadline, and when
advance returns every timer due by then has fired. The contract for callers of `wait_until`:
call it in a loop from one task (one-shot waits use `sleep_until`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import trio

from coordinator.runtime.clock import TrioClock


class TimerClock(Protocol):
    mode: str  # "system" or "manual"

    def time_ms(self) -> int: ...

    async def wait_until(self, deadline_ms: int | None, changed: trio.Event) -> None: ...


class TrioTimerClock(TrioClock):
    """TrioClock (wall-clock ms that follow trio's clock) plus the timer loop's wait."""

    mode = "system"

    async def wait_until(self, deadline_ms: int | None, changed: trio.Event) -> None:
        if deadline_ms is None:
            await changed.wait()
            return
        # The trio time at which time_ms() reaches the deadline (no drift from repeated sleeps).
        with trio.move_on_at(self._trio_start + (deadline_ms - self._epoch_ms) / 1000):
            await changed.wait()


@dataclass(slots=True)
class _Waiter:
    deadline_ms: int | None
    changed: trio.Event
    comes_back: bool  # a timer loop (advance waits for its return) or a one-shot sleeper


class ManualClock:
    """Time that moves only through `advance` (clock.mode=manual)."""

    mode = "manual"

    def __init__(self, start_ms: int = 0) -> None:
        self._now_ms = start_ms
        self._waiters: dict[trio.lowlevel.Task, _Waiter] = {}
        self._pending: set[trio.lowlevel.Task] = set()  # woken loops that have not come back yet
        self._settled = trio.Event()
        self._lock = trio.Lock()  # one advance at a time

    def time_ms(self) -> int:
        return self._now_ms

    async def wait_until(self, deadline_ms: int | None, changed: trio.Event) -> None:
        task = trio.lowlevel.current_task()
        if deadline_ms is not None and deadline_ms <= self._now_ms:
            try:  # due already: the caller fires it and comes back, so it stays pending
                await trio.lowlevel.checkpoint()
            except BaseException:
                self._back(task)
                raise
            return
        self._back(task)
        await self._wait(task, _Waiter(deadline_ms, changed, comes_back=True))

    async def sleep_until(self, deadline_ms: int) -> None:
        """One-shot: return once the clock has reached `deadline_ms`."""
        task = trio.lowlevel.current_task()
        while self._now_ms < deadline_ms:
            await self._wait(task, _Waiter(deadline_ms, trio.Event(), comes_back=False))
        await trio.lowlevel.checkpoint()

    async def sleep_ms(self, ms: int) -> None:
        await self.sleep_until(self._now_ms + ms)

    async def advance(self, ms: int) -> int:
        """Move time forward by `ms`, firing every waiter due on the way in deadline order;
        returns the new time once every woken timer loop has come back."""
        if ms < 0:
            raise ValueError("time does not go backwards")
        async with self._lock:
            target = self._now_ms + ms
            while (step := self._next_deadline(target)) is not None:
                self._now_ms = max(self._now_ms, step)
                for task, waiter in list(self._waiters.items()):
                    if waiter.deadline_ms is not None and waiter.deadline_ms <= self._now_ms:
                        del self._waiters[task]
                        if waiter.comes_back:
                            self._pending.add(task)
                        waiter.changed.set()
                await self._wait_settled()
            self._now_ms = target
            await trio.lowlevel.checkpoint()
            return self._now_ms

    def _next_deadline(self, target: int) -> int | None:
        due = [w.deadline_ms for w in self._waiters.values() if w.deadline_ms is not None and w.deadline_ms <= target]
        return min(due) if due else None

    async def _wait(self, task: trio.lowlevel.Task, waiter: _Waiter) -> None:
        self._waiters[task] = waiter
        try:
            await waiter.changed.wait()
        finally:
            if self._waiters.get(task) is waiter:
                del self._waiters[task]

    def _back(self, task: trio.lowlevel.Task) -> None:
        self._pending.discard(task)
        if not self._pending:
            self._settled.set()

    async def _wait_settled(self) -> None:
        while self._pending:
            self._settled = trio.Event()
            await self._settled.wait()
        await trio.lowlevel.checkpoint()
