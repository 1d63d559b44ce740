"""`kgc groups` against a live confluent-kafka group (real time, deadlines).

Three consumers share a 6-partition topic while a producer keeps writing to it. At a quiesced
moment (producer stopped, every consumer caught up and committed synchronously, then paused and
K more records produced per partition) `kgc groups --describe` must show, per partition, the
offset the owning consumer committed, the log end the broker reports, LAG = K, and the owner's
member id, host and client id. Then the group is stopped, `--reset-offsets --to-earliest
--execute` rewinds it, and a new consumer (auto.offset.reset=latest, so only the committed
offsets can send it to 0) starts every partition at offset 0. A second scenario runs a group
with the transcript on and checks that every error code a response carried has its reason.
"""

from __future__ import annotations

import io
import json
import threading
import time
from argparse import Namespace

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from coordinator.__main__ import build_parser
from coordinator.tools.groups_cli import run as run_groups
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

PARTITIONS = 6
EXTRA = 5  # records produced per partition after the consumers paused: the expected LAG
DEADLINE = 60


def kgc_groups(bootstrap: str, *argv: str) -> tuple[int, str]:
    args: Namespace = build_parser().parse_args(["groups", "--bootstrap-server", bootstrap, *argv])
    out, err = io.StringIO(), io.StringIO()
    code = run_groups(args, out, err)
    return code, out.getvalue()


class Member(threading.Thread):
    """A consumer polling on its own thread; `quiesce` makes it drain, commit and pause."""

    def __init__(self, bootstrap: str, group: str, topic: str, n: int) -> None:
        super().__init__(daemon=True, name=f"member-{n}")
        self.topic, self.client_id = topic, f"member-{n}"
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": self.client_id,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 500,
            }
        )
        self.consumer.subscribe([topic])
        self.quiesce, self.paused, self.stop = threading.Event(), threading.Event(), threading.Event()
        self.positions: dict[int, int] = {}  # partition -> next offset to read
        self.committed: dict[int, int] = {}
        self.assigned: set[int] = set()
        self.member_id = ""
        self.ends: dict[int, int] = {}  # the log ends to drain to, set by the test

    def run(self) -> None:
        while not self.stop.is_set():
            if self.paused.is_set():
                self.stop.wait(0.05)  # paused, not polling: librdkafka keeps heartbeating in the background
                continue
            msg = self.consumer.poll(0.1)
            if msg is not None and not msg.error():
                self.positions[msg.partition()] = msg.offset() + 1
            self.assigned = {tp.partition for tp in self.consumer.assignment()}
            if (
                self.quiesce.is_set()
                and self.assigned
                and all(self.positions.get(p, 0) >= self.ends[p] for p in self.assigned)
            ):
                self.consumer.commit(
                    offsets=[TopicPartition(self.topic, p, self.positions.get(p, 0)) for p in sorted(self.assigned)],
                    asynchronous=False,
                )
                self.committed = {
                    tp.partition: tp.offset
                    for tp in self.consumer.committed(
                        [TopicPartition(self.topic, p) for p in sorted(self.assigned)], timeout=10
                    )
                }
                self.member_id = self.consumer.memberid()
                self.paused.set()
        self.consumer.close()


