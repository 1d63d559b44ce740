"""A cluster of three brokers in one process, over real sockets: placement, coordinators,
leaders, brokers going down and coming back, coordinator and leader moves (issue: a cluster).

Every wait is on a condition under a deadline; time never passes by sleeping.
"""

from __future__ import annotations

import pytest
import trio

from coordinator.control.errors import ControlError
from coordinator.embed.embedded import open_server
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.metadata import MetadataRequest
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from storage.batch import Record, encode_batch
from tests.integration.raw_client import RawClient

GROUP = "cluster-group"


async def connect(server, node: int) -> RawClient:
    broker = server.brokers[node]
    return await RawClient.connect(broker.advertised_host, broker.advertised_port)


async def coordinator(client: RawClient, group: str = GROUP):
    r = await client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key=group, key_type=0))
    return r.error_code, r.node_id, r.port


def commit(offset: int) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        group_id=GROUP,
        topics=[
            OffsetCommitRequestTopic(
                name="orders", partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=offset)]
            )
        ],
    )


async def fetch_committed(client: RawClient) -> tuple[int, int]:
    r = await client.request(
        ApiKey.OFFSET_FETCH,
        5,
        OffsetFetchRequest(group_id=GROUP, topics=[OffsetFetchRequestTopic(name="orders", partition_indexes=[0])]),
    )
    p = r.topics[0].partitions[0] if r.topics else None
    return (r.error_code or (p.error_code if p else 0), p.committed_offset if p else -1)


async def test_metadata_lists_every_broker_and_spreads_leaders(tmp_path):
    async with open_server(tmp_path / "data", brokers=3, topics={"orders": 6}) as server:
        with trio.fail_after(10):
            for node in range(3):
                client = await connect(server, node)
                meta = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
                await client.aclose()
                assert sorted(b.node_id for b in meta.brokers) == [0, 1, 2]
                assert meta.controller_id == 0
                topics = {t.name: t for t in meta.topics}
                offsets = topics[OFFSETS_TOPIC].partitions
                assert [p.leader_id for p in offsets[:6]] == [0, 1, 2, 0, 1, 2]  # Kafka's assignment, start 0
                assert all(len(p.replica_nodes) == 3 and p.isr_nodes == p.replica_nodes for p in offsets)
                orders = topics["orders"].partitions
                assert sorted({p.leader_id for p in orders}) == [0, 1, 2]  # spread over the brokers
                assert all(len(p.replica_nodes) == 1 and p.leader_epoch == 0 for p in orders)


async def test_group_apis_answer_only_at_the_coordinator(tmp_path):
    async with open_server(tmp_path / "data", brokers=3, topics={"orders": 1}) as server:
        with trio.fail_after(10):
            clients = [await connect(server, n) for n in range(3)]
            answers = {await coordinator(c) for c in clients}
            assert len(answers) == 1
            ((error, node, port),) = answers
            assert error == ErrorCode.NONE and node == server.cluster.leader(OFFSETS_TOPIC, partition_for(GROUP))
            assert port == server.brokers[node].advertised_port
            for n, client in enumerate(clients):
                r = await client.request(ApiKey.OFFSET_COMMIT, 8, commit(5))
                expected = ErrorCode.NONE if n == node else ErrorCode.NOT_COORDINATOR
                assert r.topics[0].partitions[0].error_code == expected, n
                join = JoinGroupRequest(
                    group_id=GROUP,
                    session_timeout_ms=10_000,
                    rebalance_timeout_ms=10_000,
                    member_id="",
                    protocol_type="consumer",
                    protocols=[JoinGroupRequestProtocol("range", b"")],
                )
                if n != node:
                    r = await client.request(ApiKey.JOIN_GROUP, 9, join)
                    assert r.error_code == ErrorCode.NOT_COORDINATOR
            for client in clients:
                await client.aclose()


