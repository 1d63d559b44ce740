"""Transactional producers and read_committed / read_uncommitted readers of each real client.

`run_transactions(client, bootstrap, topic, txn_id, plan)` plays a plan: a list of
(commit, values) steps, each one transaction whose values go round-robin over the topic's
partitions, then committed or aborted (an aborted transaction's records are flushed to the
broker first, so they really are in the log for read_uncommitted readers to see). `read_values`
reads every partition from the start with one client and an isolation level until `count`
values arrived and the reader's position reached the end offsets (which read_committed readers
get as the last stable offset), so a late extra value cannot be missed.

  confluent-kafka  Producer(transactional.id): init/begin/produce/flush/commit|abort
  kafka-python     KafkaProducer(transactional_id): the same calls
  aiokafka         AIOKafkaProducer(transactional_id): begin/send_and_wait/commit|abort
  kafkajs          producer({transactionalId, idempotent}).transaction(): send/commit|abort (node)
"""

from __future__ import annotations

import asyncio
import json
import time

from interop.clients.node import run_node

Plan = list[tuple[bool, list[str]]]


def run_transactions(
    client: str, bootstrap: str, topic: str, txn_id: str, plan: Plan, partitions: int, timeout: float = 30.0
) -> None:
    if client == "kafkajs":
        run_node("kafkajs-txn.mjs", bootstrap, topic, txn_id, str(partitions), json.dumps(plan), timeout=timeout)
        return
    {"confluent-kafka": _confluent, "kafka-python": _kafka_python, "aiokafka": _aiokafka}[client](
        bootstrap, topic, txn_id, plan, partitions, timeout
    )


def _confluent(bootstrap: str, topic: str, txn_id: str, plan: Plan, partitions: int, timeout: float) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(timeout)
    for commit, values in plan:
        producer.begin_transaction()
        for i, value in enumerate(values):
            producer.produce(topic, key=value.encode(), value=value.encode(), partition=i % partitions)
        producer.flush(timeout)
        if commit:
            producer.commit_transaction(timeout)
        else:
            producer.abort_transaction(timeout)


def _kafka_python(bootstrap: str, topic: str, txn_id: str, plan: Plan, partitions: int, timeout: float) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, request_timeout_ms=10_000)
    try:
        producer.init_transactions()
        for commit, values in plan:
            producer.begin_transaction()
            for i, value in enumerate(values):
                producer.send(topic, key=value.encode(), value=value.encode(), partition=i % partitions)
            producer.flush(timeout)
            if commit:
                producer.commit_transaction()
            else:
                producer.abort_transaction()
    finally:
        producer.close(timeout=5)


def _aiokafka(bootstrap: str, topic: str, txn_id: str, plan: Plan, partitions: int, timeout: float) -> None:
    from aiokafka import AIOKafkaProducer

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, enable_idempotence=True)
        await producer.start()
        try:
            for commit, values in plan:
                await producer.begin_transaction()
                for i, value in enumerate(values):
                    await producer.send_and_wait(
                        topic, key=value.encode(), value=value.encode(), partition=i % partitions
                    )
                if commit:
                    await producer.commit_transaction()
                else:
                    await producer.abort_transaction()
        finally:
            await producer.stop()

    asyncio.run(asyncio.wait_for(run(), timeout))


# -- readers ----------------------------------------------------------------------------------------


def read_values(
    client: str, bootstrap: str, topic: str, partitions: int, isolation: str, count: int, timeout: float = 30.0
) -> list[str]:
    """Every value of the topic as `client` reads it with `isolation` (read_committed or
    read_uncommitted): waits for `count` values and for the end offsets."""
    if client == "kafkajs":
        result, _ = run_node("kafkajs-read.mjs", bootstrap, topic, isolation, str(count), timeout=timeout)
        return list(result["values"])
    reader = {"confluent-kafka": _read_confluent, "kafka-python": _read_kafka_python, "aiokafka": _read_aiokafka}
    return reader[client](bootstrap, topic, partitions, isolation, count, timeout)


def _read_confluent(
    bootstrap: str, topic: str, partitions: int, isolation: str, count: int, timeout: float
) -> list[str]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{time.monotonic_ns()}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        values: list[str] = []
        at_end: set[int] = set()
        deadline = time.monotonic() + timeout
        while (len(values) < count or len(at_end) < partitions) and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition())
                continue
            at_end.discard(msg.partition())
            values.append(msg.value().decode())
        return values
    finally:
        consumer.close()


def _read_kafka_python(
    bootstrap: str, topic: str, partitions: int, isolation: str, count: int, timeout: float
) -> list[str]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False, request_timeout_ms=10_000
    )
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        values: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                values.extend(r.value.decode() for r in records)
            if len(values) >= count:
                ends = consumer.end_offsets(tps)  # read_committed: the last stable offsets
                if all(consumer.position(tp) >= ends[tp] for tp in tps):
                    break
        return values
    finally:
        consumer.close(autocommit=False)


def _read_aiokafka(
    bootstrap: str, topic: str, partitions: int, isolation: str, count: int, timeout: float
) -> list[str]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> list[str]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            isolation_level=isolation,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        await consumer.start()
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            values: list[str] = []
            while True:
                batches = await consumer.getmany(timeout_ms=200)
                for records in batches.values():
                    values.extend(r.value.decode() for r in records)
                if len(values) >= count:
                    ends = await consumer.end_offsets(tps)
                    if all([await consumer.position(tp) >= ends[tp] for tp in tps]):
                        return values
        finally:
            await consumer.stop()

    return asyncio.run(asyncio.wait_for(run(), timeout))


def committed_value_count(plan: Plan) -> int:
    return sum(len(values) for commit, values in plan if commit)


def every_value(plan: Plan) -> tuple[list[str], list[str]]:
    """(committed values, aborted values) of a plan."""
    committed = [v for commit, values in plan if commit for v in values]
    aborted = [v for commit, values in plan if not commit for v in values]
    return committed, aborted


__all__ = ["Plan", "run_transactions", "read_values", "committed_value_count", "every_value"]
