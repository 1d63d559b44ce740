"""Consumer-group members driven from a test: who owns which partition, as the clients see it.

`ConfluentMember` is one confluent-kafka (librdkafka 2.16) consumer polled on its own thread, so
its rebalance callbacks run promptly however many members a test starts. Every member reports
its callbacks to a shared `Ownership`, which records the partitions each member owns and flags a
partition handed to a member while another still owns it (the safety property of a rebalance,
eager or cooperative). Tests wait on `Ownership.stable(...)`: every partition owned by exactly
one live member and every member owning at least one. Membership facts come only from the
clients' own callbacks, never from the server's internals.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

TP = tuple[str, int]


class Ownership:
    """Partitions per member, as reported by the members' rebalance callbacks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owned: dict[str, set[TP]] = {}
        self.violations: list[str] = []

    def join(self, member: str) -> None:
        with self._lock:
            self._owned.setdefault(member, set())

    def assign(self, member: str, tps: Iterable[TP]) -> None:
        with self._lock:
            tps = set(tps)
            for other, owned in self._owned.items():
                both = owned & tps if other != member else set()
                if both:
                    self.violations.append(f"{member} was assigned {sorted(both)} still owned by {other}")
            self._owned.setdefault(member, set()).update(tps)

    def revoke(self, member: str, tps: Iterable[TP]) -> None:
        with self._lock:
            self._owned.setdefault(member, set()).difference_update(tps)

    def leave(self, member: str) -> None:
        with self._lock:
            self._owned.pop(member, None)

    def snapshot(self) -> dict[str, frozenset[TP]]:
        with self._lock:
            return {m: frozenset(o) for m, o in self._owned.items()}

    def stable(self, partitions: Iterable[TP], members: Iterable[str]) -> bool:
        """Every partition owned by exactly one of `members`, each of which owns at least one, and
        nobody else owns anything."""
        wanted, names = set(partitions), set(members)
        snap = self.snapshot()
        counts: dict[TP, int] = {}
        for name, owned in snap.items():
            if owned and name not in names:
                return False
            for tp in owned:
                counts[tp] = counts.get(tp, 0) + 1
        return set(counts) == wanted and all(c == 1 for c in counts.values()) and all(snap.get(n) for n in names)

    def describe(self) -> str:
        lines = [f"  {m}: {_ranges(o)}" for m, o in sorted(self.snapshot().items())]
        return "ownership:\n" + "\n".join(lines) + (f"\nviolations: {self.violations}" if self.violations else "")


def _ranges(tps: Iterable[TP]) -> str:
    by_topic: dict[str, list[int]] = {}
    for topic, p in tps:
        by_topic.setdefault(topic, []).append(p)
    return " ".join(f"{t}{sorted(ps)}" for t, ps in sorted(by_topic.items())) or "-"


@dataclass
class Event:
    at: float  # time.monotonic()
    kind: str  # assign | revoke | lost | error
    tps: frozenset[TP] = field(default_factory=frozenset)
    detail: str = ""


