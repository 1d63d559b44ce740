"""Transactions per second and last-stable-offset lag: kgc next to librdkafka's mock cluster.

    .venv/bin/python bench/txn_bench.py [--seconds 3] [--sizes 1,100] [--flush-mode group_commit]
                                        [--baseline DIR]  # an earlier checkout too, in the same run

For each server (a `kgc serve` process; librdkafka's mock cluster with 3 brokers, in its own process:
bench/servers.py) and each size: one confluent-kafka
transactional producer runs begin -> produce SIZE messages -> commit_transaction for `--seconds`:
transactions/s, messages/s, commit latency p50/p99. Meanwhile a read_committed consumer (its own
thread) notes when it receives each transaction's last message: LSO lag = that moment minus the
moment commit_transaction returned (kgc answers EndTxn once PrepareCommit is durable and writes
the markers after, as Kafka does, so the lag is the marker round). Figures only: nothing here
asserts on time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import start_kgc, start_mock  # noqa: E402

TOPIC, PARTITIONS = "txn-bench", 3


class Reader(threading.Thread):
    """A read_committed consumer noting when each transaction's last message arrives."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import OFFSET_END, Consumer, TopicPartition

        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"lso-{time.monotonic_ns()}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 10,
            }
        )
        self.consumer.assign([TopicPartition(TOPIC, p, OFFSET_END) for p in range(PARTITIONS)])
        self.seen: dict[int, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            msg = self.consumer.poll(0.05)
            if msg is not None and not msg.error() and msg.value().endswith(b"!last"):
                self.seen[int(msg.key())] = time.perf_counter()
        self.consumer.close()


def run_size(bootstrap: str, size: int, seconds: float) -> dict[str, Any]:
    from confluent_kafka import Producer

    reader = Reader(bootstrap)
    reader.start()
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"bench-{size}-{time.monotonic_ns()}", "linger.ms": 0}
    )
    producer.init_transactions(30)
    committed: dict[int, float] = {}
    latencies = []
    start = time.perf_counter()
    txn = 0
    while time.perf_counter() - start < seconds:
        producer.begin_transaction()
        for i in range(size):
            last = i == size - 1
            producer.produce(
                TOPIC, key=b"%d" % txn, value=b"x" * 100 + (b"!last" if last else b""), partition=txn % PARTITIONS
            )
        began = time.perf_counter()
        producer.commit_transaction(30)
        committed[txn] = time.perf_counter()
        latencies.append(committed[txn] - began)
        txn += 1
    elapsed = time.perf_counter() - start
    deadline = time.perf_counter() + 10
    while len(reader.seen) < txn and time.perf_counter() < deadline:
        time.sleep(0.01)
    reader.stop.set()
    reader.join(5)
    lags = sorted(reader.seen[t] - committed[t] for t in committed if t in reader.seen)
    return {
        "txns": txn,
        "txn_per_s": txn / elapsed,
        "msg_per_s": txn * size / elapsed,
        "commit_p50_ms": 1000 * statistics.median(latencies),
        "commit_p99_ms": 1000 * sorted(latencies)[int(0.99 * (len(latencies) - 1))],
        "lso_lag_p50_ms": 1000 * statistics.median(lags) if lags else float("nan"),
        "lso_lag_p99_ms": 1000 * lags[int(0.99 * (len(lags) - 1))] if lags else float("nan"),
        "seen": len(lags),
    }


def report(server: str, size: int, r: dict[str, Any]) -> None:
    print(
        f"{server:<24} {size:>4} msg/txn  {r['txn_per_s']:8.1f} txn/s {r['msg_per_s']:9.0f} msg/s  "
        f"commit p50 {r['commit_p50_ms']:6.2f} ms p99 {r['commit_p99_ms']:6.2f} ms  "
        f"LSO lag p50 {r['lso_lag_p50_ms']:6.2f} ms p99 {r['lso_lag_p99_ms']:6.2f} ms  "
        f"({r['seen']}/{r['txns']} seen)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--sizes", default="1,100")
    parser.add_argument("--flush-mode", default="group_commit", choices=["group_commit", "every_append", "interval"])
    parser.add_argument("--baseline", help="also run the kgc of this checkout (before/after in one run)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for baseline in [args.baseline, None] if args.baseline else [None]:
        with tempfile.TemporaryDirectory() as tmp:
            kgc = start_kgc(
                os.path.join(tmp, "data"),
                settings={"log.flush.mode": args.flush_mode},
                topics={TOPIC: PARTITIONS},
                baseline=baseline,
            )
            try:
                for size in sizes:
                    report(f"{kgc.name} ({args.flush_mode})", size, run_size(kgc.bootstrap, size, args.seconds))
            finally:
                kgc.stop()
    mock = start_mock({TOPIC: PARTITIONS}, brokers=3)
    try:
        for size in sizes:
            report("librdkafka mock (3)", size, run_size(mock.bootstrap, size, args.seconds))
    finally:
        mock.stop()


if __name__ == "__main__":
    main()
