"""`kgc serve --brokers 3 --processes` with confluent-kafka: the group's coordinator broker is taken
down through the control plane (served by broker 0's process, the command followed by every
process through the data dir: coordinator/cluster/shared_cluster.py) and brought back; the
producer and a KIP-848 consumer carry on against the new leaders and the new coordinator, and
no acknowledged commit is lost. Waits are on conditions; the deadlines only bound a hang.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request

import pytest

from interop.clients.consumer_protocol import FAST_SETTINGS
from tests.support.serve_process import REPO
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
TOPIC, GROUP, PARTITIONS = "moving", "movers", 3


def start(data_dir: str) -> tuple[subprocess.Popen[str], str, str]:
    """(the server, its bootstrap, its control URL) once it serves both."""
    settings = [arg for key, value in FAST_SETTINGS.items() for arg in ("--set", f"{key}={value}")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "coordinator", "serve", "--port", "0", "--data-dir", data_dir, "--log-level", "WARNING"]
        + ["--brokers", "3", "--processes", "--control-port", "0", *settings],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    seen: dict[str, str] = {}
    lines = []
    while len(seen) < 2:  # the two lines come in either order (the control line is broker 0's)
        line = proc.stdout.readline()
        lines.append(line)
        if not line:
            raise AssertionError(f"the server exited ({proc.wait()}) before serving: {lines}")
        for key, pattern in (("bootstrap", r"kgc: serving bootstrap=(\S+)"), ("control", r"kgc: control=(http://\S+)")):
            if match := re.search(pattern, line):
                seen[key] = match.group(1)
    return proc, seen["bootstrap"], seen["control"]


def control(url: str, path: str) -> dict:
    request = urllib.request.Request(url + path, method="POST", data=b"")
    assert request.host.startswith("127.0.0.1:"), url
    with urllib.request.urlopen(request, timeout=DEADLINE) as response:
        return dict(json.loads(response.read()))


def test_clients_carry_on_while_the_coordinator_broker_process_goes_down_and_comes_back(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    proc, bootstrap, url = start(str(tmp_path / "data"))
    consumer = None
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])[TOPIC].result(DEADLINE)
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": GROUP,
                "group.protocol": "consumer",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([TOPIC])
        seen: list[bytes] = []
        committed_total = 0

        def produce(start: int) -> None:
            for i in range(start, start + 30):
                producer.produce(TOPIC, value=f"v{i}".encode(), partition=i % PARTITIONS)
            assert producer.flush(DEADLINE) == 0  # every record acknowledged

        def consume_and_commit(total: int) -> int:
            def read() -> bool:
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    seen.append(message.value())
                return len(seen) >= total

            wait_until(read, DEADLINE, message=lambda: f"{len(seen)} of {total} records")

            def commit() -> bool:  # retried while the coordinator moves (the error is retriable)
                try:
                    consumer.commit(asynchronous=False)
                except Exception:
                    return False
                return True

            wait_until(commit, DEADLINE, message="a commit the coordinator accepts")
            offsets = consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=DEADLINE)
            return sum(tp.offset for tp in offsets)

        produce(0)
        committed_total = consume_and_commit(30)
        assert committed_total == 30
        group = admin.describe_consumer_groups([GROUP])[GROUP].result(DEADLINE)
        coordinator = group.coordinator.id

        down = control(url, f"/v1/brokers/{coordinator}/down")  # returns once every process applied it
        assert down["up"] is False
        leaders = {p.leader for p in admin.list_topics(TOPIC, timeout=DEADLINE).topics[TOPIC].partitions.values()}
        assert coordinator not in leaders  # its partitions have other leaders now
        produce(30)
        committed_total = consume_and_commit(60)
        assert committed_total == 60  # committed to the new coordinator; none of the earlier lost

        assert control(url, f"/v1/brokers/{coordinator}/up")["up"] is True
        produce(60)
        committed_total = consume_and_commit(90)
        assert committed_total == 90
        assert sorted(seen) == sorted(f"v{i}".encode() for i in range(90))  # each record once
    finally:
        if consumer is not None:
            consumer.close()
        proc.terminate()
        assert proc.wait(DEADLINE) == 0
