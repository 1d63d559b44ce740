"""Recent group state changes for the live page: a bounded ring of what observe/reasons tells
its observers (group, from, to, generation, cause), read by cursor like the request log.

Registered as an observer of the server's task (observe/reasons.py), so every state change of
every group reaches it, from requests and timers alike; recording is one tuple append.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.control.errors import bad_request
from coordinator.runtime.clock import Clock


@dataclass(frozen=True, slots=True)
class TransitionsPage:
    next: int
    missed: int
    transitions: list[dict[str, Any]]


class TransitionLog:
    def __init__(self, wall: Clock, capacity: int = 2000) -> None:
        self._wall = wall
        self.capacity = capacity
        self._ring: list[tuple[Any, ...] | None] = [None] * capacity
        self._next = 0

    def transition(self, group_id: str, old: str, new: str, generation: int, reason: str | None) -> None:
        cursor = self._next
        self._ring[cursor % self.capacity] = (cursor, self._wall.time_ms(), group_id, old, new, generation, reason)
        self._next = cursor + 1

    def page(self, since: int = 0, group: str | None = None, limit: int = 200) -> TransitionsPage:
        if since < 0 or since > self._next:
            raise bad_request(f"cursor {since} is outside 0..{self._next}")
        oldest = max(0, self._next - self.capacity)
        start = max(since, oldest)
        out: list[dict[str, Any]] = []
        cursor = start
        while cursor < self._next and len(out) < limit:
            entry = self._ring[cursor % self.capacity]
            cursor += 1
            if entry is None or (group is not None and entry[2] != group):
                continue
            c, ts, g, old, new, generation, reason = entry
            out.append(
                {"cursor": c, "ts": ts, "group": g, "from": old, "to": new, "generation": generation, "reason": reason}
            )
        return TransitionsPage(cursor, start - since, out)
