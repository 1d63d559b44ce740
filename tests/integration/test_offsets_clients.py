"""Real clients commit offsets with metadata, the server restarts, and a new consumer of the same
group reads them back (`committed()`) and resumes there: confluent-kafka, kafka-python, aiokafka.

Real time, real sockets (EmbeddedServer on its own thread). Every wait is a poll loop bounded by
a deadline; nothing asserts on time.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from coordinator.embed.embedded import EmbeddedServer

DEADLINE = 30.0  # seconds: bounds a hang, never a timing assertion
PARTITIONS = 2
MESSAGES = 10  # per partition
COMMIT = {0: 3, 1: 7}  # offset to commit per partition


def _produce(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition in range(PARTITIONS):
        for i in range(MESSAGES):
            producer.produce(topic, value=f"{partition}-{i}".encode(), partition=partition)
    assert producer.flush(DEADLINE) == 0


@pytest.fixture
def server(tmp_path):
    topic = f"t-{uuid.uuid4().hex[:8]}"
    with EmbeddedServer(tmp_path / "data", topics={topic: PARTITIONS}) as running:
        _produce(running.bootstrap, topic)
        yield running, topic


def _first_offsets_confluent(consumer, deadline: float) -> dict[int, int]:
    """Poll until a record from every partition arrived; the first offset of each."""
    first: dict[int, int] = {}
    while len(first) < PARTITIONS:
        assert time.monotonic() < deadline, f"only got partitions {sorted(first)}"
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            continue
        first.setdefault(msg.partition(), msg.offset())
    return first


def test_confluent_kafka_commit_restart_resume(server):
    from confluent_kafka import Consumer, TopicPartition

    coordinator, topic = server
    config = {
        "bootstrap.servers": coordinator.bootstrap,
        "group.id": "cg-confluent",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
    }
    deadline = time.monotonic() + DEADLINE
    consumer = Consumer(config)
    consumer.subscribe([topic])
    assert _first_offsets_confluent(consumer, deadline) == {0: 0, 1: 0}  # nothing committed yet
    consumer.commit(
        offsets=[TopicPartition(topic, p, off, metadata=f"meta-{p}") for p, off in COMMIT.items()], asynchronous=False
    )
    consumer.close()

    coordinator.restart()

    consumer = Consumer(config)
    committed = consumer.committed([TopicPartition(topic, p) for p in COMMIT], timeout=DEADLINE)
    assert [(tp.partition, tp.offset, tp.metadata, tp.error) for tp in committed] == [
        (p, off, f"meta-{p}", None) for p, off in COMMIT.items()
    ]
    consumer.subscribe([topic])
    assert _first_offsets_confluent(consumer, time.monotonic() + DEADLINE) == COMMIT
    consumer.close()


def test_kafka_python_commit_restart_resume(server):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    coordinator, topic = server

    def consumer() -> KafkaConsumer:
        return KafkaConsumer(
            bootstrap_servers=coordinator.bootstrap,
            group_id="cg-kafka-python",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            request_timeout_ms=10_000,
        )

    def first_offsets(c: KafkaConsumer) -> dict[int, int]:
        first: dict[int, int] = {}
        deadline = time.monotonic() + DEADLINE
        while len(first) < PARTITIONS:
            assert time.monotonic() < deadline, f"only got partitions {sorted(first)}"
            for tp, records in c.poll(timeout_ms=200).items():
                if records:
                    first.setdefault(tp.partition, records[0].offset)
        return first

    c = consumer()
    c.subscribe([topic])
    assert first_offsets(c) == {0: 0, 1: 0}
    c.commit({TopicPartition(topic, p): OffsetAndMetadata(off, f"kp-{p}", -1) for p, off in COMMIT.items()})
    c.close()

    coordinator.restart()

    c = consumer()
    for p, off in COMMIT.items():
        got = c.committed(TopicPartition(topic, p), metadata=True)
        assert (got.offset, got.metadata) == (off, f"kp-{p}")
    c.subscribe([topic])
    assert first_offsets(c) == COMMIT
    c.close()


def test_aiokafka_commit_restart_resume(server):
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.structs import OffsetAndMetadata

    coordinator, topic = server

    async def session(commit: bool) -> tuple[dict[int, int], dict[int, tuple[int, str]]]:
        c = AIOKafkaConsumer(
            topic,
            bootstrap_servers=coordinator.bootstrap,
            group_id="cg-aiokafka",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        )
        await c.start()
        try:
            committed = {}
            if not commit:
                # OffsetFetch through the group coordinator, with metadata.
                offsets = await c._coordinator.fetch_committed_offsets([TopicPartition(topic, p) for p in COMMIT])
                committed = {tp.partition: (om.offset, om.metadata) for tp, om in offsets.items()}
            first: dict[int, int] = {}
            async with asyncio.timeout(DEADLINE):
                while len(first) < PARTITIONS:
                    for tp, records in (await c.getmany(timeout_ms=200)).items():
                        if records:
                            first.setdefault(tp.partition, records[0].offset)
            if commit:
                await c.commit(
                    {TopicPartition(topic, p): OffsetAndMetadata(off, f"ak-{p}") for p, off in COMMIT.items()}
                )
            return first, committed
        finally:
            await c.stop()

    first, _ = asyncio.run(session(commit=True))
    assert first == {0: 0, 1: 0}
    coordinator.restart()
    first, committed = asyncio.run(session(commit=False))
    assert committed == {p: (off, f"ak-{p}") for p, off in COMMIT.items()}
    assert first == COMMIT
