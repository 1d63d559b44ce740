"""A topic grown from 4 to 8 partitions (confluent-kafka's AdminClient.create_partitions) while a
group of 3 confluent-kafka consumers reads it: the group ends owning all 8, each exactly once, with
eager (range), cooperative-sticky and group.protocol=consumer (KIP-848).

What bounds the time: the classic protocols learn of the new partitions from a metadata refresh
of the subscribed topic, every librdkafka `topic.metadata.refresh.interval.ms` (5 minutes by
default; 500 ms here), then rejoin; with group.protocol=consumer the coordinator sees the new
partitions on the group's next heartbeat (the broker's group.consumer.heartbeat.interval.ms, 300
ms here) and hands out a new target assignment. Ownership is what the members' own rebalance
callbacks say; deadlines only bound a hang, nothing asserts on time.
"""

from __future__ import annotations

import time

import pytest

from interop.clients.consumer_protocol import FAST_SETTINGS, ConsumerProtocolMember
from interop.clients.groups import ConfluentMember, Ownership, close_all, stable_group
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.interop, pytest.mark.kafka_settings(FAST_SETTINGS)]

DEADLINE = 30.0
METADATA_REFRESH_MS = 500  # librdkafka topic.metadata.refresh.interval.ms: what bounds the classic groups


@pytest.mark.parametrize("protocol", ["eager", "cooperative-sticky", "consumer"])
def test_a_group_covers_a_topic_grown_from_4_to_8(kafka_coordinator, topic_name, protocol, record_property):
    from confluent_kafka.admin import AdminClient, NewPartitions

    kafka_coordinator.create_topic(topic_name, 4)
    ownership = Ownership()
    config = {"topic.metadata.refresh.interval.ms": METADATA_REFRESH_MS}
    if protocol == "consumer":
        members: list[ConfluentMember] = [
            ConsumerProtocolMember(
                f"m{i}", kafka_coordinator.bootstrap, f"grow-{protocol}", [topic_name], ownership, config
            )
            for i in range(3)
        ]
    else:
        config["partition.assignment.strategy"] = "range" if protocol == "eager" else "cooperative-sticky"
        members = [
            ConfluentMember(f"m{i}", kafka_coordinator.bootstrap, f"grow-{protocol}", [topic_name], ownership, config)
            for i in range(3)
        ]
    try:
        for m in members:
            m.start()
        wait_until(stable_group(ownership, topic_name, 4, members), DEADLINE, message=ownership.describe)
        admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})
        grown = time.monotonic()
        admin.create_partitions([NewPartitions(topic_name, 8)])[topic_name].result(20)
        wait_until(stable_group(ownership, topic_name, 8, members), DEADLINE, message=ownership.describe)
        seconds = time.monotonic() - grown
        record_property(f"grown_to_covered_{protocol}", round(seconds, 3))
        print(f"{protocol}: 4 -> 8 partitions covered {seconds:.3f} s after CreatePartitions")
        assert ownership.violations == [], ownership.describe()
        assert all(m.errors == [] for m in members), [m.errors for m in members]
    finally:
        assert close_all(members) == []
