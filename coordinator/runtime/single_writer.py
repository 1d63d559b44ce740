"""The single writer: op -> records -> append -> durable -> reply; timers in the same loop.

`submit(request)` runs one group operation synchronously (trio runs nothing else meanwhile),
appends its records through a `Writer`, waits until they are durable, then delivers every reply
the op completed and returns the caller's own (awaiting it if parked). `run()` sleeps until the
earliest timer deadline and fires due timers through the same path. Groups read
`clock.time_ms()`; sleeps are "deadline - now" in trio time, so with `TrioClock` a MockClock test
is exact. A failed append raises: the shard must stop and reload from the log.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, Sequence

import trio

from coordinator.runtime.clock import Clock
from coordinator.groups.operation import OpContext, ParkedReply
from coordinator.groups.shard import GroupCoordinator, execute

log = logging.getLogger(__name__)


class Writer(Protocol):
    def append(self, records: Sequence[object]) -> int:
        """Queue records for the log; returns a token that `wait_durable` understands.

        An empty append returns the current end, so waiting on it orders a reply after every
        earlier write (a timer that only answers parked requests still waits its turn)."""
        ...

    async def wait_durable(self, token: int) -> None:
        """Return once everything appended up to `token` is durable."""
        ...


class InMemoryWriter:
    """A Writer that keeps records in a list. Durable at once, unless `hold()` is used to let a
    test observe that replies wait for durability (`release()` makes everything durable)."""

    def __init__(self) -> None:
        self.records: list[object] = []
        self._durable = 0
        self._holding = False
        self._changed = trio.Event()

    def append(self, records: Sequence[object]) -> int:
        self.records.extend(records)
        if not self._holding:
            self._durable = len(self.records)
        return len(self.records)

    async def wait_durable(self, token: int) -> None:
        while self._durable < token:
            await self._changed.wait()
        await trio.lowlevel.checkpoint()

    def hold(self) -> None:
        self._holding = True

    def release(self) -> None:
        self._holding = False
        self._durable = len(self.records)
        self._changed.set()
        self._changed = trio.Event()

    @property
    def durable_count(self) -> int:
        return self._durable


async def wait_reply(reply: ParkedReply[Any]) -> Any:
    """Await a ParkedReply from trio code."""
    if not reply.done:
        event = trio.Event()
        reply.add_listener(lambda _value: event.set())
        await event.wait()
    return reply.value


class Runtime:
    def __init__(self, groups: GroupCoordinator, clock: Clock, writer: Writer) -> None:
        self.groups = groups
        self.clock = clock
        self.writer = writer
        self._timers_changed = trio.Event()

    def wake(self) -> None:
        """Make the timer loop look at the timers again (someone outside an op scheduled one)."""
        self._timers_changed.set()

    async def submit(self, request: Any) -> Any:
        """Run one operation and return its final, durable answer."""
        ctx = OpContext(self.groups, self.clock.time_ms())
        answer = execute(ctx, request)
        self._timers_changed.set()
        await self._commit(ctx)
        if isinstance(answer, ParkedReply):
            return await wait_reply(answer)
        return answer

    async def _commit(self, ctx: OpContext) -> None:
        token = self.writer.append(list(ctx.records))
        await self.writer.wait_durable(token)
        ctx.deliver()

    def fire_expired_timers(self, nursery: trio.Nursery) -> int:
        """Run every due timer as an operation; their commits finish in `nursery`."""
        fired = 0
        while (timer := self.groups.timers.pop_expired(self.clock.time_ms())) is not None:
            ctx = OpContext(self.groups, self.clock.time_ms())
            try:
                timer.action(ctx)
            except Exception:  # a bug in one timer must not stop the others
                log.exception("timer %r failed", timer.key)
            fired += 1
            nursery.start_soon(self._commit_timer_records, ctx, timer.key)
        return fired

    async def _commit_timer_records(self, ctx: OpContext, key: Any) -> None:
        # A failed append has already failed its partition in the writer, which reloads it from
        # the log; raising here would end the timer loop and with it the server.
        try:
            await self._commit(ctx)
        except Exception as exc:
            log.warning("records of timer %r were not written: %s", key, exc)

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """The timer loop. Start it in a nursery next to whatever submits operations."""
        async with trio.open_nursery() as nursery:
            task_status.started()
            while True:
                self.fire_expired_timers(nursery)
                self._timers_changed = trio.Event()
                deadline = self.groups.timers.next_deadline()
                if deadline is None:
                    await self._timers_changed.wait()
                    continue
                delay_s = max(0, deadline - self.clock.time_ms()) / 1000
                with trio.move_on_at(trio.current_time() + delay_s):
                    await self._timers_changed.wait()