class ConfluentMember:
    """One confluent-kafka consumer subscribed to `topics`, polled on its own thread.

    `config` is merged over the defaults (earliest reset, no auto commit, fast heartbeats).
    `on_messages(member, consumer, messages)` runs on the member's thread after each non-empty
    `consume()` batch (to record and commit). `close()` closes the consumer (LeaveGroup unless it
    is a static member) and reports the loss of its partitions to the ownership. Callbacks run
    inside `consume()`, so `poll_timeout` bounds how late one can be noticed.
    """

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topics: list[str],
        ownership: Ownership,
        config: dict[str, Any] | None = None,
        on_messages: Callable[[ConfluentMember, Any, list[Any]], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        poll_timeout: float = 0.05,
    ) -> None:
        self.name, self.topics, self.ownership = name, topics, ownership
        self.poll_timeout = poll_timeout
        self.config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": f"kgc-interop-{name}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "heartbeat.interval.ms": 300,
            "session.timeout.ms": 6000,
            **(config or {}),
        }
        self.on_messages = on_messages
        self.on_event = on_event
        self.events: list[Event] = []
        self.errors: list[str] = []
        self.member_id: str | None = None
        self.started_at = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        ownership.join(name)

    # -- counts a test asserts on ---------------------------------------------------------------
    def count(self, kind: str) -> int:
        return sum(1 for e in self.events if e.kind == kind)

    @property
    def owned(self) -> frozenset[TP]:
        return self.ownership.snapshot().get(self.name, frozenset())

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> ConfluentMember:
        self.started_at = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=f"member-{self.name}", daemon=True)
        self._thread.start()
        return self

    def request_close(self) -> None:
        """Start closing without waiting (see `close_all`)."""
        self._stop.set()

    def close(self, timeout: float = 20.0) -> None:
        """Close the consumer on its own thread (librdkafka serves the revoke callback there)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise AssertionError(f"{self.name} did not close within {timeout:g}s")
        self.ownership.leave(self.name)
        if self._failure is not None:
            raise AssertionError(f"{self.name}'s poll thread failed: {self._failure!r}")

    def _record(self, kind: str, partitions: Iterable[Any] = (), detail: str = "") -> None:
        event = Event(time.monotonic(), kind, frozenset((p.topic, p.partition) for p in partitions), detail)
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _run(self) -> None:
        from confluent_kafka import Consumer

        consumer = Consumer(self.config)

        def on_assign(c: Any, partitions: list[Any]) -> None:
            self.member_id = c.memberid()
            self.ownership.assign(self.name, ((p.topic, p.partition) for p in partitions))
            self._record("assign", partitions)

        def on_revoke(c: Any, partitions: list[Any]) -> None:
            self.ownership.revoke(self.name, ((p.topic, p.partition) for p in partitions))
            self._record("revoke", partitions)

        def on_lost(c: Any, partitions: list[Any]) -> None:
            self.ownership.revoke(self.name, ((p.topic, p.partition) for p in partitions))
            self._record("lost", partitions)

        try:
            consumer.subscribe(self.topics, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
            while not self._stop.is_set():
                batch = consumer.consume(num_messages=500, timeout=self.poll_timeout)
                good = []
                for message in batch:
                    if message.error() is not None:
                        self.errors.append(str(message.error()))
                        self._record("error", detail=str(message.error()))
                    else:
                        good.append(message)
                if good and self.on_messages is not None:
                    self.on_messages(self, consumer, good)
        except BaseException as exc:  # reported by close()
            self._failure = exc
        finally:
            consumer.close()


def close_all(members: Iterable[ConfluentMember], timeout: float = 20.0) -> list[str]:
    """Close members concurrently (closing one by one would rebalance the rest each time);
    returns the failures instead of raising, for `finally` blocks."""
    members = list(members)
    for m in members:
        m.request_close()
    failures = []
    for m in members:
        try:
            m.close(timeout)
        except AssertionError as exc:
            failures.append(str(exc))
    return failures


def stable_group(
    ownership: Ownership, topic: str, partitions: int, members: Iterable[ConfluentMember | str]
) -> Callable[[], bool]:
    """A predicate for `wait_until`: the group of `members` owns topic[0..partitions) exactly once."""
    names = [m if isinstance(m, str) else m.name for m in members]
    wanted = [(topic, p) for p in range(partitions)]
    return lambda: ownership.stable(wanted, names)


# -- `python -m interop.clients.groups BOOTSTRAP GROUP TOPIC [CONFIG_JSON]`: one member as a child
# process, so a test can SIGKILL it (no LeaveGroup, no close). It prints one JSON line per
# rebalance callback ({"event": "assign"|"revoke"|"lost", "partitions": [[topic, p], ...]}) and
# closes cleanly on stdin EOF.
def _child_main(argv: list[str]) -> None:
    bootstrap, group, topic = argv[:3]
    config = json.loads(argv[3]) if len(argv) > 3 else {}

    def emit(event: Event) -> None:
        print(json.dumps({"event": event.kind, "partitions": sorted(event.tps), "detail": event.detail}), flush=True)

    member = ConfluentMember("child", bootstrap, group, [topic], Ownership(), config, on_event=emit)
    member.start()
    print(json.dumps({"event": "started"}), flush=True)
    sys.stdin.read()  # EOF: the parent wants a clean close
    member.close()
    print(json.dumps({"event": "closed"}), flush=True)


if __name__ == "__main__":
    _child_main(sys.argv[1:])
