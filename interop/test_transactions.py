"""Transactions with real clients: exactly-once pipelines, commit/abort, zombies, hung transactions.

- confluent-kafka consume -> transform -> produce with send_offsets_to_transaction: the output,
  read with read_committed, holds every input message exactly once, and the group's committed
  offsets are where the pipeline stopped.
- kafka-python, aiokafka and kafkajs transactional producers commit and abort; each client's own
  read_committed consumer reads exactly the committed values, agrees with confluent-kafka's, and
  a read_uncommitted reader sees the aborted ones too.
- A zombie is fenced: a second producer with the same transactional.id makes the first one's
  commit fail with PRODUCER_FENCED (librdkafka: the fatal _FENCED error).
- A hung transaction is aborted by its timeout: the consumers' last stable offset moves on.
Volumes are small; every wait is on a condition under a deadline.
"""

from __future__ import annotations

import time

import pytest

from interop.clients.transactions import every_value, read_values, run_transactions
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0


def test_confluent_consume_transform_produce_is_exactly_once(kafka_coordinator):
    from confluent_kafka import Consumer, Producer, TopicPartition

    bootstrap = kafka_coordinator.bootstrap
    kafka_coordinator.create_topic("eos-in", 3)
    kafka_coordinator.create_topic("eos-out", 3)
    source = Producer({"bootstrap.servers": bootstrap})
    for i in range(60):
        source.produce("eos-in", key=b"%d" % i, value=b"v%d" % i, partition=i % 3)
    source.flush(DEADLINE)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "eos",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "eos-pipeline"})
    producer.init_transactions(DEADLINE)
    consumer.subscribe(["eos-in"])
    moved, aborted_once = 0, False
    deadline = time.monotonic() + DEADLINE
    try:
        while moved < 60:
            assert time.monotonic() < deadline, f"only {moved} of 60 messages went through"
            batch = [m for m in consumer.consume(10, 0.5) if not m.error()]
            if not batch:
                continue
            producer.begin_transaction()
            for m in batch:
                producer.produce("eos-out", key=m.key(), value=b"T-" + m.value(), partition=m.partition())
            producer.send_offsets_to_transaction(
                consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), DEADLINE
            )
            if not aborted_once:  # the first batch is aborted once: re-read and re-sent, never doubled
                producer.flush(DEADLINE)
                producer.abort_transaction(DEADLINE)
                aborted_once = True
                for tp in consumer.committed(consumer.assignment(), DEADLINE):
                    consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))
                continue
            producer.commit_transaction(DEADLINE)
            moved += len(batch)
    finally:
        consumer.close()
    out = read_values("confluent-kafka", bootstrap, "eos-out", 3, "read_committed", 60)
    assert sorted(out) == sorted(f"T-v{i}" for i in range(60))  # each exactly once
    everything = read_values("confluent-kafka", bootstrap, "eos-out", 3, "read_uncommitted", 61)
    assert len(everything) > 60  # the aborted copies are in the log, only hidden
    check = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos", "enable.auto.commit": False})
    try:
        committed = check.committed([TopicPartition("eos-in", p) for p in range(3)], DEADLINE)
    finally:
        check.close()
    assert [tp.offset for tp in committed] == [20, 20, 20]


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka", "kafkajs"])
def test_transactional_producers_commit_and_abort(kafka_coordinator, client):
    bootstrap = kafka_coordinator.bootstrap
    topic = f"txn-{client}"
    kafka_coordinator.create_topic(topic, 2)
    plan = [
        (True, [f"{client}-a{i}" for i in range(4)]),
        (False, [f"{client}-x{i}" for i in range(3)]),
        (True, [f"{client}-b{i}" for i in range(4)]),
    ]
    run_transactions(client, bootstrap, topic, f"txn-id-{client}", plan, partitions=2)
    committed, aborted = every_value(plan)
    own = read_values(client, bootstrap, topic, 2, "read_committed", len(committed))
    assert sorted(own) == sorted(committed)
    confluent = read_values("confluent-kafka", bootstrap, topic, 2, "read_committed", len(committed))
    assert sorted(confluent) == sorted(own)  # the readers agree
    everything = read_values("confluent-kafka", bootstrap, topic, 2, "read_uncommitted", len(committed) + len(aborted))
    assert sorted(everything) == sorted(committed + aborted)


def test_a_zombie_producer_is_fenced(kafka_coordinator):
    from confluent_kafka import KafkaError, KafkaException, Producer

    bootstrap = kafka_coordinator.bootstrap
    kafka_coordinator.create_topic("zombie", 1)
    first = Producer({"bootstrap.servers": bootstrap, "transactional.id": "zombie-id"})
    first.init_transactions(DEADLINE)
    first.begin_transaction()
    first.produce("zombie", value=b"from-the-zombie")
    first.flush(DEADLINE)
    second = Producer({"bootstrap.servers": bootstrap, "transactional.id": "zombie-id"})
    second.init_transactions(DEADLINE)  # fences the first (its open transaction is aborted)
    with pytest.raises(KafkaException) as failed:
        first.commit_transaction(DEADLINE)
    error = failed.value.args[0]
    assert error.fatal() and error.code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    ), error
    second.begin_transaction()
    second.produce("zombie", value=b"from-the-new-one")
    second.commit_transaction(DEADLINE)
    assert read_values("confluent-kafka", bootstrap, "zombie", 1, "read_committed", 1) == ["from-the-new-one"]


def test_kafka_python_zombie_gets_the_epoch_error(kafka_coordinator):
    from kafka import KafkaProducer
    from kafka.errors import InvalidProducerEpochError, ProducerFencedError

    bootstrap = kafka_coordinator.bootstrap
    kafka_coordinator.create_topic("zombie-kp", 1)
    first = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="zombie-kp")
    second = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="zombie-kp")
    try:
        first.init_transactions()
        first.begin_transaction()
        first.send("zombie-kp", b"old").get(DEADLINE)
        second.init_transactions()
        with pytest.raises((ProducerFencedError, InvalidProducerEpochError)):
            first.commit_transaction()
    finally:
        first.close(timeout=2)
        second.close(timeout=2)


@pytest.mark.kafka_settings({"transaction.abort.timed.out.transaction.cleanup.interval.ms": 200})
def test_a_hung_transaction_is_aborted_by_its_timeout(kafka_coordinator):
    from confluent_kafka import Producer

    bootstrap = kafka_coordinator.bootstrap
    kafka_coordinator.create_topic("hung", 1)
    hung = Producer({"bootstrap.servers": bootstrap, "transactional.id": "hung-id", "transaction.timeout.ms": 1500})
    hung.init_transactions(DEADLINE)
    hung.begin_transaction()
    hung.produce("hung", value=b"never-committed")
    hung.flush(DEADLINE)  # ...and the producer goes silent with its transaction open
    plain = Producer({"bootstrap.servers": bootstrap})
    plain.produce("hung", value=b"after")
    plain.flush(DEADLINE)
    # A read_committed reader is held at the hung transaction until the coordinator aborts it.
    seen = wait_until(
        lambda: read_values("confluent-kafka", bootstrap, "hung", 1, "read_committed", 1, timeout=2.0),
        DEADLINE,
        message="the LSO to move past the hung txn",
    )
    assert seen == ["after"]
    assert read_values("confluent-kafka", bootstrap, "hung", 1, "read_uncommitted", 2) == ["never-committed", "after"]
