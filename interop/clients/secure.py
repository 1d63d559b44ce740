"""Each real client over SASL (PLAIN, SCRAM-SHA-512), with or without TLS: one round of a
transaction that commits, a consumer group that forms, reads it and commits, and a wrong password.

`secure_round(client, listener, topic, group, count)` returns what the client saw:
{"consumed": n, "committed": offset, "wrong_password": "<the client's error>"}.
`Listener` says how to reach the server: bootstrap, protocol, mechanism, user, password, CA file.

  confluent-kafka  Producer(transactional.id) / Consumer / commit(asynchronous=False)
  kafka-python     KafkaProducer(transactional_id) / KafkaConsumer / commit()
  aiokafka         AIOKafkaProducer(transactional_id) / AIOKafkaConsumer / commit()
  kafkajs          interop/js/kafkajs-secure.mjs (node)
  kcat             -P with transactional.id, then -G (balanced consumer, committing), librdkafka 2.0.2
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from interop.clients.node import run_node
from interop.clients.process import require_executable

DEADLINE_S = 30.0


@dataclass(frozen=True)
class Listener:
    bootstrap: str
    protocol: str  # SASL_PLAINTEXT or SASL_SSL
    mechanism: str
    user: str
    password: str
    ca: str | None = None

    def librdkafka(self, password: str | None = None) -> dict[str, str]:
        found = {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": self.protocol,
            "sasl.mechanism": self.mechanism,
            "sasl.username": self.user,
            "sasl.password": password or self.password,
        }
        if self.ca:
            found["ssl.ca.location"] = self.ca
        return found


def secure_round(client: str, listener: Listener, topic: str, group: str, count: int) -> dict[str, Any]:
    return _ROUNDS[client](listener, topic, group, count)


def _confluent(listener: Listener, topic: str, group: str, count: int) -> dict[str, Any]:
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    producer = Producer({**listener.librdkafka(), "transactional.id": f"{group}-txn"})
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    for i in range(count):
        producer.produce(topic, f"v{i}".encode())
    producer.commit_transaction(DEADLINE_S)
    consumer = Consumer(
        {**listener.librdkafka(), "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    consumer.subscribe([topic])
    consumed = 0
    deadline = time.monotonic() + DEADLINE_S
    while consumed < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            consumed += 1
            consumer.commit(message, asynchronous=False)
    committed = consumer.committed([TopicPartition(topic, 0)], 10)[0].offset
    consumer.close()
    errors: list[str] = []
    bad = Producer({**listener.librdkafka("wrong-password"), "error_cb": lambda e: errors.append(e.name())})
    deadline = time.monotonic() + DEADLINE_S
    while not errors and time.monotonic() < deadline:
        bad.poll(0.2)
    try:
        bad.list_topics(timeout=0.5)
    except KafkaException:
        pass
    return {"consumed": consumed, "committed": committed, "wrong_password": errors[0] if errors else None}


def _kafka_python_settings(listener: Listener, password: str | None = None) -> dict[str, Any]:
    return {
        "bootstrap_servers": listener.bootstrap,
        "security_protocol": listener.protocol,
        "sasl_mechanism": listener.mechanism,
        "sasl_plain_username": listener.user,
        "sasl_plain_password": password or listener.password,
        **({"ssl_cafile": listener.ca, "ssl_check_hostname": True} if listener.ca else {}),
    }


def _kafka_python(listener: Listener, topic: str, group: str, count: int) -> dict[str, Any]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.errors import KafkaError

    settings = _kafka_python_settings(listener)
    producer = KafkaProducer(transactional_id=f"{group}-txn", request_timeout_ms=10_000, **settings)
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(count):
        producer.send(topic, f"v{i}".encode())
    producer.commit_transaction()
    producer.close()
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False, **settings)
    consumed = 0
    deadline = time.monotonic() + DEADLINE_S
    while consumed < count and time.monotonic() < deadline:
        for records in consumer.poll(500).values():
            consumed += len(records)
        consumer.commit()
    committed = consumer.committed(TopicPartition(topic, 0))
    consumer.close()
    # kafka-python 3 retries its bootstrap until bootstrap_timeout_ms; the refusal it met on the way
    # is what its connection logs (kafka.net.connection: SaslAuthenticationFailedError: <message>).
    seen = _Captured()
    logging.getLogger("kafka.net").addHandler(seen)
    try:
        KafkaConsumer(bootstrap_timeout_ms=1000, **_kafka_python_settings(listener, "wrong")).topics()
    except KafkaError as exc:
        seen.messages.append(type(exc).__name__)
    finally:
        logging.getLogger("kafka.net").removeHandler(seen)
    wrong = next((m for m in seen.messages if "SaslAuthenticationFailedError" in m), None)
    return {"consumed": consumed, "committed": committed, "wrong_password": wrong}


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _aiokafka(listener: Listener, topic: str, group: str, count: int) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.errors import KafkaError

    def settings(password: str | None = None) -> dict[str, Any]:
        context = ssl.create_default_context(cafile=listener.ca) if listener.ca else None
        return {
            "bootstrap_servers": listener.bootstrap,
            "security_protocol": listener.protocol,
            "sasl_mechanism": listener.mechanism,
            "sasl_plain_username": listener.user,
            "sasl_plain_password": password or listener.password,
            **({"ssl_context": context} if context else {}),
        }

    async def play() -> dict[str, Any]:
        producer = AIOKafkaProducer(transactional_id=f"{group}-txn", **settings())
        await producer.start()
        try:
            async with producer.transaction():
                for i in range(count):
                    await producer.send(topic, f"v{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False, **settings()
        )
        await consumer.start()
        consumed = 0
        try:
            deadline = time.monotonic() + DEADLINE_S
            while consumed < count and time.monotonic() < deadline:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    consumed += len(records)
                await consumer.commit()
            committed = await consumer.committed(TopicPartition(topic, 0))
        finally:
            await consumer.stop()
        # aiokafka logs the broker's refusal ("[Error 58] SaslAuthenticationFailed: <message>") and
        # then raises KafkaConnectionError from start().
        seen = _Captured()
        logging.getLogger("aiokafka").addHandler(seen)
        bad = AIOKafkaProducer(request_timeout_ms=5000, **settings("wrong"))
        try:
            await bad.start()
        except KafkaError as exc:
            seen.messages.append(type(exc).__name__)
        finally:
            await bad.stop()
            logging.getLogger("aiokafka").removeHandler(seen)
        wrong = next((m for m in seen.messages if "SaslAuthenticationFailed" in m), None)
        return {"consumed": consumed, "committed": committed, "wrong_password": wrong}

    return asyncio.run(play())


def _kafkajs(listener: Listener, topic: str, group: str, count: int) -> dict[str, Any]:
    result, _run = run_node(
        "kafkajs-secure.mjs",
        listener.bootstrap,
        topic,
        group,
        listener.mechanism,
        listener.user,
        listener.password,
        listener.ca or "-",
        str(count),
        timeout=DEADLINE_S + 15,
    )
    return {"consumed": result["consumed"], "committed": result["committed"], "wrong_password": result["wrongPassword"]}


def _kcat_args(listener: Listener, password: str | None = None) -> list[str]:
    args = []
    for name, value in listener.librdkafka(password).items():
        args += ["-b", value] if name == "bootstrap.servers" else ["-X", f"{name}={value}"]
    return args


def _kcat(listener: Listener, topic: str, group: str, count: int) -> dict[str, Any]:
    kcat = require_executable("kcat")
    lines = "".join(f"v{i}\n" for i in range(count))
    produced = subprocess.run(
        [kcat, *_kcat_args(listener), "-P", "-t", topic, "-X", f"transactional.id={group}-txn"],
        input=lines,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert produced.returncode == 0, f"kcat -P failed: {produced.stderr}"
    consumed = subprocess.run(  # a balanced consumer (JoinGroup/SyncGroup), committing as it goes
        [
            kcat,
            *_kcat_args(listener),
            "-G",
            group,
            "-o",
            "beginning",
            "-c",
            str(count),
            "-X",
            "auto.commit.interval.ms=100",
            topic,
        ],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert consumed.returncode == 0, f"kcat -G failed: {consumed.stderr}"
    bad = subprocess.run(
        [kcat, *_kcat_args(listener, "wrong"), "-L", "-m", "1"], capture_output=True, text=True, timeout=DEADLINE_S
    )
    wrong = "Authentication failed" if bad.returncode != 0 and "Authentication failed" in bad.stderr else bad.stderr
    return {"consumed": len(consumed.stdout.split()), "committed": None, "wrong_password": wrong}


_ROUNDS = {
    "confluent-kafka": _confluent,
    "kafka-python": _kafka_python,
    "aiokafka": _aiokafka,
    "kafkajs": _kafkajs,
    "kcat": _kcat,
}
