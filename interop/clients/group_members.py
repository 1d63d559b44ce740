"""Group members of every client behind one small interface, for group and end-to-end scenarios.

A member subscribes to one topic in one group and reports, from its client's own callbacks or
output, which partitions it owns (`owned()`), how often it was assigned (`assigns()`), what it
consumed (`consumed()`: (partition, offset, key, value)) and its errors. `stop()` closes it the
way an application would (LeaveGroup, and a final commit where the client does one); `kill()`
ends a subprocess member with SIGKILL. This module owns that interface and the helpers over a
set of members; the members are in python_members.py and process_members.py:

  confluent      Consumer on a thread; commit(asynchronous=False) after each batch
  kafka-python   KafkaConsumer on a thread; ConsumerRebalanceListener; commit() after each batch
  aiokafka       AIOKafkaConsumer in its own asyncio loop on a thread; commit() after each batch
  kafkajs        interop/js/kafkajs-group.mjs (GROUP_JOIN events; commits each batch)
  @platformatic  interop/js/platformatic-group.mjs (group:join events; commits each message)
  kcat           `kcat -G` (balanced consumer, auto commit); rebalances are read from its stderr

With `commit=True` the Python members commit synchronously after processing each batch, before
the next poll (where rebalance callbacks run), so a rebalance never redelivers a processed message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

HEARTBEAT_MS = 300
SESSION_MS = 6000

Consumed = tuple[int, int, str | None, str | None]  # partition, offset, key, value


class Member(Protocol):
    name: str

    def died(self) -> str | None: ...
    def request_stop(self) -> None: ...
    def owned(self) -> frozenset[int]: ...
    def assigns(self) -> int: ...
    def consumed(self) -> list[Consumed]: ...
    def errors(self) -> list[str]: ...
    def stop(self) -> None: ...
    def describe(self) -> str: ...


def group_owns_all(members: Iterable[Member], partitions: int) -> bool:
    """Every partition of the topic owned by exactly one member; every member owns one or more.
    Raises at once if a member died (see `fail_if_any_died`)."""
    members = list(members)
    fail_if_any_died(members)
    counts: dict[int, int] = {}
    for m in members:
        owned = m.owned()
        if not owned:
            return False
        for p in owned:
            counts[p] = counts.get(p, 0) + 1
    return sorted(counts) == list(range(partitions)) and all(c == 1 for c in counts.values())


def fail_if_any_died(members: Iterable[Any]) -> None:
    """Raise at once (for use inside a `wait_until` predicate) if a member is gone unasked, so a
    crashed client fails the test now instead of at the deadline."""
    for m in members:
        reason = m.died()
        if reason:
            raise AssertionError(f"{m.name} {reason}\n{m.describe()}")


def describe_group(members: Iterable[Member]) -> str:
    return "\n".join(m.describe() for m in members)


def stop_all(members: Iterable[Member]) -> list[str]:
    """Stop members concurrently (one by one would rebalance the rest each time); a member that
    does not stop cleanly is killed. Returns the failures, for the caller to assert on."""
    members = list(members)
    for m in members:
        m.request_stop()
    failures = []
    for m in members:
        try:
            m.stop()
        except AssertionError as exc:
            failures.append(str(exc))
            kill = getattr(m, "kill", None)
            if kill is not None:
                kill()
    return failures
