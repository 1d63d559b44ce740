"""Produce keyed messages with each real client, once per compression codec.

Every producer sends, for each codec, COUNT messages `key-<i % 37>` -> `<prefix>-<codec>-<i>`
(`expected_messages` builds the same set), with acks=all. Codecs per client, as far as each
supports them here:

  confluent-kafka  none gzip snappy lz4 zstd   (librdkafka 2.16; Produce v10)
  kafka-python     none gzip snappy lz4 zstd   (idempotent by default: InitProducerId v4, Produce v9)
  aiokafka         none gzip snappy lz4 zstd   (Produce v7)
  kafkajs          none gzip                   (snappy/lz4/zstd need codec packages not installed)
  @platformatic    none gzip snappy lz4        (zstd needs node >= 22.15's zlib; node here is 20)
  kcat             none gzip snappy lz4 zstd   (librdkafka 2.0.2; Produce v7)
"""

from __future__ import annotations

import asyncio
import subprocess

from interop.clients.node import run_node
from interop.clients.process import require_executable

KEYS = 37

CODECS = {
    "confluent-kafka": ("none", "gzip", "snappy", "lz4", "zstd"),
    "kafka-python": ("none", "gzip", "snappy", "lz4", "zstd"),
    "aiokafka": ("none", "gzip", "snappy", "lz4", "zstd"),
    "kafkajs": ("none", "gzip"),
    "platformatic": ("none", "gzip", "snappy", "lz4"),
    "kcat": ("none", "gzip", "snappy", "lz4", "zstd"),
}


def expected_messages(prefix: str, count: int, codecs: tuple[str, ...]) -> dict[str, str]:
    """value -> key of every message `produce` sends."""
    return {f"{prefix}-{codec}-{i}": f"key-{i % KEYS}" for codec in codecs for i in range(count)}


def _rows(prefix: str, count: int, codec: str) -> list[tuple[str, str]]:
    return [(f"key-{i % KEYS}", f"{prefix}-{codec}-{i}") for i in range(count)]


def produce(client: str, bootstrap: str, topic: str, prefix: str, count: int, timeout: float = 30.0) -> int:
    """Produce with `client`, every codec it supports; returns how many messages were acked."""
    codecs = CODECS[client]
    if client in ("kafkajs", "platformatic"):
        script = "kafkajs-e2e.mjs" if client == "kafkajs" else "platformatic-e2e.mjs"
        result, run = run_node(script, bootstrap, topic, prefix, str(count), *codecs, timeout=timeout)
        assert result["produced"] == count * len(codecs), run.describe()
        return result["produced"]
    return sum(_PRODUCERS[client](bootstrap, topic, _rows(prefix, count, codec), codec, timeout) for codec in codecs)


def _confluent(bootstrap: str, topic: str, rows: list[tuple[str, str]], codec: str, timeout: float) -> int:
    from confluent_kafka import Producer

    acked, failed = [], []

    def delivered(err, msg):
        (failed if err is not None else acked).append(err or msg.offset())

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "kgc-interop-confluent-producer",
            "compression.type": codec,
            "acks": "all",
            "linger.ms": 5,
        }
    )
    for key, value in rows:
        producer.produce(topic, key=key, value=value, on_delivery=delivered)
    left = producer.flush(timeout)
    assert left == 0 and not failed, f"confluent-kafka {codec}: {left} unsent, errors {failed[:3]}"
    return len(acked)


def _kafka_python(bootstrap: str, topic: str, rows: list[tuple[str, str]], codec: str, timeout: float) -> int:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        client_id="kgc-interop-kafka-python-producer",
        compression_type=None if codec == "none" else codec,
        acks="all",
        linger_ms=5,
    )
    try:
        futures = [producer.send(topic, key=key.encode(), value=value.encode()) for key, value in rows]
        producer.flush(timeout)
        for future in futures:
            future.get(timeout)
    finally:
        producer.close(timeout)
    return len(futures)


def _aiokafka(bootstrap: str, topic: str, rows: list[tuple[str, str]], codec: str, timeout: float) -> int:
    async def run() -> int:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            client_id="kgc-interop-aiokafka-producer",
            compression_type=None if codec == "none" else codec,
            acks="all",
            linger_ms=5,
        )
        await producer.start()
        try:
            futures = [await producer.send(topic, key=key.encode(), value=value.encode()) for key, value in rows]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
        return len(futures)

    return asyncio.run(asyncio.wait_for(run(), timeout))


def _kcat(bootstrap: str, topic: str, rows: list[tuple[str, str]], codec: str, timeout: float) -> int:
    kcat = require_executable("kcat")
    lines = "".join(f"{key}\t{value}\n" for key, value in rows)
    argv = [
        kcat,
        "-b",
        bootstrap,
        "-P",
        "-t",
        topic,
        "-K",
        "\t",
        "-z",
        codec,
        "-X",
        "acks=all",
        "-X",
        "client.id=kgc-interop-kcat-producer",
    ]
    try:
        done = subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"kcat -P did not finish within {timeout:g}s: {exc.stderr!r}") from None
    # kcat -P exits non-zero when any message failed delivery.
    assert done.returncode == 0, f"kcat -P -z {codec} exit {done.returncode}\n{done.stderr}"
    return len(rows)


_PRODUCERS = {"confluent-kafka": _confluent, "kafka-python": _kafka_python, "aiokafka": _aiokafka, "kcat": _kcat}