def test_describe_matches_the_clients_and_reset_rewinds_them(kafka_coordinator, topic_name):
    bootstrap = kafka_coordinator.bootstrap
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    group = f"{topic_name}-group"
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    produced = [0] * PARTITIONS

    def produce_round() -> None:
        for p in range(PARTITIONS):
            producer.produce(topic_name, value=b"x", partition=p)
            produced[p] += 1
        producer.flush(10)

    members = [Member(bootstrap, group, topic_name, n) for n in range(3)]
    for m in members:
        m.start()
    try:
        # Keep producing while the group forms and consumes, until all three own partitions.
        deadline = time.monotonic() + DEADLINE
        while not all(m.assigned for m in members) or sum(len(m.assigned) for m in members) != PARTITIONS:
            assert time.monotonic() < deadline, "the group of 3 never owned every partition"
            produce_round()
            time.sleep(0.05)
        for _ in range(20):
            produce_round()
        # Quiesce: the producer stops, each consumer drains to the log end, commits, pauses.
        for m in members:
            m.ends = dict(enumerate(produced))
            m.quiesce.set()
        wait_until(
            lambda: all(m.paused.is_set() for m in members),
            DEADLINE,
            message=lambda: f"consumers caught up: {[m.positions for m in members]} vs {produced}",
        )
        for _ in range(EXTRA):
            produce_round()

        code, out = kgc_groups(bootstrap, "--describe", "--group", group, "--output", "json")
        assert code == 0, out
        described = json.loads(out)
        assert described["state"] == "Stable"
        rows = {r["partition"]: r for r in described["rows"]}
        assert sorted(rows) == list(range(PARTITIONS))
        for m in members:
            for p in m.assigned:
                row = rows[p]
                assert row["current_offset"] == m.committed[p] == m.positions.get(p, 0), (p, row)
                assert row["log_end_offset"] == produced[p]
                assert row["lag"] == EXTRA
                assert (row["consumer_id"], row["host"], row["client_id"]) == (m.member_id, "/127.0.0.1", m.client_id)
        # The table view prints the same numbers in Kafka's columns.
        code, table = kgc_groups(bootstrap, "--describe", "--group", group)
        assert code == 0 and table.splitlines()[1].split()[:6] == [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
        ]
        code, refused = kgc_groups(
            bootstrap, "--reset-offsets", "--group", group, "--topic", topic_name, "--to-earliest", "--execute"
        )
        assert code == 1 and "is inactive, but the current state is Stable" in refused
    finally:
        for m in members:
            m.stop.set()
        for m in members:
            m.join(30)

    wait_until(
        lambda: (
            json.loads(kgc_groups(bootstrap, "--describe", "--group", group, "--output", "json")[1])["state"] == "Empty"
        ),
        DEADLINE,
        message="group empty",
    )
    code, out = kgc_groups(
        bootstrap, "--reset-offsets", "--group", group, "--topic", topic_name, "--to-earliest", "--execute"
    )
    assert code == 0, out
    assert [r.split()[2:] for r in out.strip().splitlines()[1:]] == [[str(p), "0"] for p in range(PARTITIONS)]

    first: dict[int, int] = {}
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "latest", "enable.auto.commit": False}
    )
    consumer.subscribe([topic_name])
    try:
        deadline = time.monotonic() + DEADLINE
        while len(first) < PARTITIONS:
            assert time.monotonic() < deadline, f"first offsets seen: {first}"
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                first.setdefault(msg.partition(), msg.offset())
    finally:
        consumer.close()
    assert first == {p: 0 for p in range(PARTITIONS)}
    producer.flush(10)


def test_a_real_groups_transcript_explains_every_error(tmp_path, topic_name):
    """Two confluent-kafka consumers join, rebalance, commit and leave with the transcript on:
    every error code any response carried has its reason, and the timeline renders."""
    from coordinator.embed.embedded import EmbeddedServer
    from coordinator.tools.transcript_render import render

    path = tmp_path / "t.jsonl"
    group = f"{topic_name}-t"
    with EmbeddedServer(tmp_path / "data", topics={topic_name: 3}, settings={"transcript.file": str(path)}) as server:

        def consumer(name: str) -> Consumer:
            c = Consumer(
                {
                    "bootstrap.servers": server.bootstrap,
                    "group.id": group,
                    "client.id": name,
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": False,
                    "heartbeat.interval.ms": 300,
                    "session.timeout.ms": 6000,
                }
            )
            c.subscribe([topic_name])
            return c

        def owned(*cs: Consumer) -> list[int]:
            for c in cs:
                c.poll(0.05)
            return [len(c.assignment()) for c in cs]

        a = consumer("alice")
        wait_until(lambda: owned(a) == [3], DEADLINE, message="alice owns everything")
        b = consumer("bob")
        wait_until(lambda: sorted(owned(a, b)) == [1, 2], DEADLINE, message="alice and bob share")
        b.close()
        wait_until(lambda: owned(a) == [3], DEADLINE, message="alice owns everything again")
        a.close()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    errors = [(e["api"], err) for e in events if e["type"] == "response" for err in e["errors"]]
    assert {err["error"] for _, err in errors} >= {"MEMBER_ID_REQUIRED", "REBALANCE_IN_PROGRESS"}
    assert [(api, err) for api, err in errors if not err["reason"]] == []
    causes = [
        e["reason"]
        for e in events
        if e["type"] == "transition"
        and e["group"] == group
        and e["from"] == "Stable"
        and e["to"] == "PreparingRebalance"
    ]
    assert causes[0].startswith("JoinGroup from client 'bob'") and causes[1].startswith("LeaveGroup from client 'bob'")
    out = io.StringIO()
    with open(path, encoding="utf-8") as f:
        assert render(f, group, out) == 0
    assert "== PreparingRebalance -> Empty" in out.getvalue()
