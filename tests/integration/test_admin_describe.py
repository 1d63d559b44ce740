"""DescribeCluster, DescribeTopicPartitions, DescribeLogDirs, DescribeProducers and ElectLeaders over
real sockets, on a three-broker cluster in one process."""

from __future__ import annotations

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.describe_cluster import DescribeClusterRequest
from protocol.messages.describe_log_dirs import DescribableLogDirTopic, DescribeLogDirsRequest
from protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from protocol.messages.describe_topic_partitions import Cursor, DescribeTopicPartitionsRequest
from protocol.messages.describe_topic_partitions import TopicRequest as DtpTopic
from protocol.messages.elect_leaders import ElectLeadersRequest, TopicPartitions
from protocol.messages.init_producer_id import InitProducerIdRequest
from tests.integration.raw_client import RawClient
from tests.integration.test_data_path import _batch, _produce

DEADLINE = 30


@pytest.fixture
async def cluster(tmp_path):
    settings = {"auto.leader.rebalance.enable": "false", "default.replication.factor": "3"}
    async with open_server(tmp_path / "data", topics={"orders": 3, "big": 5}, brokers=3, settings=settings) as server:
        yield server


async def _connect(server, node=0) -> RawClient:
    broker = server.brokers[node]
    return await RawClient.connect(broker.advertised_host, broker.advertised_port)


async def test_describe_cluster_endpoint_type_and_fenced_brokers(cluster):
    with trio.fail_after(DEADLINE):
        client = await _connect(cluster)
        got = await client.request(ApiKey.DESCRIBE_CLUSTER, 0, DescribeClusterRequest())
        assert (got.error_code, got.cluster_id, got.controller_id) == (0, "kgc-local-cluster", 0)
        assert [b.broker_id for b in got.brokers] == [0, 1, 2]
        wrong = await client.request(ApiKey.DESCRIBE_CLUSTER, 1, DescribeClusterRequest(endpoint_type=2))
        assert (wrong.error_code, wrong.endpoint_type) == (ErrorCode.MISMATCHED_ENDPOINT_TYPE, 1)
        await cluster.controller.broker_down(2)
        live = await client.request(ApiKey.DESCRIBE_CLUSTER, 2, DescribeClusterRequest())
        assert [b.broker_id for b in live.brokers] == [0, 1]
        everyone = await client.request(ApiKey.DESCRIBE_CLUSTER, 2, DescribeClusterRequest(include_fenced_brokers=True))
        assert [(b.broker_id, b.is_fenced) for b in everyone.brokers] == [(0, False), (1, False), (2, True)]
        ops = await client.request(
            ApiKey.DESCRIBE_CLUSTER, 2, DescribeClusterRequest(include_cluster_authorized_operations=True)
        )
        assert ops.cluster_authorized_operations > 0
        await client.aclose()


