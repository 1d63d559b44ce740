"""Group members of every client behind one small interface, for group and end-to-end scenarios.

A member subscribes to one topic in one group and reports, from its client's own callbacks or
output, which partitions it owns (`owned()`), how often it was assigned (`assigns()`), what it
consumed (`consumed()`: (partition, offset, key, value)) and its errors. `stop()` closes it the
way an application would (LeaveGroup, and a final commit where the client does one); `kill()`
ends a subprocess member with SIGKILL.

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

import asyncio
import re
import signal
import threading
from collections.abc import Iterable
from typing import Any, Protocol

from interop.clients.background import BackgroundClient
from interop.clients.node import JS_DIR
from interop.clients.process import require_executable

HEARTBEAT_MS = 300
SESSION_MS = 6000

Consumed = tuple[int, int, str | None, str | None]  # partition, offset, key, value


def _text(data: bytes | str | None) -> str | None:
    return data.decode() if isinstance(data, bytes) else data


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


class _ThreadMember:
    """Shared bookkeeping for the in-process Python members."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.member_id: str | None = None  # set where the client exposes it
        self._lock = threading.Lock()
        self._owned: set[int] = set()
        self._assigns = 0
        self._consumed: list[Consumed] = []
        self._errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def _assigned(self, partitions: Iterable[int]) -> None:
        with self._lock:
            self._owned.update(partitions)
            self._assigns += 1

    def _revoked(self, partitions: Iterable[int]) -> None:
        with self._lock:
            self._owned.difference_update(partitions)

    def _record(self, rows: Iterable[Consumed]) -> None:
        with self._lock:
            self._consumed.extend(rows)

    def _error(self, text: str) -> None:
        with self._lock:
            self._errors.append(text)

    def owned(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._owned)

    def assigns(self) -> int:
        with self._lock:
            return self._assigns

    def consumed(self) -> list[Consumed]:
        with self._lock:
            return list(self._consumed)

    def errors(self) -> list[str]:
        with self._lock:
            return list(self._errors)

    def start(self) -> _ThreadMember:
        self._thread = threading.Thread(target=self._guarded, name=self.name, daemon=True)
        self._thread.start()
        return self

    def _guarded(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by stop() and describe()
            self._failure = exc

    def _run(self) -> None:
        raise NotImplementedError

    def request_stop(self) -> None:
        self._stop.set()

    def died(self) -> str | None:
        if self._failure is not None:
            return f"failed: {self._failure!r}"
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            return "stopped by itself"
        return None

    def stop(self, timeout: float = 20.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise AssertionError(f"{self.name} did not close within {timeout:g}s")
        with self._lock:
            self._owned.clear()
        if self._failure is not None:
            raise AssertionError(f"{self.name} failed: {self._failure!r}")

    def describe(self) -> str:
        failure = f" FAILED: {self._failure!r}" if self._failure else ""
        return (
            f"  {self.name}: owns {sorted(self.owned())}, {self.assigns()} assigns, "
            f"{len(self.consumed())} consumed, errors {self.errors()[-3:]}{failure}"
        )


class ConfluentKafkaMember(_ThreadMember):
    """confluent-kafka (librdkafka 2.16: JoinGroup v5, SyncGroup v3, OffsetCommit/Fetch v9), eager
    range/roundrobin; commit(asynchronous=False) after each batch."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topic: str,
        *,
        commit: bool = False,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(name)
        self.config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": f"kgc-interop-{name}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "session.timeout.ms": SESSION_MS,
            **(config or {}),
        }
        self.topic, self.commit = topic, commit

    def _run(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        consumer = Consumer(self.config)
        try:
            consumer.subscribe(
                [self.topic],
                on_assign=lambda c, ps: (
                    setattr(self, "member_id", c.memberid()),
                    self._assigned(p.partition for p in ps),
                ),
                on_revoke=lambda c, ps: self._revoked(p.partition for p in ps),
                on_lost=lambda c, ps: self._revoked(p.partition for p in ps),
            )
            while not self._stop.is_set():
                rows = []
                for m in consumer.consume(num_messages=500, timeout=0.05):
                    if m.error() is not None:
                        self._error(str(m.error()))
                    else:
                        rows.append((m.partition(), m.offset(), _text(m.key()), _text(m.value())))
                if rows:
                    self._record(rows)
                    if self.commit:
                        try:
                            consumer.commit(asynchronous=False)
                        except KafkaException as exc:
                            self._error(f"commit: {exc}")
        finally:
            consumer.close()


class KafkaPythonMember(_ThreadMember):
    """kafka-python (JoinGroup v7, SyncGroup v5, Heartbeat v4, LeaveGroup v5, OffsetCommit/Fetch v8)."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topic: str,
        *,
        commit: bool = False,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(name)
        self.config = {
            "bootstrap_servers": bootstrap,
            "group_id": group,
            "client_id": f"kgc-interop-{name}",
            "auto_offset_reset": "earliest",
            "enable_auto_commit": False,
            "heartbeat_interval_ms": HEARTBEAT_MS,
            "session_timeout_ms": SESSION_MS,
            **(config or {}),
        }
        self.topic, self.commit = topic, commit

    def _run(self) -> None:
        from kafka import ConsumerRebalanceListener, KafkaConsumer
        from kafka.errors import KafkaError

        member = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked):
                member._revoked(tp.partition for tp in revoked)

            def on_partitions_assigned(self, assigned):
                member._assigned(tp.partition for tp in assigned)

        consumer = KafkaConsumer(**self.config)
        try:
            consumer.subscribe([self.topic], listener=Listener())
            while not self._stop.is_set():
                try:
                    batches = consumer.poll(timeout_ms=50, max_records=500)
                except KafkaError as exc:
                    # kafka-python raises e.g. KafkaConnectionError out of poll() while the
                    # broker is away (a restart); applications retry retriable errors.
                    if not exc.retriable:
                        raise
                    self._error(f"poll: {exc!r}")
                    continue
                rows = [
                    (r.partition, r.offset, _text(r.key), _text(r.value))
                    for records in batches.values()
                    for r in records
                ]
                if rows:
                    self._record(rows)
                    if self.commit:
                        try:
                            consumer.commit()
                        except Exception as exc:  # CommitFailedError after a rebalance: recorded
                            self._error(f"commit: {exc!r}")
        finally:
            consumer.close()  # commits nothing more (auto commit is off) and sends LeaveGroup


class AiokafkaMember(_ThreadMember):
    """aiokafka (JoinGroup v5, SyncGroup v3, Heartbeat v1, LeaveGroup v1, OffsetCommit/Fetch v3),
    in its own asyncio loop on its own thread."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topic: str,
        *,
        commit: bool = False,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(name)
        self.config = {
            "bootstrap_servers": bootstrap,
            "group_id": group,
            "client_id": f"kgc-interop-{name}",
            "auto_offset_reset": "earliest",
            "enable_auto_commit": False,
            "heartbeat_interval_ms": HEARTBEAT_MS,
            "session_timeout_ms": SESSION_MS,
            **(config or {}),
        }
        self.topic, self.commit = topic, commit

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

        member = self

        class Listener(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked):
                member._revoked(tp.partition for tp in revoked)

            async def on_partitions_assigned(self, assigned):
                member._assigned(tp.partition for tp in assigned)

        consumer = AIOKafkaConsumer(**self.config)
        await consumer.start()
        try:
            consumer.subscribe([self.topic], listener=Listener())
            while not self._stop.is_set():
                batches = await consumer.getmany(timeout_ms=50, max_records=500)
                rows = [
                    (r.partition, r.offset, _text(r.key), _text(r.value))
                    for records in batches.values()
                    for r in records
                ]
                if rows:
                    self._record(rows)
                    if self.commit:
                        try:
                            await consumer.commit()
                        except Exception as exc:
                            self._error(f"commit: {exc!r}")
        finally:
            await consumer.stop()


class _ProcessMember:
    """A member in a child process; subclasses parse its output."""

    def __init__(self, name: str, client: BackgroundClient) -> None:
        self.name, self.client = name, client
        self._asked = False

    def start(self) -> _ProcessMember:
        self.client.start()
        return self

    def request_stop(self) -> None:
        """Start a clean stop without waiting (stdin EOF; the node scripts close on it)."""
        self._asked = True
        self.client.close_stdin()

    def stop(self, timeout: float = 20.0) -> None:
        self._asked = True
        code = self.client.stop(signal.SIGTERM, timeout)
        if code != 0:
            raise AssertionError(f"{self.name} exited {code} on SIGTERM\n{self.client.describe()}")

    def kill(self) -> None:
        self._asked = True
        self.client.kill()

    def died(self) -> str | None:
        code = self.client.returncode
        return None if code is None or self._asked else f"exited ({code}) without being asked"

    def describe(self) -> str:
        return f"  {self.name}: owns {sorted(self.owned())}\n{self.client.describe()}"

    def owned(self) -> frozenset[int]:
        raise NotImplementedError


class NodeMember(_ProcessMember):
    """A node client running interop/js/<script> (kafkajs-group.mjs or platformatic-group.mjs), which
    prints one JSON line per event: assign / message / crash / closed."""

    script = ""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, *, deadline: float = 60.0) -> None:
        node = require_executable("node")
        argv = [
            node,
            str(JS_DIR / self.script),
            bootstrap,
            group,
            topic,
            f"kgc-interop-{name}",
            str(HEARTBEAT_MS),
            str(SESSION_MS),
        ]
        super().__init__(name, BackgroundClient(argv, cwd=JS_DIR, name=name, deadline=deadline))

    def _events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.client.events() if e.get("event") == kind]

    def owned(self) -> frozenset[int]:
        if self.client.returncode is not None:
            return frozenset()
        latest: frozenset[int] = frozenset()
        for e in self.client.events():  # eager: each join replaces the whole assignment
            if e.get("event") == "assign":
                latest = frozenset(e["partitions"])
            elif e.get("event") in ("revoke", "crash", "closed"):
                latest = frozenset()
        return latest

    def assigns(self) -> int:
        return len(self._events("assign"))

    def consumed(self) -> list[Consumed]:
        return [(e["partition"], int(e["offset"]), e["key"], e["value"]) for e in self._events("message")]

    def errors(self) -> list[str]:
        return [f"{e.get('type')}: {e.get('message')}" for e in self._events("crash")]

    def crashes(self) -> list[dict[str, Any]]:
        return self._events("crash")


class KafkajsMember(NodeMember):
    """kafkajs 2.2.4 (JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v3, OffsetCommit v5,
    OffsetFetch v4; protocol "RoundRobinAssigner", so it cannot share a group with other clients)."""

    script = "kafkajs-group.mjs"


class PlatformaticMember(NodeMember):
    """@platformatic/kafka 1.35 (protocol "roundrobin"; commits each message before reporting it)."""

    script = "platformatic-group.mjs"


# "% Group G rebalanced (memberid M): assigned: t [0], t [1]" / "...: revoked: t [0]" (kcat's
# rebalance_cb, printed at its default verbosity).
_KCAT_REBALANCE = re.compile(r"^% Group .* rebalanced \(memberid .*\): (assigned|revoked): (.*)$")
_KCAT_PARTITION = re.compile(r"\[(\d+)\]")


class KcatMember(_ProcessMember):
    """kcat 1.7.1 -G (librdkafka 2.0.2: JoinGroup v5, OffsetCommit v7, auto commit every 200 ms and
    on close). Messages come on stdout as "partition<TAB>offset<TAB>key<TAB>value" lines."""

    def __init__(
        self, name: str, bootstrap: str, group: str, topic: str, *, deadline: float = 60.0, extra: Iterable[str] = ()
    ) -> None:
        kcat = require_executable("kcat")
        argv = [
            kcat,
            "-b",
            bootstrap,
            "-G",
            group,
            "-u",
            "-X",
            f"client.id=kgc-interop-{name}",
            "-X",
            f"heartbeat.interval.ms={HEARTBEAT_MS}",
            "-X",
            f"session.timeout.ms={SESSION_MS}",
            "-X",
            "auto.offset.reset=earliest",
            "-X",
            "auto.commit.interval.ms=200",
            *extra,
            "-f",
            "%p\t%o\t%k\t%s\n",
            topic,
        ]
        super().__init__(name, BackgroundClient(argv, name=name, deadline=deadline))

    def _rebalances(self) -> list[tuple[str, frozenset[int]]]:
        out = []
        for line in self.client.lines("stderr"):
            match = _KCAT_REBALANCE.match(line)
            if match:
                out.append((match.group(1), frozenset(int(p) for p in _KCAT_PARTITION.findall(match.group(2)))))
        return out

    def owned(self) -> frozenset[int]:
        if self.client.returncode is not None:
            return frozenset()
        latest: frozenset[int] = frozenset()
        for kind, partitions in self._rebalances():  # eager
            latest = partitions if kind == "assigned" else frozenset()
        return latest

    def assigns(self) -> int:
        return sum(1 for kind, _ in self._rebalances() if kind == "assigned")

    def consumed(self) -> list[Consumed]:
        rows = []
        for line in self.client.lines("stdout"):
            parts = line.split("\t")
            if len(parts) == 4 and parts[0].isdigit():
                rows.append((int(parts[0]), int(parts[1]), parts[2], parts[3]))
        return rows

    def errors(self) -> list[str]:
        return [line for line in self.client.lines("stderr") if "ERROR" in line or "error" in line.lower()]
