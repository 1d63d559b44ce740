"""Data-path figures against a real `kgc serve` process, with confluent-kafka (librdkafka).

    .venv/bin/python bench/data_path_bench.py [--messages 300000] [--latency-samples 2000]
                                              [--set log.flush.mode=interval ...]

Prints, for 100-byte and 1 KiB values: produce messages/s and MiB/s with acks=all (idempotent,
no compression, linger 5 ms), consume messages/s with an assigned Consumer reading the same
data back, and the end-to-end latency (produce() call to the message seen by a long-polling
consumer) p50/p99, one message in flight at a time. The server's CPU seconds per phase (from
/proc) and the time the client spent inside produce() calls show where the time goes.
Asserts nothing: it reports.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time

from confluent_kafka import Consumer, Producer, TopicPartition

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import start_kgc  # noqa: E402

TIMEOUT_SECONDS = 120


def produce(bootstrap: str, topic: str, count: int, size: int) -> tuple[float, float]:
    """(seconds until every message was acknowledged, seconds spent in the produce() loop)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    value = b"x" * size
    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=value, key=struct.pack(">q", i))
                break
            except BufferError:
                producer.poll(0.01)
    loop = time.perf_counter() - start
    left = producer.flush(TIMEOUT_SECONDS)
    elapsed = time.perf_counter() - start
    if left:
        raise SystemExit(f"{left} messages were not delivered")
    return elapsed, loop


def consume(bootstrap: str, topic: str, count: int) -> float:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False, "fetch.wait.max.ms": 100}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen, start = 0, time.perf_counter()
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while seen < count and time.monotonic() < deadline:
        for message in consumer.consume(num_messages=10_000, timeout=1.0):
            if message.error() is None:
                seen += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    if seen < count:
        raise SystemExit(f"consumed {seen} of {count}")
    return elapsed


def latency(bootstrap: str, topic: str, samples: int) -> list[float]:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-latency",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 500,
            "fetch.min.bytes": 1,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    consumer.poll(0.5)  # connect and start the long poll before the first sample
    results = []
    for i in range(samples + 50):
        sent = time.perf_counter()
        producer.produce(topic, value=struct.pack(">d", sent))
        producer.poll(0)
        message = consumer.poll(10)
        if message is None or message.error() is not None:
            raise SystemExit(f"latency sample {i} not received")
        if i >= 50:  # warm-up excluded
            results.append((time.perf_counter() - sent) * 1000)
    producer.flush(10)
    consumer.close()
    return results


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=300_000)
    parser.add_argument("--latency-samples", type=int, default=2000)
    parser.add_argument("--set", action="append", default=[], help="server setting NAME=VALUE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgc-bench-") as data_dir:
        settings = dict(setting.split("=", 1) for setting in args.set)
        server = start_kgc(data_dir, settings=settings, topics={"small": 1, "large": 1, "latency": 1})
        print(f"server settings: {args.set or 'defaults (log.flush.mode=group_commit)'}")
        bootstrap = server.bootstrap
        try:
            for topic, size in (("small", 100), ("large", 1024)):
                count = args.messages if size == 100 else args.messages // 4
                cpu = server.cpu_seconds()
                seconds, loop = produce(bootstrap, topic, count, size)
                cpu = server.cpu_seconds() - cpu
                mib = count * size / (1 << 20)
                print(
                    f"produce {size:>5} B values acks=all: {count / seconds:>10,.0f} msg/s "
                    f"{mib / seconds:>7.1f} MiB/s ({count} msgs in {seconds:.2f}s, server CPU {cpu:.2f}s, "
                    f"client produce() loop {loop:.2f}s)"
                )
                cpu = server.cpu_seconds()
                seconds = consume(bootstrap, topic, count)
                cpu = server.cpu_seconds() - cpu
                print(
                    f"consume {size:>5} B values:          {count / seconds:>10,.0f} msg/s "
                    f"{mib / seconds:>7.1f} MiB/s ({count} msgs in {seconds:.2f}s, server CPU {cpu:.2f}s)"
                )
            samples = latency(bootstrap, "latency", args.latency_samples)
            print(
                f"end-to-end latency (acks=all, long-polling consumer, {len(samples)} samples): "
                f"p50 {percentile(samples, 0.5):.2f} ms, p99 {percentile(samples, 0.99):.2f} ms, "
                f"mean {statistics.mean(samples):.2f} ms"
            )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
