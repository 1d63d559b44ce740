"""confluent-kafka's ShareConsumer (librdkafka 2.16, KIP-932) as the share-group tests drive it.

`ShareReader` runs one share consumer on a thread of the test process and keeps every delivery it
saw (partition, offset, delivery count, value) in order; in explicit mode a `decide` function
picks each record's acknowledgement (ACCEPT, RELEASE or REJECT), in implicit mode the client
accepts a poll's records on the next poll. `stop()` commits what is pending and closes.

Run as a module it is a consumer that acquires records and then holds them without acknowledging
(`python -m interop.clients.share BOOTSTRAP GROUP TOPIC COUNT [ACCEPT]`): one JSON line per record,
then, with ACCEPT, the first ACCEPT records accepted and committed ({"accepted": n, "errors": [...]}),
then {"holding": n}; it polls no more until it is killed or stopped, so the rest stay acquired by it.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import AcknowledgeType, ShareConsumer

from tests.support.waiting import wait_until

# Share-group settings that keep a test quick: members heartbeat every 500 ms; a member that stops
# heartbeating is fenced after 6 s. Kafka's floors (5 s / 45 s) are lowered with them.
FAST_SHARE_SETTINGS: dict[str, Any] = {
    "group.share.heartbeat.interval.ms": 500,
    "group.share.min.heartbeat.interval.ms": 500,
    "group.share.session.timeout.ms": 6000,
    "group.share.min.session.timeout.ms": 6000,
}
POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Delivery:
    consumer: str
    partition: int
    offset: int
    delivery_count: int
    value: bytes | None


Decide = Callable[[Any], int]  # a message -> AcknowledgeType.ACCEPT / RELEASE / REJECT


class ShareReader:
    """One share consumer polling on its own thread until `stop()`."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topics: list[str],
        *,
        decide: Decide | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.explicit = decide is not None
        self._decide = decide
        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "share.acknowledgement.mode": "explicit" if self.explicit else "implicit",
            **(config or {}),
        }
        self._consumer = ShareConsumer(conf)
        self._consumer.subscribe(topics)
        self._lock = threading.Lock()
        self._deliveries: list[Delivery] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"share-{name}", daemon=True)

    def start(self) -> ShareReader:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for message in self._consumer.poll(POLL_S) or []:
                    if message.error():
                        self.errors.append(str(message.error()))
                        continue
                    delivery = Delivery(
                        self.name, message.partition(), message.offset(), message.delivery_count(), message.value()
                    )
                    with self._lock:
                        self._deliveries.append(delivery)
                    if self._decide is not None:
                        self._consumer.acknowledge(message, self._decide(message))
            self._consumer.commit_sync(30)  # implicit: the last poll's records; explicit: what is marked
        except Exception as exc:  # noqa: BLE001 - reported by the test through `errors`
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            self._consumer.close()

    @property
    def deliveries(self) -> list[Delivery]:
        with self._lock:
            return list(self._deliveries)

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"share consumer {self.name} did not close"


def stop_all(readers: list[ShareReader]) -> None:
    for reader in readers:
        reader._stop.set()
    for reader in readers:
        reader.stop()


def delivered(readers: list[ShareReader]) -> list[Delivery]:
    return [d for reader in readers for d in reader.deliveries]


def wait_delivered(readers: list[ShareReader], count: int, timeout: float, what: str) -> list[Delivery]:
    """Wait until the readers together saw `count` deliveries (any consumer errors fail it)."""

    def enough() -> list[Delivery] | None:
        for reader in readers:
            assert not reader.errors, f"{reader.name}: {reader.errors[:5]}"
        seen = delivered(readers)
        return seen if len(seen) >= count else None

    return wait_until(enough, timeout, message=lambda: f"{what}: {len(delivered(readers))} of {count} delivered")


def _hold(bootstrap: str, group: str, topic: str, count: int, accept: int) -> None:
    consumer = ShareConsumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe([topic])
    held: list[Any] = []
    while len(held) < count:
        for message in consumer.poll(POLL_S) or []:
            if message.error():
                print(json.dumps({"error": str(message.error())}), flush=True)
                continue
            held.append(message)
            print(json.dumps({"partition": message.partition(), "offset": message.offset()}), flush=True)
    if accept:
        for message in held[:accept]:
            consumer.acknowledge(message, AcknowledgeType.ACCEPT)
        results = consumer.commit_sync(30)
        errors = [str(error) for error in results.values() if error is not None]
        print(json.dumps({"accepted": accept, "errors": errors}), flush=True)
    print(json.dumps({"holding": len(held) - accept}), flush=True)
    sys.stdin.read()  # until the test closes stdin or kills this process; the rest never acknowledged
    consumer.close()


def produce_values(bootstrap: str, topic: str, values: list[str], partitions: int) -> None:
    """Value i goes to partition i % partitions (each partition then holds its values in order)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=i % partitions)
        producer.poll(0)
    assert producer.flush(30) == 0, "records left unacknowledged by the broker"


if __name__ == "__main__":
    _hold(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 0)