async def test_coordinator_broker_down_then_up(tmp_path):
    settings = {"coordinator.load.delay.ms": 500}
    async with open_server(tmp_path / "data", brokers=3, topics={"orders": 1}, settings=settings) as server:
        with trio.fail_after(20):
            await server.runtime.loaded.wait()
            clients = {n: await connect(server, n) for n in range(3)}
            _, old, old_port = await coordinator(clients[0])
            r = await clients[old].request(ApiKey.OFFSET_COMMIT, 8, commit(42))
            assert r.topics[0].partitions[0].error_code == ErrorCode.NONE
            await server.controller.broker_down(old)
            assert await clients[old].closed_by_server()  # its connections are dropped
            try:
                await trio.open_tcp_stream("127.0.0.1", old_port)
                raise AssertionError("a down broker must refuse connections")
            except OSError:
                pass
            other = next(n for n in range(3) if n != old)
            error, new, _ = await coordinator(clients[other])
            assert error == ErrorCode.NONE and new not in (old, -1)
            # The new coordinator loads the partition (stretched to 500 ms): LOAD_IN_PROGRESS meanwhile.
            assert (await fetch_committed(clients[new]))[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
            assert server.control is not None  # the control plane says so too: retry, not "no such group"
            with pytest.raises(ControlError) as refused:
                server.control.group(GROUP)
            assert refused.value.status == 503 and "loading" in refused.value.message
            third = 3 - old - new
            assert (await fetch_committed(clients[third]))[0] == ErrorCode.NOT_COORDINATOR
            await server.runtime.settled(partition_for(GROUP))
            assert await fetch_committed(clients[new]) == (ErrorCode.NONE, 42)
            view = server.control.group(GROUP)
            assert (view.group_id, view.state, view.coordinator) == (GROUP, "Empty", new)
            with pytest.raises(ControlError) as refused:
                server.control.group("no-such-group")
            assert refused.value.status == 404
            epoch = server.cluster.leadership(OFFSETS_TOPIC, partition_for(GROUP)).epoch
            assert epoch == 1
            await server.controller.broker_up(old)  # listens again on its port; leads its partitions again
            back = await RawClient.connect("127.0.0.1", old_port)
            assert (await coordinator(back))[1] == old
            assert server.cluster.leadership(OFFSETS_TOPIC, partition_for(GROUP)).epoch == 2
            await server.runtime.settled(partition_for(GROUP))
            assert await fetch_committed(back) == (ErrorCode.NONE, 42)  # nothing lost across two moves
            for client in [*clients.values(), back]:
                await client.aclose()


async def test_data_path_at_a_non_leader_names_the_current_leader(tmp_path):
    async with open_server(tmp_path / "data", brokers=3, topics={"orders": 1}) as server:
        with trio.fail_after(10):
            leader = server.cluster.leader("orders", 0)
            follower = (leader + 1) % 3
            client = await connect(server, follower)
            batch = encode_batch(0, [Record(None, 1000, b"k", b"v")])
            produce = ProduceRequest(
                acks=-1,
                timeout_ms=1000,
                topic_data=[
                    TopicProduceData(name="orders", partition_data=[PartitionProduceData(index=0, records=batch)])
                ],
            )
            r = await client.request(ApiKey.PRODUCE, 10, produce)
            p = r.responses[0].partition_responses[0]
            assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (leader, 0)  # KIP-951
            assert [(e.node_id, e.port) for e in r.node_endpoints] == [(leader, server.brokers[leader].advertised_port)]
            server.controller.move_leader("orders", 0, follower)  # epoch 1, the follower leads now
            r = await client.request(ApiKey.PRODUCE, 10, produce)
            assert r.responses[0].partition_responses[0].error_code == ErrorCode.NONE
            stale = FetchRequest(
                max_wait_ms=0,
                topics=[
                    FetchTopic(
                        topic="orders",
                        partitions=[
                            FetchPartition(
                                partition=0, current_leader_epoch=0, fetch_offset=0, partition_max_bytes=1 << 20
                            )
                        ],
                    )
                ],
            )
            r = await client.request(ApiKey.FETCH, 12, stale)
            assert r.responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH
            await client.aclose()


async def test_replication_factor_against_live_brokers_and_leaderless_partitions(tmp_path):
    async with open_server(tmp_path / "data", brokers=3) as server:
        with trio.fail_after(10):
            client = await connect(server, 0)

            async def create(name: str, factor: int) -> int:
                r = await client.request(
                    ApiKey.CREATE_TOPICS,
                    7,
                    CreateTopicsRequest(
                        timeout_ms=1000, topics=[CreatableTopic(name=name, num_partitions=2, replication_factor=factor)]
                    ),
                )
                return r.topics[0].error_code

            assert await create("three", 3) == ErrorCode.NONE
            assert await create("four", 4) == ErrorCode.INVALID_REPLICATION_FACTOR
            await server.controller.broker_down(2)
            assert await create("again", 3) == ErrorCode.INVALID_REPLICATION_FACTOR  # two live brokers
            p = partition_for(GROUP)
            server.controller.make_leaderless(OFFSETS_TOPIC, p)
            error, node, _ = await coordinator(client)
            assert (error, node) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)
            meta = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
            offsets = next(t for t in meta.topics if t.name == OFFSETS_TOPIC)
            assert offsets.partitions[p].error_code == ErrorCode.LEADER_NOT_AVAILABLE
            assert sorted(b.node_id for b in meta.brokers) == [0, 1]
            await client.aclose()
