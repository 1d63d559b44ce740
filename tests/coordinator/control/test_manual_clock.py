"""ManualClock and TrioTimerClock: the timer loop's wait, the same loop code on both.

`timer_loop` is the loop proposed for CoordinatorRuntime._run_timers, driven by the real
`Timers`; `advance` must fire due timers in deadline order, each at its own deadline, including
timers scheduled by timers inside the advanced window, and return only after they fired."""
from __future__ import annotations

import pytest
import trio
import trio.testing

from coordinator.control.manual_clock import ManualClock, TimerClock, TrioTimerClock
from coordinator.runtime.timers import Timers


class Loop:
    """A runtime-shaped timer loop: fire what is due, then wait for the next deadline or a change."""

    def __init__(self, clock: TimerClock, name: str = "") -> None:
        self.clock = clock
        self.name = name
        self.timers = Timers()
        self.fired: list[tuple[str, object, int]] = []  # (loop, key, clock time when fired)
        self.changed = trio.Event()

    def schedule(self, key: object, deadline_ms: int, then: tuple[object, int] | None = None) -> None:
        def action(_: object = None) -> None:
            self.fired.append((self.name, key, self.clock.time_ms()))
            if then is not None:
                self.timers.schedule(then[0], self.clock.time_ms() + then[1], lambda _=None: self.fired.append(
                    (self.name, then[0], self.clock.time_ms())))
        self.timers.schedule(key, deadline_ms, action)
        self.changed.set()

    async def run(self) -> None:
        while True:
            while (timer := self.timers.pop_expired(self.clock.time_ms())) is not None:
                timer.action(None)
            self.changed = trio.Event()
            await self.clock.wait_until(self.timers.next_deadline(), self.changed)


async def test_advance_fires_due_timers_in_deadline_order_each_at_its_deadline() -> None:
    clock = ManualClock(1_000)
    loop = Loop(clock)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop.run)
        await trio.testing.wait_all_tasks_blocked()
        loop.schedule("session", 1_300)
        loop.schedule("rebalance", 1_100, then=("follow-up", 50))  # schedules one due at 1_150
        loop.schedule("later", 5_000)
        await trio.testing.wait_all_tasks_blocked()
        assert await clock.advance(200) == 1_200
        # advance returned: everything due by 1_200 has fired, at its own deadline.
        assert loop.fired == [("", "rebalance", 1_100), ("", "follow-up", 1_150)]
        await clock.advance(100)  # exactly at the deadline counts as due
        assert loop.fired[-1] == ("", "session", 1_300)
        await clock.advance(3_000)
        assert len(loop.fired) == 3 and clock.time_ms() == 4_300
        await clock.advance(700)
        assert loop.fired[-1] == ("", "later", 5_000)
        nursery.cancel_scope.cancel()


async def test_two_loops_interleave_by_deadline() -> None:
    clock = ManualClock(0)
    a, b = Loop(clock, "a"), Loop(clock, "b")
    fired: list[tuple[str, object, int]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.run)
        nursery.start_soon(b.run)
        await trio.testing.wait_all_tasks_blocked()
        a.schedule(1, 30)
        b.schedule(2, 10)
        a.schedule(3, 20, then=(4, 0))  # due at once: fires in the same step
        b.schedule(5, 40)
        await trio.testing.wait_all_tasks_blocked()
        a.fired, b.fired = fired, fired
        await clock.advance(100)
        assert fired == [("b", 2, 10), ("a", 3, 20), ("a", 4, 20), ("a", 1, 30), ("b", 5, 40)]
        nursery.cancel_scope.cancel()


async def test_nothing_moves_without_advance_and_changes_still_wake_the_loop() -> None:
    clock = ManualClock(0)
    loop = Loop(clock)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop.run)
        loop.schedule("x", 10)
        await trio.testing.wait_all_tasks_blocked()
        assert loop.fired == [] and clock.time_ms() == 0
        loop.schedule("now", 0)  # due already: the change wakes the loop, which fires it
        await trio.testing.wait_all_tasks_blocked()
        assert loop.fired == [("", "now", 0)]
        await clock.advance(0)
        assert [k for _, k, _ in loop.fired] == ["now"]
        nursery.cancel_scope.cancel()


async def test_sleep_until_is_one_shot_and_does_not_hold_advance() -> None:
    clock = ManualClock(0)
    woke: list[int] = []

    async def sleeper(deadline: int) -> None:
        await clock.sleep_until(deadline)
        woke.append(clock.time_ms())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sleeper, 50)
        nursery.start_soon(clock.sleep_ms, 10)
        await trio.testing.wait_all_tasks_blocked()
        await clock.advance(40)
        await trio.testing.wait_all_tasks_blocked()
        assert woke == []
        await clock.advance(10)
        await trio.testing.wait_all_tasks_blocked()
        assert woke == [50]


async def test_a_cancelled_loop_does_not_hang_advance() -> None:
    clock = ManualClock(0)
    loop = Loop(clock)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop.run)
        loop.schedule("x", 10)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert await clock.advance(20) == 20 and loop.fired == []


async def test_advance_refuses_going_back() -> None:
    with pytest.raises(ValueError):
        await ManualClock(0).advance(-1)


async def test_the_system_clock_runs_the_same_loop_in_trio_time(autojump_clock: trio.testing.MockClock) -> None:
    clock = TrioTimerClock(epoch_ms=10_000)
    loop = Loop(clock)
    assert clock.mode == "system"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop.run)
        loop.schedule("a", 10_250)
        loop.schedule("b", 10_100)
        await trio.sleep(0.5)
        assert loop.fired == [("", "b", 10_100), ("", "a", 10_250)]
        nursery.cancel_scope.cancel()


async def test_the_system_wait_returns_early_on_a_change(autojump_clock: trio.testing.MockClock) -> None:
    clock = TrioTimerClock(epoch_ms=0)
    changed = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(clock.wait_until, None, changed)
        nursery.start_soon(clock.wait_until, 60_000, changed)
        await trio.sleep(1)
        changed.set()
    assert trio.current_time() == pytest.approx(1, abs=1e-6)
