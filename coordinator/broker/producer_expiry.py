"""producer.id.expiration.ms: every producer.id.expiration.check.interval.ms, each served
partition forgets the producers idle that long (Kafka's UnifiedLog PeriodicProducerExpirationCheck
-> ProducerStateManager.removeExpiredProducers).

A producer is idle when it has no open transaction and its last batch or marker is at least
producer.id.expiration.ms older than the broker's clock, which is the injected timer clock: with
clock.mode=manual the control plane's clock advance fires the check (this is a TimerSource), so
a test sees the producer gone when the advance returns. Idle time is measured, as in Kafka, from
the batch's own (create) timestamp. A forgotten producer's next batch is taken at any sequence
(KIP-360) and DescribeProducers no longer lists it.
"""

from __future__ import annotations

from typing import Any, Protocol

import trio

from coordinator.observe.logs import get_logger, log_event
from coordinator.runtime.clock import TimerClock
from coordinator.runtime.timers import Timers

_log = get_logger("data")
_KEY = ("producer-expiry",)


class ServedPartitions(Protocol):
    """The data path (broker/data_path.py): the partitions it serves now."""

    def served(self) -> list[Any]: ...


class ProducerExpiry:
    def __init__(self, data: ServedPartitions, clock: TimerClock, expiration_ms: int, check_interval_ms: int) -> None:
        self.data = data
        self.clock = clock
        self.expiration_ms = expiration_ms
        self.check_interval_ms = check_interval_ms
        self.timers = Timers()
        self._schedule(clock.time_ms() + check_interval_ms)

    def _schedule(self, deadline_ms: int) -> None:
        self.timers.schedule(_KEY, deadline_ms, self.check)

    def check(self, due_ms: int) -> int:
        """One check over every served partition, the one due at `due_ms` (checks run at a fixed
        rate, as Kafka's scheduler runs them); returns how many producers were forgotten."""
        now = self.clock.time_ms()
        removed = 0
        for part in self.data.served():
            gone = part.producers.remove_expired(now, self.expiration_ms)
            if gone:
                removed += len(gone)
                log_event(
                    _log, "data.producers_expired", topic=part.topic, partition=part.index, producer_ids=sorted(gone)
                )
        self._schedule(due_ms + self.check_interval_ms)
        return removed

    async def fire_due(self) -> int:
        """Run the check if it is due (the manual clock's advance calls this at each deadline)."""
        fired = 0
        while (timer := self.timers.pop_expired(self.clock.time_ms())) is not None:
            timer.action(timer.deadline_ms)
            fired += 1
        return fired

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await self.fire_due()
            deadline = self.timers.next_deadline()
            assert deadline is not None  # the check always schedules the next one
            await self.clock.wait_until(deadline, trio.Event())  # (a manual clock's move wakes it)