async def test_describe_topic_partitions_pages_with_a_cursor(cluster):
    with trio.fail_after(DEADLINE):
        client = await _connect(cluster)
        request = DescribeTopicPartitionsRequest(
            topics=[DtpTopic(name="orders"), DtpTopic(name="big"), DtpTopic(name="nope")], response_partition_limit=4
        )
        got = await client.request(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, request)
        by_name = {t.name: t for t in got.topics}
        assert by_name["nope"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert [p.partition_index for p in by_name["big"].partitions] == [0, 1, 2, 3]
        assert "orders" not in by_name and (got.next_cursor.topic_name, got.next_cursor.partition_index) == ("big", 4)
        request.cursor = got.next_cursor
        rest = await client.request(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, request)
        pages = {t.name: [p.partition_index for p in t.partitions] for t in rest.topics if not t.error_code}
        assert pages == {"big": [4], "orders": [0, 1, 2]} and rest.next_cursor is None
        p0 = {t.name: t for t in rest.topics}["orders"].partitions[0]
        assert len(p0.replica_nodes) == 3 and p0.isr_nodes == p0.replica_nodes and p0.eligible_leader_replicas == []
        everything = await client.request(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, DescribeTopicPartitionsRequest())
        assert {"__consumer_offsets", "big", "orders"} <= {t.name for t in everything.topics}
        bad = DescribeTopicPartitionsRequest(topics=[DtpTopic(name="orders")], cursor=Cursor(topic_name="big"))
        refused = await client.request(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, bad)
        assert [t.error_code for t in refused.topics] == [ErrorCode.INVALID_REQUEST]
        await client.aclose()


async def test_describe_log_dirs_reports_real_sizes_of_the_replicas_a_broker_holds(cluster):
    with trio.fail_after(DEADLINE):
        leader = cluster.cluster.leader("orders", 0)
        client = await _connect(cluster, leader)
        sent = await client.request(ApiKey.PRODUCE, 9, _produce("orders", 0, _batch(b"x" * 500)))
        assert sent.responses[0].partition_responses[0].error_code == 0
        got = await client.request(
            ApiKey.DESCRIBE_LOG_DIRS, 4, DescribeLogDirsRequest(topics=[DescribableLogDirTopic("orders", [0, 1, 2])])
        )
        [result] = got.results
        sizes = {p.partition_index: p.partition_size for t in result.topics for p in t.partitions}
        assert sizes[0] == cluster.broker.data.partition("orders", 0).log.size_bytes > 500
        held = {p for p in range(3) if leader in cluster.cluster.leadership("orders", p).replicas}
        assert set(sizes) == held
        assert result.total_bytes > 0 and 0 <= result.usable_bytes <= result.total_bytes
        assert result.log_dir == str(cluster.broker.topics.data_dir.resolve())
        everything = await client.request(ApiKey.DESCRIBE_LOG_DIRS, 1, DescribeLogDirsRequest(topics=None))
        assert "__consumer_offsets" in {t.name for t in everything.results[0].topics}
        await client.aclose()


async def test_describe_producers_lists_an_idempotent_producer(cluster):
    with trio.fail_after(DEADLINE):
        leader = cluster.cluster.leader("orders", 1)
        client = await _connect(cluster, leader)
        init = await client.request(
            ApiKey.INIT_PRODUCER_ID, 4, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=1000)
        )
        batch = _batch(b"a", b"b", producer_id=init.producer_id, producer_epoch=init.producer_epoch, base_sequence=0)
        await client.request(ApiKey.PRODUCE, 9, _produce("orders", 1, batch))
        got = await client.request(
            ApiKey.DESCRIBE_PRODUCERS, 0, DescribeProducersRequest(topics=[TopicRequest("orders", [1, 7])])
        )
        one, missing = got.topics[0].partitions
        assert [(p.producer_id, p.last_sequence, p.current_txn_start_offset) for p in one.active_producers] == [
            (init.producer_id, 1, -1)
        ]
        assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        other = await _connect(cluster, (leader + 1) % 3)
        moved = await other.request(
            ApiKey.DESCRIBE_PRODUCERS, 0, DescribeProducersRequest([TopicRequest("orders", [1])])
        )
        assert moved.topics[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        await client.aclose()
        await other.aclose()


async def test_elect_leaders_preferred_and_unclean(cluster):
    with trio.fail_after(DEADLINE):
        client = await _connect(cluster)
        preferred = cluster.cluster.leadership("orders", 0).replicas[0]
        await cluster.controller.broker_down(preferred)
        await cluster.controller.broker_up(preferred)  # auto.leader.rebalance.enable=false: it does not lead again
        if preferred == 0:
            client = await _connect(cluster, 1)
        assert cluster.cluster.leader("orders", 0) != preferred
        request = ElectLeadersRequest(
            election_type=0, topic_partitions=[TopicPartitions("orders", [0]), TopicPartitions("nope", [0])]
        )
        got = await client.request(ApiKey.ELECT_LEADERS, 2, request)
        assert [(r.topic, [p.error_code for p in r.partition_result]) for r in got.replica_election_results] == [
            ("orders", [ErrorCode.NONE]),
            ("nope", [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]),
        ]
        assert cluster.cluster.leader("orders", 0) == preferred
        again = await client.request(ApiKey.ELECT_LEADERS, 2, request)
        assert again.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED
        unclean = ElectLeadersRequest(election_type=1, topic_partitions=[TopicPartitions("orders", [0])])
        got = await client.request(ApiKey.ELECT_LEADERS, 1, unclean)
        assert got.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED
        everything = await client.request(ApiKey.ELECT_LEADERS, 2, ElectLeadersRequest(topic_partitions=None))
        assert everything.error_code == 0 and all(
            p.error_code != ErrorCode.ELECTION_NOT_NEEDED
            for r in everything.replica_election_results
            for p in r.partition_result
        )
        bad = await client.request(ApiKey.ELECT_LEADERS, 1, ElectLeadersRequest(election_type=5, topic_partitions=[]))
        assert bad.error_code == ErrorCode.INVALID_REQUEST
        await client.aclose()
