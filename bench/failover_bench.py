"""Coordinator failover per client: time from "the group's coordinator broker goes down" to "the
group works again", on kgc --brokers 3 and on librdkafka's mock cluster, in the same run.

    .venv/bin/python bench/failover_bench.py [--trials 3] [--clients confluent-kafka,kafkajs]

Per trial: a fresh 3-broker cluster, a 6-partition topic (replication factor 3), a group of three
consumers of one client (each commits after every batch: interop/clients/group_members.py), one
message per partition consumed and committed; then the coordinator's broker goes down, one
marker message is produced to every partition, and the clock stops once every partition is
owned by exactly one member (the members' own callbacks) AND every marker is committed at the
group's coordinator (OffsetFetch from a confluent-kafka consumer of the group that never
subscribes: the same probe on both clusters).
Ownership alone would say little: no client gives up its partitions when only the coordinator
moves, so the commits are what show the group found its new coordinator.

kgc: `kgc serve --brokers 3 --control-port 0` in its own process; down = POST
/v1/brokers/{n}/down, and kgc moves the coordinator and the partition leaders itself, as Kafka's
controller does. Mock: rd_kafka_mock_cluster_new(3) through ctypes in the librdkafka that the
confluent-kafka wheel bundles; rd_kafka_mock_broker_set_down moves nothing by itself, so the
bench does what a controller would, at once: rd_kafka_mock_coordinator_set for the group and
rd_kafka_mock_partition_set_leader for each partition the downed broker led. A client the mock
cannot serve is reported with its error. Prints min/median/max seconds per client and cluster;
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from interop.clients.cluster import KafkajsClusterMember  # noqa: E402
from interop.clients.group_members import group_owns_all, stop_all  # noqa: E402
from interop.clients.python_members import AiokafkaMember, ConfluentKafkaMember, KafkaPythonMember  # noqa: E402
from tests.support.waiting import wait_until  # noqa: E402

TOPIC, GROUP, PARTITIONS = "failover", "failover-group", 6
MEMBERS = {
    "confluent-kafka": ConfluentKafkaMember,
    "kafka-python": KafkaPythonMember,
    "aiokafka": AiokafkaMember,
    "kafkajs": KafkajsClusterMember,
}


class Kgc:
    name = "kgc"

    def __init__(self) -> None:
        self.data = tempfile.TemporaryDirectory()
        argv = [
            sys.executable,
            "-m",
            "coordinator",
            "serve",
            "--brokers",
            "3",
            "--port",
            "0",
            "--control-port",
            "0",
            "--data-dir",
            self.data.name,
            "--log-level",
            "WARNING",
            "--create-topic",
            f"{TOPIC}:{PARTITIONS}",
            "--set",
            "default.replication.factor=3",
            "--set",
            "group.initial.rebalance.delay.ms=300",
        ]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        self.bootstrap = self.url = ""
        while not (self.bootstrap and self.url):
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("kgc serve exited before listening")
            if match := re.search(r"bootstrap=(\S+)", line):
                self.bootstrap = match.group(1)
            if match := re.search(r"control=(\S+)", line):
                self.url = match.group(1)
        self.http = httpx.Client(base_url=self.url)

    def coordinator(self) -> int:
        return int(self.http.get(f"/v1/groups/{GROUP}").raise_for_status().json()["coordinator"])

    def down(self, node: int) -> None:
        self.http.post(f"/v1/brokers/{node}/down").raise_for_status()

    def close(self) -> None:
        self.http.close()
        self.proc.terminate()
        self.proc.wait(10)
        self.data.cleanup()


def _librdkafka() -> ctypes.CDLL:
    import confluent_kafka

    libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    lib = ctypes.CDLL(glob.glob(os.path.join(libs, "librdkafka*.so*"))[0])
    p, i, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    for name, restype, argtypes in (
        ("rd_kafka_conf_new", p, []),
        ("rd_kafka_new", p, [i, p, s, ctypes.c_size_t]),
        ("rd_kafka_destroy", None, [p]),
        ("rd_kafka_mock_cluster_new", p, [p, i]),
        ("rd_kafka_mock_cluster_destroy", None, [p]),
        ("rd_kafka_mock_cluster_bootstraps", s, [p]),
        ("rd_kafka_mock_topic_create", i, [p, s, i, i]),
        ("rd_kafka_mock_coordinator_set", i, [p, s, s, i]),
        ("rd_kafka_mock_group_initial_rebalance_delay_ms", None, [p, i]),
        ("rd_kafka_mock_broker_set_down", i, [p, i]),
        ("rd_kafka_mock_partition_set_leader", i, [p, s, i, i]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


class Mock:
    """librdkafka's mock cluster; brokers are 1..3, the group's coordinator is put on broker 1."""

    name = "librdkafka mock"

    def __init__(self) -> None:
        self.lib = lib = _librdkafka()
        errstr = ctypes.create_string_buffer(512)
        self.rk = lib.rd_kafka_new(0, lib.rd_kafka_conf_new(), errstr, 512)  # the handle the mock hangs on
        self.cluster = lib.rd_kafka_mock_cluster_new(self.rk, 3)
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self.cluster).decode()
        assert lib.rd_kafka_mock_topic_create(self.cluster, TOPIC.encode(), PARTITIONS, 3) == 0
        lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self.cluster, 300)
        assert lib.rd_kafka_mock_coordinator_set(self.cluster, b"group", GROUP.encode(), 1) == 0

    def coordinator(self) -> int:
        return 1

    def down(self, node: int) -> None:
        from confluent_kafka.admin import AdminClient

        metadata = AdminClient({"bootstrap.servers": self.bootstrap}).list_topics(TOPIC, timeout=5)
        led = [p.id for p in metadata.topics[TOPIC].partitions.values() if p.leader == node]
        other = 2 if node != 2 else 3
        self.lib.rd_kafka_mock_broker_set_down(self.cluster, node)
        self.lib.rd_kafka_mock_coordinator_set(self.cluster, b"group", GROUP.encode(), other)
        for partition in led:
            self.lib.rd_kafka_mock_partition_set_leader(self.cluster, TOPIC.encode(), partition, other)

    def close(self) -> None:
        self.lib.rd_kafka_mock_cluster_destroy(self.cluster)
        self.lib.rd_kafka_destroy(self.rk)


def _produce_one_each(producer: Any) -> dict[int, int]:
    ends: dict[int, int] = {}

    def delivered(err: Any, msg: Any) -> None:
        if err is None:
            ends[msg.partition()] = msg.offset() + 1

    for partition in range(PARTITIONS):
        producer.produce(TOPIC, value=b"marker", partition=partition, on_delivery=delivered)
    assert producer.flush(30) == 0 and len(ends) == PARTITIONS, "markers not delivered"
    return ends


def _committed_at_least(probe: Any, ends: dict[int, int]) -> bool:
    """The group's commits as its coordinator answers OffsetFetch, asked by a consumer of the
    group that never subscribes (AdminClient.list_consumer_group_offsets never got an answer
    from the mock cluster once a broker was down, even bootstrapped with live brokers only)."""
    from confluent_kafka import KafkaException, TopicPartition

    try:
        committed = probe.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=2)
    except KafkaException:  # the coordinator is moving: ask again
        return False
    return all(tp.offset >= ends[tp.partition] for tp in committed)


def trial(backend_class: type, client: str) -> float:
    """Seconds from the coordinator broker going down to the group working again."""
    from confluent_kafka import Consumer, Producer

    backend = backend_class()
    members: list[Any] = []
    probe = None
    try:
        probe = Consumer({"bootstrap.servers": backend.bootstrap, "group.id": GROUP, "client.id": "failover-probe"})
        producer = Producer({"bootstrap.servers": backend.bootstrap, "acks": "all", "linger.ms": 0})
        kwargs = {} if client == "kafkajs" else {"commit": True}
        members = [
            MEMBERS[client](f"{client}-{i}", backend.bootstrap, GROUP, TOPIC, **kwargs).start() for i in range(3)
        ]
        wait_until(lambda: group_owns_all(members, PARTITIONS), 45, message="the group forms")
        ends = _produce_one_each(producer)
        wait_until(lambda: _committed_at_least(probe, ends), 30, interval=0.02, message="the first commits")
        node = backend.coordinator()
        start = time.monotonic()
        backend.down(node)
        ends = _produce_one_each(producer)
        wait_until(
            lambda: group_owns_all(members, PARTITIONS) and _committed_at_least(probe, ends),
            60,
            interval=0.02,
            message="every partition owned and its marker committed",
        )
        return time.monotonic() - start
    finally:
        stop_all(members)
        if probe is not None:
            probe.close()
        backend.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--clients", default=",".join(MEMBERS))
    args = parser.parse_args()
    rows = []
    for client in args.clients.split(","):
        for backend_class in (Kgc, Mock):
            times, failures = [], []
            for _ in range(args.trials):
                try:
                    times.append(trial(backend_class, client))
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    failures.append(" ".join(str(exc).split())[:80])
                    if len(failures) == 2:  # the same again, most likely: do not wait for more
                        break
            rows.append((client, backend_class.name, times, failures))
            print(f"  {client} on {backend_class.name}: {[round(t, 2) for t in times]} {failures}", file=sys.stderr)
    print(
        f"coordinator broker down -> every partition owned and a new message committed on each "
        f"({args.trials} trials; seconds)"
    )
    print(f"{'client':<16} {'cluster':<16} {'min':>6} {'median':>7} {'max':>6}")
    for client, backend, times, failures in rows:
        failed = f"  {len(failures)} failed: {failures[0]}" if failures else ""
        if times:
            print(
                f"{client:<16} {backend:<16} {min(times):>6.2f} {statistics.median(times):>7.2f} {max(times):>6.2f}"
                f"{failed}"
            )
        else:
            print(f"{client:<16} {backend:<16} {'n/a':>6}{failed}")


if __name__ == "__main__":
    main()
