"""The in-process Python group members (see group_members.py for the interface): confluent-kafka
Consumer and kafka-python KafkaConsumer on a thread, aiokafka AIOKafkaConsumer in its own asyncio
loop on a thread. Each records assignments from its client's rebalance callbacks and, with
commit=True, commits synchronously after each batch, before the next poll, so a rebalance never
redelivers a processed message.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Any

from interop.clients.group_members import HEARTBEAT_MS, SESSION_MS, Consumed

__all__ = ["ConfluentKafkaMember", "KafkaPythonMember", "AiokafkaMember"]


def _text(data: bytes | str | None) -> str | None:
    return data.decode() if isinstance(data, bytes) else data


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
