"""kgc serve --brokers N --processes: one process per broker, static leaders, the whole cluster in
every Metadata answer, each group served by the process that leads its partition, topics
created, grown, auto-created and deleted through one broker seen through the other, and the
data path's requests to a partition another process leads answered NOT_LEADER_OR_FOLLOWER."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import trio

from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.delete_topics import DeleteTopicsRequest
from protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from storage.batch import Record, encode_batch
from tests.integration.raw_client import RawClient

DEADLINE = 30  # seconds: a safety net against hangs, never a timing assertion


def start(tmp_path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coordinator",
            "serve",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
            "--log-level",
            "WARNING",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
        return [int(c) for c in f.read().split()]


async def test_brokers_in_processes_serve_the_whole_cluster(tmp_path):
    proc = start(tmp_path, "--brokers", "2", "--processes", "--create-topic", "orders:4")
    try:
        line = await trio.to_thread.run_sync(proc.stdout.readline)
        match = re.search(r"bootstrap=127\.0\.0\.1:(\d+),127\.0\.0\.1:(\d+)", line)
        assert match, line
        ports = [int(match.group(1)), int(match.group(2))]
        brokers = children(proc.pid)
        assert len(brokers) == 2  # one process per broker
        with trio.fail_after(DEADLINE):
            client = await RawClient.connect("127.0.0.1", ports[0])
            metadata = await client.request(
                ApiKey.METADATA,
                9,
                MetadataRequest(topics=[MetadataRequestTopic(name="orders")], allow_auto_topic_creation=False),
            )
            assert sorted((b.node_id, b.port) for b in metadata.brokers) == [(0, ports[0]), (1, ports[1])]
            leaders = {p.partition_index: p.leader_id for p in metadata.topics[0].partitions}
            assert sorted(set(leaders.values())) == [0, 1]  # both brokers lead partitions
            created = await client.request(
                ApiKey.CREATE_TOPICS,
                4,
                CreateTopicsRequest(
                    topics=[CreatableTopic(name="later", num_partitions=1, replication_factor=1)], timeout_ms=1000
                ),
            )
            assert created.topics[0].error_code == ErrorCode.NONE
            other = await RawClient.connect("127.0.0.1", ports[1])
            seen = await other.request(  # the other process catches up on Metadata
                ApiKey.METADATA, 9, MetadataRequest(topics=[MetadataRequestTopic(name="later")])
            )
            assert seen.topics[0].error_code == ErrorCode.NONE
            assert seen.topics[0].topic_id == created.topics[0].topic_id
            grown = await other.request(
                ApiKey.CREATE_PARTITIONS,
                2,
                CreatePartitionsRequest(
                    topics=[CreatePartitionsTopic(name="later", count=3, assignments=None)], timeout_ms=1000
                ),
            )
            assert grown.results[0].error_code == ErrorCode.NONE
            auto = await other.request(  # auto-created through broker 1 ...
                ApiKey.METADATA, 9, MetadataRequest(topics=[MetadataRequestTopic(name="auto-made")])
            )
            assert auto.topics[0].error_code == ErrorCode.NONE
            known = await client.request(  # ... both seen through broker 0
                ApiKey.METADATA,
                9,
                MetadataRequest(
                    topics=[MetadataRequestTopic(name="later"), MetadataRequestTopic(name="auto-made")],
                    allow_auto_topic_creation=False,
                ),
            )
            assert [(t.error_code, len(t.partitions)) for t in known.topics] == [
                (ErrorCode.NONE, 3),
                (ErrorCode.NONE, 1),
            ]
            assert known.topics[1].topic_id == auto.topics[0].topic_id
            deleted = await other.request(ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=["later"]))
            assert deleted.responses[0].error_code == ErrorCode.NONE
            gone = await client.request(
                ApiKey.METADATA,
                9,
                MetadataRequest(topics=[MetadataRequestTopic(name="later")], allow_auto_topic_creation=False),
            )
            assert gone.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            await other.aclose()
            served_by = set()
            for n in range(8):  # groups land on both processes
                group = f"group-{n}"
                found = await client.request(ApiKey.FIND_COORDINATOR, 1, FindCoordinatorRequest(key=group))
                assert found.error_code == ErrorCode.NONE and found.port in ports
                served_by.add(found.node_id)
                coordinator = await RawClient.connect("127.0.0.1", found.port)
                committed = await coordinator.request(
                    ApiKey.OFFSET_COMMIT,
                    8,
                    OffsetCommitRequest(
                        group_id=group,
                        topics=[
                            OffsetCommitRequestTopic(
                                name="orders",
                                partitions=[OffsetCommitRequestPartition(partition_index=1, committed_offset=40 + n)],
                            )
                        ],
                    ),
                )
                assert committed.topics[0].partitions[0].error_code == ErrorCode.NONE
                fetched = await coordinator.request(
                    ApiKey.OFFSET_FETCH,
                    5,
                    OffsetFetchRequest(
                        group_id=group, topics=[OffsetFetchRequestTopic(name="orders", partition_indexes=[1])]
                    ),
                )
                assert fetched.topics[0].partitions[0].committed_offset == 40 + n
                await coordinator.aclose()
                other = await RawClient.connect("127.0.0.1", ports[1 - ports.index(found.port)])
                elsewhere = await other.request(
                    ApiKey.OFFSET_COMMIT,
                    8,
                    OffsetCommitRequest(
                        group_id=group,
                        topics=[
                            OffsetCommitRequestTopic(
                                name="orders",
                                partitions=[OffsetCommitRequestPartition(partition_index=1, committed_offset=1)],
                            )
                        ],
                    ),
                )
                assert elsewhere.topics[0].partitions[0].error_code == ErrorCode.NOT_COORDINATOR
                await other.aclose()
            assert served_by == {0, 1}
            await client.aclose()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await trio.to_thread.run_sync(lambda: proc.wait(DEADLINE)) == 0
    for pid in brokers:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


async def data_path_errors(client: RawClient, topic: str, partition: int) -> dict[str, int]:
    """The error code of each data-path request to one partition, through one broker."""
    records = encode_batch(0, [Record(None, 1_000, b"k", b"v")])
    produced = await client.request(
        ApiKey.PRODUCE,
        9,
        ProduceRequest(
            acks=-1,
            timeout_ms=5000,
            topic_data=[
                TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition, records=records)])
            ],
        ),
    )
    fetched = await client.request(
        ApiKey.FETCH,
        12,
        FetchRequest(
            max_wait_ms=0,
            topics=[
                FetchTopic(
                    topic=topic,
                    partitions=[FetchPartition(partition=partition, fetch_offset=0, partition_max_bytes=1024)],
                )
            ],
        ),
    )
    listed = await client.request(
        ApiKey.LIST_OFFSETS,
        7,
        ListOffsetsRequest(
            topics=[
                ListOffsetsTopic(name=topic, partitions=[ListOffsetsPartition(partition_index=partition, timestamp=-1)])
            ]
        ),
    )
    epochs = await client.request(
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        4,
        OffsetForLeaderEpochRequest(
            replica_id=-1,
            topics=[OffsetForLeaderTopic(topic=topic, partitions=[OffsetForLeaderPartition(partition=partition)])],
        ),
    )
    deleted = await client.request(
        ApiKey.DELETE_RECORDS,
        2,
        DeleteRecordsRequest(
            topics=[
                DeleteRecordsTopic(name=topic, partitions=[DeleteRecordsPartition(partition_index=partition, offset=0)])
            ],
            timeout_ms=5000,
        ),
    )
    producers = await client.request(
        ApiKey.DESCRIBE_PRODUCERS,
        0,
        DescribeProducersRequest(topics=[TopicRequest(name=topic, partition_indexes=[partition])]),
    )
    return {
        "produce": produced.responses[0].partition_responses[0].error_code,
        "fetch": fetched.responses[0].partitions[0].error_code,
        "list_offsets": listed.topics[0].partitions[0].error_code,
        "offset_for_leader_epoch": epochs.topics[0].partitions[0].error_code,
        "delete_records": deleted.topics[0].partitions[0].error_code,
        "describe_producers": producers.topics[0].partitions[0].error_code,
    }


async def test_a_broker_process_answers_not_leader_for_another_process_partition(tmp_path):
    """Kafka's ReplicaManager: the partition exists, this broker does not lead it. The log is open
    in the leader's process only; the answer is NOT_LEADER_OR_FOLLOWER all the same (the client
    refreshes metadata and goes to the leader), not UNKNOWN_TOPIC_OR_PARTITION."""
    proc = start(tmp_path, "--brokers", "2", "--processes", "--create-topic", "orders:2")
    try:
        line = await trio.to_thread.run_sync(proc.stdout.readline)
        match = re.search(r"bootstrap=127\.0\.0\.1:(\d+),127\.0\.0\.1:(\d+)", line)
        assert match, line
        ports = [int(match.group(1)), int(match.group(2))]
        with trio.fail_after(DEADLINE):
            clients = [await RawClient.connect("127.0.0.1", port) for port in ports]
            metadata = await clients[0].request(
                ApiKey.METADATA,
                9,
                MetadataRequest(topics=[MetadataRequestTopic(name="orders")], allow_auto_topic_creation=False),
            )
            leaders = {p.partition_index: p.leader_id for p in metadata.topics[0].partitions}
            assert sorted(leaders.values()) == [0, 1]
            for partition, leader in leaders.items():
                served = await data_path_errors(clients[leader], "orders", partition)
                assert set(served.values()) == {ErrorCode.NONE}, served
                refused = await data_path_errors(clients[1 - leader], "orders", partition)
                assert set(refused.values()) == {ErrorCode.NOT_LEADER_OR_FOLLOWER}, refused
            missing = await data_path_errors(clients[0], "orders", 2)  # no such partition: still unknown
            assert set(missing.values()) == {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}, missing
            for client in clients:
                await client.aclose()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await trio.to_thread.run_sync(lambda: proc.wait(DEADLINE)) == 0


async def test_processes_refuse_the_manual_clock(tmp_path):
    proc = start(tmp_path, "--brokers", "2", "--processes", "--control-port", "0", "--set", "clock.mode=manual")
    _, err = await trio.to_thread.run_sync(lambda: proc.communicate(timeout=DEADLINE))
    assert proc.returncode == 2 and "clock.mode=manual needs every broker in one process" in err
