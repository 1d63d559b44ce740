"""A partition leader goes down, and comes back, under idempotent acks=all producers (issue 12, "Show").

Three brokers; a 3-partition topic with replication factor 3, one partition led by each broker.
An idempotent producer (confluent-kafka, then kafka-python) keeps producing `prefix-<n>` values
round-robin over the partitions. Once it is under way, the broker leading partition 0 is taken
down (`control.broker(n).down()`): its connections close with requests in flight, its partitions
get new leaders (epoch + 1), and the producer must retry there with the same producer id and
sequence numbers. Later the broker comes back and leads its preferred partitions again (another
leader change while producing). Then every partition is read back from offset 0:

- nothing acknowledged is lost: each acknowledged (partition, offset) holds the value that was
  acknowledged there;
- nothing is duplicated: no value appears twice in the topic (a retried batch that the old leader
  had already appended is recognised by its sequence numbers, not appended again);
- order is kept per partition (the idempotent producer's guarantee), and nothing failed.

Deadlines only bound a hang; nothing asserts on time.
"""

from __future__ import annotations

from collections import Counter

import pytest

from coordinator.embed.embedded import EmbeddedServer
from interop.clients.cluster import KeepProducing, read_partition, wait_acked

pytestmark = pytest.mark.interop

PARTITIONS = 3
DEADLINE = 40.0
SETTINGS = {"default.replication.factor": 3}


def _leader(control, topic, partition):
    return next(
        p
        for t in control.snapshot()["topics"]
        if t["name"] == topic
        for p in t["partitions"]
        if p["partition"] == partition
    )


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python"])
def test_partition_leader_down_and_up_during_idempotent_produce(tmp_path, topic_name, client):
    with EmbeddedServer(tmp_path / "data", brokers=3, settings=SETTINGS, topics={topic_name: PARTITIONS}) as server:
        control = server.control
        first = _leader(control, topic_name, 0)
        producer = KeepProducing(
            client, server.bootstrap, topic_name, PARTITIONS, f"idem-{client}", rate_per_s=1000
        ).start()
        try:
            wait_acked(producer, 300, DEADLINE)
            control.broker(first["leader"]).down()
            moved = _leader(control, topic_name, 0)
            assert moved["leader"] not in (first["leader"], -1) and moved["leader_epoch"] == first["leader_epoch"] + 1
            wait_acked(producer, len(producer.acked()) + 300, DEADLINE)
            control.broker(first["leader"]).up()
            back = _leader(control, topic_name, 0)
            assert back["leader"] == first["leader"] and back["leader_epoch"] == first["leader_epoch"] + 2
            wait_acked(producer, len(producer.acked()) + 300, DEADLINE)
        finally:
            producer.stop()
        acked = producer.acked()
        assert producer.failed() == [], producer.describe()
        assert len(acked) == producer.sent, producer.describe()

        logs = {p: read_partition(server.bootstrap, topic_name, p) for p in range(PARTITIONS)}
        stored = {(p, offset): value for p, rows in logs.items() for offset, value in rows}
        lost = [(p, o, v) for p, o, v in acked if stored.get((p, o)) != v]
        assert lost == [], f"{len(lost)} acknowledged messages not where they were acknowledged: {lost[:5]}"
        counts = Counter(value for rows in logs.values() for _offset, value in rows)
        duplicated = sorted(v for v, n in counts.items() if n > 1)
        assert duplicated == [], f"{len(duplicated)} values stored twice: {duplicated[:5]}"
        assert set(counts) == {v for _p, _o, v in acked}, "the topic holds values nobody acknowledged"
        for p, rows in logs.items():
            sequence = [int(value.rsplit("-", 1)[1]) for _offset, value in rows]
            assert sequence == sorted(sequence), f"partition {p} out of order"
