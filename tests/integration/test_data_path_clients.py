"""Real clients on the data path (confluent-kafka with every compression, kafka-python's default
idempotent producer, aiokafka) producing and consuming unchanged against an embedded server, and
the data surviving a restart. Each client runs on its own thread or event loop; waits are bounded
by the clients' timeouts, nothing sleeps for a fixed time.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from coordinator.embed.embedded import EmbeddedServer

DEADLINE = 30  # seconds: a safety net, never a timing assertion


def _consume_confluent(bootstrap: str, topic: str, partition: int, count: int) -> list[tuple[bytes, bytes]]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, partition, 0)])
    got, deadline = [], time.monotonic() + DEADLINE
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.append((message.key(), message.value()))
    finally:
        consumer.close()
    return got


@pytest.fixture
def embedded(tmp_path):
    with EmbeddedServer(tmp_path / "data", topics={"events": 1}) as server:
        yield server


def test_confluent_kafka_with_every_compression_then_restart(embedded):
    from confluent_kafka import Producer

    expected = []
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        producer = Producer(
            {
                "bootstrap.servers": embedded.bootstrap,
                "acks": "all",
                "compression.type": codec,
                "enable.idempotence": True,
                "linger.ms": 5,
            }
        )
        for i in range(200):
            key, value = f"{codec}-{i}".encode(), f"value {i} ".encode() * (i % 7 + 1)
            producer.produce("events", key=key, value=value)
            expected.append((key, value))
        assert producer.flush(DEADLINE) == 0
    assert _consume_confluent(embedded.bootstrap, "events", 0, len(expected)) == expected
    embedded.restart()
    assert _consume_confluent(embedded.bootstrap, "events", 0, len(expected)) == expected


def test_kafka_python_default_idempotent_producer_and_assigned_consumer(embedded):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=embedded.bootstrap, acks="all")  # idempotent by default
    futures = [producer.send("events", key=b"k%d" % i, value=b"v%d" % i) for i in range(300)]
    producer.flush(timeout=DEADLINE)
    offsets = [f.get(timeout=DEADLINE).offset for f in futures]
    producer.close(timeout=DEADLINE)
    assert offsets == list(range(300))
    consumer = KafkaConsumer(
        bootstrap_servers=embedded.bootstrap,
        group_id=None,
        enable_auto_commit=False,
        consumer_timeout_ms=DEADLINE * 1000,
    )
    tp = TopicPartition("events", 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    for message in consumer:
        got.append((message.key, message.value))
        if len(got) == 300:
            break
    consumer.close()
    assert got == [(b"k%d" % i, b"v%d" % i) for i in range(300)]


def test_aiokafka_producer_and_assigned_consumer(embedded):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    async def scenario() -> list[tuple[bytes, bytes]]:
        producer = AIOKafkaProducer(
            bootstrap_servers=embedded.bootstrap, acks="all", enable_idempotence=True, compression_type="gzip"
        )
        await producer.start()
        try:
            for i in range(100):
                await producer.send("events", key=b"a%d" % i, value=b"b%d" % i)
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            bootstrap_servers=embedded.bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        await consumer.start()
        got = []
        try:
            consumer.assign([TopicPartition("events", 0)])
            while len(got) < 100:
                batch = await consumer.getmany(timeout_ms=1000)
                got += [(m.key, m.value) for messages in batch.values() for m in messages]
        finally:
            await consumer.stop()
        return got

    got = asyncio.run(asyncio.wait_for(scenario(), DEADLINE))
    assert got == [(b"a%d" % i, b"b%d" % i) for i in range(100)]
