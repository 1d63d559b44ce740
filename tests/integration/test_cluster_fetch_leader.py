"""Fetch names a partition's current leader only from v16 on, as Kafka does (issue: a cluster).

KafkaApis.handleFetchRequest fills a NOT_LEADER_OR_FOLLOWER partition's CurrentLeader, and the
leader's NodeEndpoints, only for versionId >= 16 (KIP-951); below v16 the tagged field keeps its
default (-1, -1). A leader id without its endpoint is worse than none: kafka-python 3.0 follows
it to a broker its metadata no longer lists and raises UnknownBrokerIdError out of poll() (seen in
interop/test_cluster_failover.py when a broker came back and took its partitions back).
"""

from __future__ import annotations

import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from tests.integration.raw_client import RawClient


async def test_fetch_names_the_current_leader_only_from_v16(tmp_path):
    async with open_server(tmp_path / "data", brokers=3, topics={"orders": 1}) as server:
        with trio.fail_after(10):
            leader = server.cluster.leader("orders", 0)
            broker = server.brokers[(leader + 1) % 3]
            client = await RawClient.connect(broker.advertised_host, broker.advertised_port)
            try:
                await _check_versions(server, client, leader)
            finally:
                await client.aclose()


async def _check_versions(server, client, leader):
    topic_id = server.broker.topics.get("orders").topic_id
    for version in (12, 15, 16):
        topic = FetchTopic(topic="orders") if version < 13 else FetchTopic(topic_id=topic_id)
        topic.partitions = [FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)]
        r = await client.request(ApiKey.FETCH, version, FetchRequest(max_wait_ms=0, topics=[topic]))
        p = r.responses[0].partitions[0]
        assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER, version
        named = (p.current_leader.leader_id, p.current_leader.leader_epoch)
        if version < 16:
            assert named == (-1, -1), f"v{version} named leader {named} without its endpoint"
        else:
            assert named == (leader, 0)
            assert [(e.node_id, e.port) for e in r.node_endpoints] == [(leader, server.brokers[leader].advertised_port)]
