"""`kgc serve --brokers 2 --processes` with confluent-kafka: a topic created through broker 0
(AdminClient) is produced to and consumed (group.protocol=consumer, KIP-848: the group
coordinator's process assigns from its own view of the topics) through broker 1, deleted through
broker 1 and created again at once through broker 0, empty. Each broker is its own process; they
share only the data dir (coordinator/cluster/shared_topics.py). Waits are on conditions; the
deadlines only bound a hang.
"""

from __future__ import annotations

import pytest

from interop.clients.consumer_protocol import FAST_SETTINGS
from tests.support.serve_process import start_serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
TOPIC = "fresh"


def test_a_topic_made_through_one_broker_process_serves_through_the_other(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    settings = [arg for key, value in FAST_SETTINGS.items() for arg in ("--set", f"{key}={value}")]
    proc, bootstrap = start_serve(str(tmp_path / "data"), "--brokers", "2", "--processes", *settings)
    first, second = bootstrap.split(",")
    consumer = None
    try:
        admin = AdminClient({"bootstrap.servers": first})
        admin.create_topics([NewTopic(TOPIC, 4, 1)])[TOPIC].result(DEADLINE)
        leaders = {p.id: p.leader for p in admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions.values()}
        assert sorted(set(leaders.values())) == [0, 1]  # both processes lead partitions of it

        producer = Producer({"bootstrap.servers": second})
        for i in range(20):
            producer.produce(TOPIC, value=f"v{i}".encode(), partition=i % 4)
        assert producer.flush(DEADLINE) == 0

        consumer = Consumer(
            {
                "bootstrap.servers": second,
                "group.id": "fresh-readers",
                "group.protocol": "consumer",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([TOPIC])
        seen: list[bytes] = []

        def read_all() -> bool:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                seen.append(message.value())
            return len(seen) >= 20

        wait_until(read_all, DEADLINE, message=lambda: f"{len(seen)} of 20 records")
        assert sorted(seen) == sorted(f"v{i}".encode() for i in range(20))
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition(TOPIC, p) for p in range(4)], timeout=10)
        assert [tp.offset for tp in committed] == [5, 5, 5, 5]
        consumer.close()
        consumer = None

        deleter = AdminClient({"bootstrap.servers": second})
        deleter.delete_topics([TOPIC])[TOPIC].result(DEADLINE)
        wait_until(
            lambda: TOPIC not in admin.list_topics(timeout=10).topics, DEADLINE, message="broker 0 forgets the topic"
        )
        admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(DEADLINE)  # the name is free again

        def recreated() -> bool:
            topic = deleter.list_topics(TOPIC, timeout=10).topics[TOPIC]
            return topic.error is None and len(topic.partitions) == 2

        wait_until(recreated, DEADLINE, message="broker 1 sees the new incarnation")
        reader = Consumer({"bootstrap.servers": second, "group.id": "unused"})
        try:
            assert [reader.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10) for p in range(2)] == [
                (0, 0),
                (0, 0),
            ]  # a new, empty topic: none of the old records came back
        finally:
            reader.close()
    finally:
        if consumer is not None:
            consumer.close()
        proc.terminate()
        assert proc.wait(DEADLINE) == 0
