"""Transactions across the broker processes of `kgc serve --brokers 2 --processes`, with
confluent-kafka: the produce verification and the TxnOffsetCommit verification ask a transaction
coordinator in the other process, and its markers reach partitions (user and __consumer_offsets)
that the other process leads, over the broker link (coordinator/cluster/peer_link.py). One
committed transaction (writes to partitions of both processes, plus send_offsets_to_transaction
for a group coordinated by the other process than the transaction), one aborted; a
read_committed consumer sees exactly the committed messages and reaches the end of every
partition (the abort markers were written too), and the group holds the transactional commit.
Who coordinates what is asked of the brokers (FindCoordinator, Metadata), never assumed.
"""

from __future__ import annotations

import re
import socket
import struct
import subprocess
import sys

import pytest

from protocol.api import ApiKey
from protocol.codec import decode_response, encode_request
from protocol.headers import RequestHeader, decode_response_header, encode_request_header
from protocol.messages.find_coordinator import FindCoordinatorRequest
from tests.support.serve_process import REPO
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
TOPIC, PARTITIONS = "tx", 4
GROUP_KEY, TXN_KEY = 0, 1  # FindCoordinator key types


def start(data_dir: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "coordinator", "serve", "--port", "0", "--data-dir", data_dir, "--log-level", "WARNING"]
        + ["--brokers", "2", "--processes", "--create-topic", f"{TOPIC}:{PARTITIONS}"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    lines = []
    while True:
        line = proc.stdout.readline()
        lines.append(line)
        if not line:
            raise AssertionError(f"the server exited ({proc.wait()}) before serving: {lines}")
        if match := re.search(r"kgc: serving bootstrap=(\S+)", line):
            return proc, match.group(1)


def coordinators(bootstrap: str, key_type: int, keys: list[str]) -> dict[str, int]:
    """FindCoordinator v4 (batched), asked of the first broker: key -> its coordinator's node id."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    header = encode_request_header(RequestHeader(ApiKey.FIND_COORDINATOR, 4, 1, "test"))
    body = encode_request(ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=key_type, coordinator_keys=keys))
    with socket.create_connection((host, int(port)), timeout=DEADLINE) as sock:
        sock.sendall(struct.pack(">i", len(header) + len(body)) + header + body)
        reader = sock.makefile("rb")
        (size,) = struct.unpack(">i", reader.read(4))
        payload = reader.read(size)
    _, offset = decode_response_header(payload, ApiKey.FIND_COORDINATOR, 4)
    response = decode_response(ApiKey.FIND_COORDINATOR, 4, payload, offset)
    assert all(c.error_code == 0 for c in response.coordinators), response
    return {c.key: c.node_id for c in response.coordinators}


def test_a_transaction_spanning_both_broker_processes_commits_and_another_aborts(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    proc, bootstrap = start(str(tmp_path / "data"))
    consumers: list[Consumer] = []
    try:
        leaders = {
            p.id: p.leader
            for p in AdminClient({"bootstrap.servers": bootstrap})
            .list_topics(TOPIC, timeout=DEADLINE)
            .topics[TOPIC]
            .partitions.values()
        }
        assert len(set(leaders.values())) == 2, leaders  # both processes lead partitions of it
        txn_id = "tx-1"
        txn_node = coordinators(bootstrap, TXN_KEY, [txn_id])[txn_id]
        groups = coordinators(bootstrap, GROUP_KEY, [f"group-{i}" for i in range(20)])
        group = next(g for g, node in sorted(groups.items()) if node != txn_node)  # the other process

        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 0})
        producer.init_transactions(DEADLINE)
        group_consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        consumers.append(group_consumer)
        producer.begin_transaction()
        for p in range(PARTITIONS):
            producer.produce(TOPIC, f"committed-{p}".encode(), partition=p)
        producer.send_offsets_to_transaction(
            [TopicPartition(TOPIC, 0, 7), TopicPartition(TOPIC, 3, 11)],
            group_consumer.consumer_group_metadata(),
            DEADLINE,
        )
        producer.commit_transaction(DEADLINE)
        producer.begin_transaction()
        for p in range(PARTITIONS):
            producer.produce(TOPIC, f"aborted-{p}".encode(), partition=p)
        producer.flush(DEADLINE)
        producer.abort_transaction(DEADLINE)

        reader = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "reader",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        consumers.append(reader)
        reader.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        seen: list[str] = []

        def read_to_the_end() -> bool:
            message = reader.poll(0.2)
            if message is not None and message.error() is None:
                seen.append(message.value().decode())
            ends = [reader.get_watermark_offsets(TopicPartition(TOPIC, p), cached=False)[1] for p in range(PARTITIONS)]
            positions = [tp.offset for tp in reader.position([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])]
            return positions == ends  # past every marker: no partition's LSO is stuck

        wait_until(read_to_the_end, DEADLINE, message=lambda: f"read_committed reached {seen}")
        assert sorted(seen) == [f"committed-{p}" for p in range(PARTITIONS)]

        def committed() -> list[int]:
            parts = group_consumer.committed([TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 3)], DEADLINE)
            return [tp.offset for tp in parts]

        assert wait_until(lambda: committed() == [7, 11], DEADLINE, message=lambda: f"committed {committed()}")
    finally:
        for consumer in consumers:
            consumer.close()
        proc.terminate()
        proc.wait(DEADLINE)
