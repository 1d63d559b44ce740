"""Transactions per second and last-stable-offset lag: kgc next to librdkafka's mock cluster.

    .venv/bin/python bench/txn_bench.py [--seconds 3] [--sizes 1,100] [--flush-mode group_commit]

For each server (a `kgc serve` process; librdkafka's mock cluster, created through ctypes from the
librdkafka inside the confluent-kafka wheel, 3 brokers) and each size: one confluent-kafka
transactional producer runs begin -> produce SIZE messages -> commit_transaction for `--seconds`:
transactions/s, messages/s, commit latency p50/p99. Meanwhile a read_committed consumer (its own
thread) notes when it receives each transaction's last message: LSO lag = that moment minus the
moment commit_transaction returned (kgc answers EndTxn once PrepareCommit is durable and writes
the markers after, as Kafka does, so the lag is the marker round). Figures only: nothing here
asserts on time.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

TOPIC, PARTITIONS = "txn-bench", 3


def start_kgc(data_dir: str, flush_mode: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coordinator",
            "serve",
            "--port",
            "0",
            "--data-dir",
            data_dir,
            "--log-level",
            "WARNING",
            "--create-topic",
            f"{TOPIC}:{PARTITIONS}",
            "--set",
            f"log.flush.mode={flush_mode}",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert proc.stdout is not None
    match = re.search(r"bootstrap=(\S+)", proc.stdout.readline())
    if not match:
        proc.kill()
        raise SystemExit("kgc did not start")
    return proc, match.group(1)


class Mock:
    """librdkafka's mock cluster in this process (rd_kafka_mock_cluster_new through ctypes)."""

    def __init__(self, brokers: int = 3) -> None:
        import confluent_kafka

        found = glob.glob(os.path.join(os.path.dirname(confluent_kafka.__file__) + ".libs", "librdkafka*.so*"))
        if not found:
            raise SystemExit("librdkafka not found next to the confluent_kafka package")
        lib = self.lib = ctypes.CDLL(found[0])
        lib.rd_kafka_conf_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
        lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
        lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        err = ctypes.create_string_buffer(256)
        self.handle = lib.rd_kafka_new(0, lib.rd_kafka_conf_new(), err, 256)  # the mock's owner
        self.cluster = lib.rd_kafka_mock_cluster_new(self.handle, brokers)
        lib.rd_kafka_mock_topic_create(self.cluster, TOPIC.encode(), PARTITIONS, 1)
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self.cluster).decode()


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
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        proc, bootstrap = start_kgc(os.path.join(tmp, "data"), args.flush_mode)
        try:
            for size in sizes:
                report(f"kgc ({args.flush_mode})", size, run_size(bootstrap, size, args.seconds))
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
    mock = Mock()
    for size in sizes:
        report("librdkafka mock (3)", size, run_size(mock.bootstrap, size, args.seconds))


if __name__ == "__main__":
    main()
