"""KIP-932 membership with a real share consumer: confluent-kafka's ShareConsumer (librdkafka 2.16)
joins a share group through ShareGroupHeartbeat v1 with its own member id, heartbeats, shows up in
`kgc share-groups --describe --members` with both partitions assigned (initialized in the share
coordinator before the heartbeat is answered), and leaves on close (the group goes Empty).
Consumption is interop/test_share_groups.py's. Deadlines only bound a hang."""

from __future__ import annotations

import pytest
from confluent_kafka import ShareConsumer

from coordinator.tools.kafka_client import AdminClient
from coordinator.tools.share_admin import describe_share_group, list_share_groups
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.interop]


def test_a_confluent_share_consumer_joins_and_leaves(kafka_coordinator, topic_name):
    kafka_coordinator.create_topic(topic_name, 2)
    consumer = ShareConsumer({"bootstrap.servers": kafka_coordinator.bootstrap, "group.id": "interop-share"})
    consumer.subscribe([topic_name])
    with AdminClient(kafka_coordinator.bootstrap) as admin:

        def joined() -> bool:
            consumer.poll(0.1)
            return len(describe_share_group(admin, "interop-share")[1].members) == 1

        wait_until(joined, timeout=20, message="the share consumer never joined")
        (member,) = describe_share_group(admin, "interop-share")[1].members
        assert member.member_epoch >= 1 and member.member_id
        assert sorted(member.partitions) == [(topic_name, 0), (topic_name, 1)]
        assert ("interop-share", "Stable") in list_share_groups(admin, [])
        consumer.close()  # a leave heartbeat (epoch -1)
        wait_until(
            lambda: describe_share_group(admin, "interop-share")[1].state == "Empty",
            timeout=20,
            message="the share consumer never left",
        )
