"""Every real client connects and lists one topic's metadata.

This is the first thing any client does (ApiVersions, then Metadata), and each one negotiates
different versions: librdkafka 2.16 Metadata v13, kcat's librdkafka 2.0.2 v4, kafka-python v13
after ApiVersions v4, aiokafka v5 after ApiVersions v0, kafkajs v6 after ApiVersions v2,
@platformatic/kafka v12 after ApiVersions v3 (protocol.md §3.1; seen on the wire). A topic with
an unusual partition count (7) catches a server that drops, duplicates or misnumbers partitions
in any of those encodings.
"""

from __future__ import annotations

import pytest

from interop.clients import METADATA_CLIENTS

pytestmark = pytest.mark.interop

PARTITIONS = 7
# Each client gives up by itself within this many seconds (subprocess deadline or its own timeouts).
CLIENT_TIMEOUT = 30.0


@pytest.mark.parametrize("client", list(METADATA_CLIENTS))
def test_client_lists_topic_metadata(kafka_coordinator, topic_name, client):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)

    md = METADATA_CLIENTS[client](kafka_coordinator.bootstrap, topic_name, CLIENT_TIMEOUT)

    assert md.topic == topic_name, md.explain()
    assert md.error is None, md.explain()
    assert md.partitions == {index: 0 for index in range(PARTITIONS)}, md.explain()
    # The leader must be reachable: node 0 is advertised on the port the client bootstrapped from.
    assert 0 in md.brokers and md.brokers[0][1] == kafka_coordinator.port, md.explain()
