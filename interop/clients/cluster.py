"""Helpers for scenarios against a cluster of brokers: a producer that keeps producing while
brokers go down, reading a partition back, committed offsets as a client sees them, and a
kafkajs member that is given every broker (interop/js/kafkajs-cluster-member.mjs).

`KeepProducing` records what the broker acknowledged (partition, offset, value) from the client's
own delivery reports, so "nothing acknowledged was lost or duplicated" is checked against the
client's view, and `read_partition` reads a partition back from offset 0 with a plain assigned
consumer (no group involved). Every wait here is on a condition under a deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from interop.clients.process_members import NodeMember
from tests.support.waiting import wait_until

Acked = tuple[int, int, str]  # partition, offset, value


class KafkajsClusterMember(NodeMember):
    """kafkajs 2.2.4 with every broker as bootstrap (kafkajs-cluster-member.mjs); otherwise as
    process_members.KafkajsMember (RoundRobinAssigner, commits each batch before reporting it)."""

    script = "kafkajs-cluster-member.mjs"


class KeepProducing:
    """A producer on its own thread sending `prefix-<n>` values round-robin over `partitions`
    partitions until stopped; `acked()` is what its delivery reports confirmed.

    `client` is "confluent-kafka" (librdkafka, idempotent) or "kafka-python" (idempotent);
    both with acks=all and enough retries to ride out a leader change.
    """

    def __init__(
        self,
        client: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        prefix: str,
        *,
        rate_per_s: float = 200.0,
        limit: int | None = None,
    ) -> None:
        self.client, self.bootstrap, self.topic = client, bootstrap, topic
        self.partitions, self.prefix = partitions, prefix
        self.interval = 1.0 / rate_per_s
        self.limit = limit
        self._lock = threading.Lock()
        self._acked: list[Acked] = []
        self._failed: list[str] = []
        self._sent = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    # -- what a test reads ---------------------------------------------------------------------
    def acked(self) -> list[Acked]:
        with self._lock:
            return list(self._acked)

    def failed(self) -> list[str]:
        with self._lock:
            return list(self._failed)

    @property
    def sent(self) -> int:
        return self._sent

    def describe(self) -> str:
        failure = f", FAILED {self._failure!r}" if self._failure else ""
        return (
            f"{self.client} producer: {self._sent} sent, {len(self.acked())} acked, failed {self.failed()[:3]}{failure}"
        )

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> KeepProducing:
        self._thread = threading.Thread(target=self._guarded, name=f"producer-{self.prefix}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop sending and wait until every message sent is acknowledged or failed."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise AssertionError(f"producer did not finish within {timeout:g}s: {self.describe()}")
        if self._failure is not None:
            raise AssertionError(f"producer failed: {self.describe()}")

    def _guarded(self) -> None:
        try:
            (self._confluent if self.client == "confluent-kafka" else self._kafka_python)()
        except BaseException as exc:  # reported by stop()
            self._failure = exc

    def _values(self) -> Iterable[tuple[int, str]]:
        n = 0
        while not self._stop.is_set() and (self.limit is None or n < self.limit):
            yield n % self.partitions, f"{self.prefix}-{n}"
            n += 1
            self._sent = n
            self._stop.wait(self.interval)

    def _confluent(self) -> None:
        from confluent_kafka import Producer

        def delivered(err: Any, msg: Any) -> None:
            with self._lock:
                if err is not None:
                    self._failed.append(str(err))
                else:
                    self._acked.append((msg.partition(), msg.offset(), msg.value().decode()))

        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "client.id": f"kgc-interop-{self.prefix}",
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "message.timeout.ms": 30000,
                "retry.backoff.ms": 50,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
        for partition, value in self._values():
            producer.produce(self.topic, value=value.encode(), partition=partition, on_delivery=delivered)
            producer.poll(0)
        left = producer.flush(30)
        if left:
            raise AssertionError(f"{left} messages neither delivered nor failed after flush")

    def _kafka_python(self) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap,
            client_id=f"kgc-interop-{self.prefix}",
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            retries=2**31 - 1,
            retry_backoff_ms=50,
            request_timeout_ms=5000,
            delivery_timeout_ms=30000,
            metadata_max_age_ms=1000,
        )

        def on_result(value: str) -> Callable[[Any], None]:
            def ok(metadata: Any) -> None:
                with self._lock:
                    self._acked.append((metadata.partition, metadata.offset, value))

            return ok

        def on_error(exc: BaseException) -> None:
            with self._lock:
                self._failed.append(repr(exc))

        try:
            for partition, value in self._values():
                future = producer.send(self.topic, value=value.encode(), partition=partition)
                future.add_callback(on_result(value)).add_errback(on_error)
            producer.flush(30)
        finally:
            producer.close(10)


def wait_acked(producer: KeepProducing, count: int, timeout: float) -> None:
    wait_until(
        lambda: len(producer.acked()) >= count,
        timeout,
        message=lambda: f"{count} messages acknowledged: {producer.describe()}",
    )


def read_partition(bootstrap: str, topic: str, partition: int, timeout: float = 20.0) -> list[tuple[int, str]]:
    """Every (offset, value) of one partition, from offset 0 up to its high watermark, read with
    an assigned confluent-kafka consumer (read_committed is not involved: nothing is transactional)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kgc-interop-reader",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "client.id": "kgc-interop-reader",
        }
    )
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout)
        consumer.assign([TopicPartition(topic, partition, 0)])
        rows: list[tuple[int, str]] = []

        def caught_up() -> bool:
            for m in consumer.consume(num_messages=1000, timeout=0.1):
                if m.error() is None:
                    rows.append((m.offset(), m.value().decode()))
            return not rows and high == 0 or bool(rows) and rows[-1][0] >= high - 1

        wait_until(
            caught_up, timeout, interval=0.0, message=lambda: f"{topic}-{partition} read up to {high}: have {len(rows)}"
        )
        return rows
    finally:
        consumer.close()


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int, timeout: float = 20.0) -> dict[int, int]:
    """The group's committed offsets as a client's OffsetFetch to the group's current coordinator
    returns them (confluent-kafka AdminClient.list_consumer_group_offsets); -1001 = none."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kgc-interop-offsets"})
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])
    listed = admin.list_consumer_group_offsets([request], request_timeout=timeout)[group].result(timeout)
    return {tp.partition: tp.offset for tp in listed.topic_partitions}


def log_end(control: Any) -> int:
    """The request log's cursor for "from now on" (a page whose filter matches nothing scans to
    the end of the log and renders nothing)."""
    return int(control.requests(since=0, group="\x00", limit=1).next)


def requests_since(control: Any, since: int, **filters: Any) -> list[dict[str, Any]]:
    """Every request-log entry from cursor `since` on that matches `filters` (api=, group=)."""
    out: list[dict[str, Any]] = []
    while True:
        page = control.requests(since=since, limit=1000, **filters)
        out += page.requests
        if len(page.requests) < 1000:
            return out
        since = page.next
