"""Transactions per second and last-stable-offset lag: kgc next to librdkafka's mock cluster.

    .venv/bin/python bench/txn_bench.py [--seconds 3] [--sizes 1,100] [--flush-mode group_commit]
                                        [--baseline DIR]  # an earlier checkout too, in the same run
                                        [--producers 1] [--rounds 1] [--no-mock] [--set NAME=VALUE]...

For each server (a `kgc serve` process; librdkafka's mock cluster with 3 brokers, in its own process:
bench/servers.py) and each size: one confluent-kafka
transactional producer runs begin -> produce SIZE messages -> commit_transaction for `--seconds`:
transactions/s, messages/s, commit latency p50/p99 and the server's CPU per transaction; with
`--producers N`, N such producers at once (each its own thread and transactional id), their sum.
`--rounds R` repeats everything R times (the machine is shared: compare within a round). First
it prints the load average and the data dir's fdatasync latency, what a durable reply costs.
Meanwhile a read_committed consumer (its own
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

from commit_bench import fdatasync_latency  # noqa: E402
from servers import Running, start_kgc, start_mock  # noqa: E402

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
        self.seen: dict[bytes, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            msg = self.consumer.poll(0.05)
            if msg is not None and not msg.error() and msg.value().endswith(b"!last"):
                self.seen[msg.key()] = time.perf_counter()
        self.consumer.close()


def produce_loop(bootstrap: str, size: int, seconds: float, name: str, out: dict[str, Any]) -> None:
    """One transactional producer: begin -> SIZE messages -> commit, for `seconds`."""
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"bench-{name}-{time.monotonic_ns()}", "linger.ms": 0}
    )
    producer.init_transactions(30)
    committed: dict[bytes, float] = {}
    latencies = []
    start = time.perf_counter()
    txn = 0
    while time.perf_counter() - start < seconds:
        key = b"%s-%d" % (name.encode(), txn)
        producer.begin_transaction()
        for i in range(size):
            last = i == size - 1
            producer.produce(TOPIC, key=key, value=b"x" * 100 + (b"!last" if last else b""), partition=txn % PARTITIONS)
        began = time.perf_counter()
        producer.commit_transaction(30)
        committed[key] = time.perf_counter()
        latencies.append(committed[key] - began)
        txn += 1
    out.update(committed=committed, latencies=latencies, elapsed=time.perf_counter() - start)


def run_size(server: Running, size: int, seconds: float, producers: int = 1) -> dict[str, Any]:
    reader = Reader(server.bootstrap)
    reader.start()
    cpu_before = server.cpu_seconds()
    outs: list[dict[str, Any]] = [{} for _ in range(producers)]
    threads = [
        threading.Thread(target=produce_loop, args=(server.bootstrap, size, seconds, str(n), outs[n]))
        for n in range(producers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cpu = server.cpu_seconds() - cpu_before
    committed = {key: at for out in outs for key, at in out["committed"].items()}
    latencies = sorted(lat for out in outs for lat in out["latencies"])
    elapsed = max(out["elapsed"] for out in outs)
    txn = len(committed)
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
        "cpu_ms_per_txn": 1000 * cpu / max(txn, 1),
        "commit_p50_ms": 1000 * statistics.median(latencies),
        "commit_p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "lso_lag_p50_ms": 1000 * statistics.median(lags) if lags else float("nan"),
        "lso_lag_p99_ms": 1000 * lags[int(0.99 * (len(lags) - 1))] if lags else float("nan"),
        "seen": len(lags),
    }


RESULTS: dict[tuple[str, int], list[dict[str, Any]]] = {}  # (server, size) -> one result per round


def report(server: str, size: int, r: dict[str, Any], *, keep: bool = True) -> None:
    if keep:
        RESULTS.setdefault((server, size), []).append(r)
    print(
        f"{server:<24} {size:>4} msg/txn  {r['txn_per_s']:8.1f} txn/s {r['msg_per_s']:9.0f} msg/s  "
        f"cpu {r['cpu_ms_per_txn']:5.2f} ms/txn  "
        f"commit p50 {r['commit_p50_ms']:6.2f} ms p99 {r['commit_p99_ms']:6.2f} ms  "
        f"LSO lag p50 {r['lso_lag_p50_ms']:6.2f} ms p99 {r['lso_lag_p99_ms']:6.2f} ms  "
        f"({r['seen']:.0f}/{r['txns']:.0f} seen)",
        flush=True,
    )


def one_round(args: argparse.Namespace, sizes: list[int]) -> None:
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for baseline in [args.baseline, None] if args.baseline else [None]:
        with tempfile.TemporaryDirectory() as tmp:
            if baseline is None:
                median, p99 = fdatasync_latency(tmp)
                print(f"disk: fdatasync after a 200-byte append: median {median * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms")
            kgc = start_kgc(
                os.path.join(tmp, "data"),
                settings={"log.flush.mode": args.flush_mode, **dict(kv.split("=", 1) for kv in args.set)},
                topics={TOPIC: PARTITIONS},
                baseline=baseline,
            )
            try:
                for size in sizes:
                    name = f"{kgc.name} ({args.flush_mode})"
                    report(name, size, run_size(kgc, size, args.seconds, args.producers))
            finally:
                kgc.stop()
    if args.no_mock:
        return
    mock = start_mock({TOPIC: PARTITIONS}, brokers=3)
    try:
        for size in sizes:
            report("librdkafka mock (3)", size, run_size(mock, size, args.seconds, args.producers))
    finally:
        mock.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--sizes", default="1,100")
    parser.add_argument("--flush-mode", default="group_commit", choices=["group_commit", "every_append", "interval"])
    parser.add_argument("--baseline", help="also run the kgc of this checkout (before/after in one run)")
    parser.add_argument("--producers", type=int, default=1, help="transactional producers at once")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-mock", action="store_true", help="kgc only")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a kgc setting")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in range(args.rounds):
        if args.rounds > 1:
            print(f"-- round {n + 1}/{args.rounds}", flush=True)
        one_round(args, sizes)
    if args.rounds > 1:  # on a shared machine one round says little: the median of each column
        print(f"-- median of {args.rounds} rounds", flush=True)
        for (server, size), runs in list(RESULTS.items()):
            medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
            print("  ", end="")
            report(server, size, medians, keep=False)


if __name__ == "__main__":
    main()
