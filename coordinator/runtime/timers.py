"""Named one-shot timers, deterministic and free of any event loop.

A timer is a key (a tuple such as ("heartbeat", group_id, member_id)), a deadline in clock
milliseconds and an action. The runtime keeps one `Timers` for all its shards; each shard
schedules through a `ShardTimers` view that prefixes its keys with the shard's partition, so a
due timer names its shard and an unloaded shard's timers can all be cancelled. Scheduling a key
that already exists replaces it (Kafka's CoordinatorTimer does the same), so there is at most
one timer per key. Timers fire in deadline order, ties in scheduling order. Whoever drives them
(the runtime, or a test context) pops expired timers one at a time, so an action may cancel a
timer that was due in the same instant.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

TimerKey = Hashable


@dataclass(order=True)
class Timer:
    deadline_ms: int
    seq: int
    key: TimerKey = field(compare=False)
    action: Callable[..., Any] = field(compare=False, repr=False)


class Timers:
    def __init__(self) -> None:
        self._by_key: dict[TimerKey, Timer] = {}
        self._heap: list[Timer] = []
        self._seq = itertools.count()
        # The earliest deadline scheduled since the driver last reset it: the runtime wakes its
        # timer loop only when a new timer is due before the one it sleeps towards (a heartbeat
        # pushes a session timer later, which needs no wake-up).
        self.earliest_new: float = float("inf")

    def schedule(self, key: TimerKey, deadline_ms: int, action: Callable[..., Any]) -> Timer:
        """Schedule (or reschedule) the timer for `key`."""
        if deadline_ms < self.earliest_new:
            self.earliest_new = deadline_ms
        timer = Timer(deadline_ms, next(self._seq), key, action)
        self._by_key[key] = timer
        heap = self._heap
        heapq.heappush(heap, timer)
        if len(heap) > 64 and len(heap) > 4 * len(self._by_key):
            # Rescheduled and cancelled entries wait in the heap until they reach its top: a
            # session timer pushed on every heartbeat would keep session/interval of them per
            # member. Rebuild from the live ones once stale entries are 3 in 4 (amortised O(1)).
            self._heap = sorted(self._by_key.values())
        return timer

    def cancel(self, key: TimerKey) -> bool:
        return self._by_key.pop(key, None) is not None

    def __contains__(self, key: TimerKey) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def deadline(self, key: TimerKey) -> int | None:
        timer = self._by_key.get(key)
        return None if timer is None else timer.deadline_ms

    def keys(self) -> list[TimerKey]:
        """Live keys in firing order."""
        return [t.key for t in sorted(self._by_key.values())]

    def next_deadline(self) -> int | None:
        self._drop_stale()
        return self._heap[0].deadline_ms if self._heap else None

    def pop_expired(self, now_ms: int) -> Timer | None:
        """Remove and return the earliest timer due at `now_ms`, if any."""
        self._drop_stale()
        if self._heap and self._heap[0].deadline_ms <= now_ms:
            timer = heapq.heappop(self._heap)
            del self._by_key[timer.key]
            return timer
        return None

    def cancel_partition(self, partition: int) -> int:
        """Cancel every timer of one shard (keys start with its partition); returns how many.
        Rare (a partition unloads), so a scan of the live keys is fine."""
        doomed = [key for key in self._by_key if isinstance(key, tuple) and key and key[0] == partition]
        for key in doomed:
            del self._by_key[key]
        return len(doomed)

    def _drop_stale(self) -> None:
        # Cancelled or rescheduled entries stay in the heap until they reach the top.
        while self._heap and self._by_key.get(self._heap[0].key) is not self._heap[0]:
            heapq.heappop(self._heap)


class ShardTimers:
    """One shard's view of the runtime's timers: the same calls, keys prefixed by its partition."""

    __slots__ = ("_timers", "partition")

    def __init__(self, timers: Timers, partition: int) -> None:
        self._timers = timers
        self.partition = partition

    def schedule(self, key: tuple[Any, ...], deadline_ms: int, action: Callable[..., Any]) -> Timer:
        return self._timers.schedule((self.partition, *key), deadline_ms, action)

    def cancel(self, key: tuple[Any, ...]) -> bool:
        return self._timers.cancel((self.partition, *key))

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        return (self.partition, *key) in self._timers

    def deadline(self, key: tuple[Any, ...]) -> int | None:
        return self._timers.deadline((self.partition, *key))

    def keys(self) -> list[TimerKey]:
        """This shard's live keys (without the prefix), in firing order."""
        return [key[1:] for key in self._timers.keys() if isinstance(key, tuple) and key and key[0] == self.partition]
