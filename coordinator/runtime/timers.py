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
from typing import Any

TimerKey = Hashable


class Timer:
    """A scheduled action. Rescheduling a live key updates its Timer in place: the deadline, the
    action and `seq` (its place among timers due at the same millisecond)."""

    __slots__ = ("deadline_ms", "seq", "key", "action", "entry")

    def __init__(self, deadline_ms: int, seq: int, key: TimerKey, action: Callable[..., Any]) -> None:
        self.deadline_ms = deadline_ms
        self.seq = seq
        self.key = key
        self.action = action
        self.entry: _Entry | None = None  # the heap entry that stands for this timer


# (deadline_ms, seq, timer): compared in C, and seq is unique, so the timer itself never is.
_Entry = tuple[int, int, Timer]


class Timers:
    """The heap is lazy. A timer pushed later (a heartbeat moving a session timer: the common case)
    keeps its old, earlier heap entry, which is re-pushed with the new deadline when it reaches the
    top: one heap push per session timeout instead of one per heartbeat. A timer moved earlier gets
    a new entry. Entries of cancelled, fired or superseded timers are dropped when they surface."""

    def __init__(self) -> None:
        self._by_key: dict[TimerKey, Timer] = {}
        self._heap: list[_Entry] = []
        self._seq = itertools.count()
        # The earliest deadline scheduled since the driver last reset it: the runtime wakes its
        # timer loop only when a new timer is due before the one it sleeps towards (a heartbeat
        # pushes a session timer later, which needs no wake-up).
        self.earliest_new: float = float("inf")

    def schedule(self, key: TimerKey, deadline_ms: int, action: Callable[..., Any]) -> Timer:
        """Schedule (or reschedule) the timer for `key`."""
        if deadline_ms < self.earliest_new:
            self.earliest_new = deadline_ms
        seq = next(self._seq)
        timer = self._by_key.get(key)
        if timer is None:
            timer = self._by_key[key] = Timer(deadline_ms, seq, key, action)
        else:
            timer.deadline_ms, timer.seq, timer.action = deadline_ms, seq, action
            entry = timer.entry
            if entry is not None and entry[0] <= deadline_ms:
                return timer  # its entry surfaces first and is re-pushed then
        self._push(timer)
        heap = self._heap
        if len(heap) > 64 and len(heap) > 4 * len(self._by_key):
            # Entries of timers moved earlier or cancelled bloat the heap: rebuild it from the live
            # timers once stale entries are 3 in 4 (amortised O(1)).
            entries: list[_Entry] = []
            for live in self._by_key.values():
                live.entry = (live.deadline_ms, live.seq, live)
                entries.append(live.entry)
            heapq.heapify(entries)
            self._heap = entries
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
        return [t.key for t in sorted(self._by_key.values(), key=lambda t: (t.deadline_ms, t.seq))]

    def next_deadline(self) -> int | None:
        self._settle_top()
        return self._heap[0][0] if self._heap else None

    def next_wake(self, now_ms: int, settle_ahead_ms: int) -> int | None:
        """When a driver should next pop: the earliest deadline, or earlier. Entries of timers
        pushed later are re-pushed only once their old deadline is within `settle_ahead_ms`: every
        member's session timer moves at each heartbeat, so settling all of them whenever the
        earliest surfaced re-pushed 10,000 entries in one step every session timeout (~50 ms);
        so each is re-pushed around its own old deadline, a few hundred per wake-up."""
        self._settle_top(now_ms + settle_ahead_ms)
        return self._heap[0][0] if self._heap else None

    def pop_expired(self, now_ms: int) -> Timer | None:
        """Remove and return the earliest timer due at `now_ms`, if any."""
        self._settle_top(now_ms)  # a late timer's entry beyond now: nothing is due before it
        if self._heap and self._heap[0][0] <= now_ms:
            timer = heapq.heappop(self._heap)[2]
            timer.entry = None
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

    def _push(self, timer: Timer) -> None:
        entry = (timer.deadline_ms, timer.seq, timer)
        timer.entry = entry
        heapq.heappush(self._heap, entry)

    def _settle_top(self, horizon_ms: float = float("inf")) -> None:
        """Until the top entry is a live timer's current one, or one of a timer rescheduled later
        whose old deadline is past `horizon_ms`: drop dead entries, re-push late ones. Every live
        timer's entry is due no later than the timer, so a top entry past the horizon means
        nothing is due until then."""
        heap, by_key = self._heap, self._by_key
        while heap:
            entry = heap[0]
            timer = entry[2]
            if timer.entry is not entry or by_key.get(timer.key) is not timer:
                heapq.heappop(heap)  # superseded, cancelled or already fired
            elif entry[1] != timer.seq:
                if entry[0] > horizon_ms:
                    return
                heapq.heappop(heap)  # rescheduled later since this entry was pushed
                self._push(timer)
            else:
                return


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
