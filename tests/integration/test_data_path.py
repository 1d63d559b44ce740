"""The data path over real sockets: our own batches through Produce/Fetch/ListOffsets at every
version, and data surviving a restart (real clients: test_data_path_clients.py). Waits are bounded
by deadlines (trio.fail_after); nothing sleeps for a fixed time.
"""

from __future__ import annotations

import uuid

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.delete_topics import DeleteTopicsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest
from protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.primitives import ZERO_UUID
from storage.batch import Record, encode_batch, iter_records
from tests.integration.raw_client import RawClient

DEADLINE = 30  # seconds: a safety net, never a timing assertion


def _batch(*values: bytes, ts: int = 1_000, **kw) -> bytes:
    return encode_batch(0, [Record(None, ts + i, b"k-" + v, v) for i, v in enumerate(values)], **kw)


def _produce(topic: str, partition: int, records: bytes, acks: int = -1) -> ProduceRequest:
    return ProduceRequest(
        acks=acks,
        timeout_ms=5000,
        topic_data=[
            TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition, records=records)])
        ],
    )


def _fetch(
    topic: str,
    partition: int,
    offset: int,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    isolation_level: int = 0,
    topic_id=None,
) -> FetchRequest:
    """A one-partition fetch; v13+ name the topic by `topic_id` instead."""
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=1 << 20,
        isolation_level=isolation_level,
        topics=[
            FetchTopic(
                topic=topic,
                topic_id=topic_id or ZERO_UUID,
                partitions=[FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20)],
            )
        ],
    )


def _values(records: bytes | None) -> list[bytes | None]:
    out, pos, data = [], 0, records or b""
    while len(data) - pos >= 12:
        size = int.from_bytes(data[pos + 8 : pos + 12], "big") + 12
        out += [r.value for r in iter_records(data[pos : pos + size])]
        pos += size
    return out


@pytest.mark.parametrize(
    ("produce_version", "fetch_version", "isolation"), [(3, 4, 0), (7, 11, 1), (9, 12, 0), (10, 12, 1)]
)  # 1: kafkajs' READ_COMMITTED
async def test_produce_then_fetch_round_trip(client, produce_version, fetch_version, isolation):
    with trio.fail_after(DEADLINE):
        sent = await client.request(ApiKey.PRODUCE, produce_version, _produce("orders", 1, _batch(b"a", b"b")))
        [[answer]] = [t.partition_responses for t in sent.responses]
        assert (answer.error_code, answer.base_offset) == (ErrorCode.NONE, 0)
        got = await client.request(ApiKey.FETCH, fetch_version, _fetch("orders", 1, 0, isolation_level=isolation))
        [[part]] = [t.partitions for t in got.responses]
        assert (part.error_code, part.high_watermark, part.last_stable_offset) == (ErrorCode.NONE, 2, 2)
        assert _values(part.records) == [b"a", b"b"]


async def test_a_long_poll_is_woken_by_a_produce_on_another_connection(server, client):
    producer = await RawClient.connect(server.host, server.port)
    got = {}

    async def consume():
        got["fetch"] = await client.request(
            ApiKey.FETCH, 12, _fetch("orders", 0, 0, max_wait_ms=DEADLINE * 2000, min_bytes=1)
        )

    with trio.fail_after(DEADLINE):  # half of max_wait_ms: only the produce can end the wait in time
        async with trio.open_nursery() as nursery:
            nursery.start_soon(consume)
            await producer.request(ApiKey.PRODUCE, 9, _produce("orders", 0, _batch(b"wake up")))
    await producer.aclose()
    assert _values(got["fetch"].responses[0].partitions[0].records) == [b"wake up"]


async def test_acks_zero_gets_no_response_but_is_stored(client):
    with trio.fail_after(DEADLINE):
        cid, frame = client.encode(ApiKey.PRODUCE, 9, _produce("orders", 2, _batch(b"fire"), acks=0))
        await client.send_raw(frame)
        # The next answer on the connection is the fetch's: the produce got none.
        got = await client.request(ApiKey.FETCH, 12, _fetch("orders", 2, 0, max_wait_ms=10_000, min_bytes=1))
        assert _values(got.responses[0].partitions[0].records) == [b"fire"]


async def test_a_failed_acks_zero_produce_closes_the_connection(client):
    with trio.fail_after(DEADLINE):
        bad = bytearray(_batch(b"x"))
        bad[-1] ^= 1
        _, frame = client.encode(ApiKey.PRODUCE, 9, _produce("orders", 0, bytes(bad), acks=0))
        await client.send_raw(frame)
        assert await client.closed_by_server()


async def test_produce_errors_per_partition(client):
    with trio.fail_after(DEADLINE):
        bad = bytearray(_batch(b"x"))
        bad[-1] ^= 1
        request = ProduceRequest(
            acks=1,
            timeout_ms=1000,
            topic_data=[
                TopicProduceData(
                    name="orders",
                    partition_data=[
                        PartitionProduceData(index=0, records=bytes(bad)),
                        PartitionProduceData(index=9, records=_batch(b"y")),
                        PartitionProduceData(index=1, records=_batch(b"z")),
                    ],
                ),
                TopicProduceData(name="missing", partition_data=[PartitionProduceData(index=0, records=_batch(b"w"))]),
            ],
        )
        response = await client.request(ApiKey.PRODUCE, 9, request)
        codes = [p.error_code for t in response.responses for p in t.partition_responses]
        assert codes == [
            ErrorCode.CORRUPT_MESSAGE,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ErrorCode.NONE,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ]
        bad_acks = await client.request(ApiKey.PRODUCE, 9, _produce("orders", 1, _batch(b"q"), acks=2))
        assert bad_acks.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS


async def test_list_offsets_init_producer_id_and_leader_epochs(client):
    with trio.fail_after(DEADLINE):
        await client.request(ApiKey.PRODUCE, 9, _produce("orders", 0, _batch(b"a", b"b", ts=5_000)))
        for version in (1, 2, 7):
            request = ListOffsetsRequest(
                replica_id=-1,
                topics=[
                    ListOffsetsTopic(
                        name="orders",
                        partitions=[ListOffsetsPartition(partition_index=0, timestamp=ts) for ts in (-2, -1, 5_001)],
                    )
                ],
            )
            response = await client.request(ApiKey.LIST_OFFSETS, version, request)
            found = [(p.offset, p.timestamp) for p in response.topics[0].partitions]
            assert found == [(0, -1), (2, -1), (1, 5_001)]
        ids = set()
        for version in (0, 4):
            answer = await client.request(
                ApiKey.INIT_PRODUCER_ID,
                version,
                InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=1000),
            )
            assert (answer.error_code, answer.producer_epoch) == (ErrorCode.NONE, 0)
            ids.add(answer.producer_id)
        assert len(ids) == 2
        txn = await client.request(
            ApiKey.INIT_PRODUCER_ID, 4, InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=1000)
        )
        assert (txn.error_code, txn.producer_epoch) == (ErrorCode.NONE, 0) and txn.producer_id not in ids
        epochs = await client.request(
            ApiKey.OFFSET_FOR_LEADER_EPOCH,
            4,
            OffsetForLeaderEpochRequest(
                topics=[
                    OffsetForLeaderTopic(
                        topic="orders", partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=0)]
                    )
                ]
            ),
        )
        # The current leader epoch (0 until a leader change).
        assert [(p.leader_epoch, p.end_offset) for p in epochs.topics[0].partitions] == [(0, 2)]


async def test_create_and_delete_topics(client):
    with trio.fail_after(DEADLINE):
        request = CreateTopicsRequest(
            timeout_ms=1000,
            topics=[
                CreatableTopic(
                    name="fresh",
                    num_partitions=2,
                    replication_factor=1,
                    configs=[CreatableTopicConfig(name="retention.ms", value="60000")],
                ),
                CreatableTopic(name="orders", num_partitions=1, replication_factor=1),
                CreatableTopic(name="triple", num_partitions=1, replication_factor=3),
            ],
        )
        created = await client.request(ApiKey.CREATE_TOPICS, 7, request)
        assert [t.error_code for t in created.topics] == [
            ErrorCode.NONE,
            ErrorCode.TOPIC_ALREADY_EXISTS,
            ErrorCode.INVALID_REPLICATION_FACTOR,
        ]
        fresh = created.topics[0]
        assert (fresh.num_partitions, fresh.replication_factor) == (2, 1) and fresh.topic_id.int != 0
        assert {c.name: c.value for c in fresh.configs}["retention.ms"] == "60000"
        sent = await client.request(ApiKey.PRODUCE, 9, _produce("fresh", 1, _batch(b"hi")))
        assert sent.responses[0].partition_responses[0].error_code == ErrorCode.NONE
        deleted = await client.request(
            ApiKey.DELETE_TOPICS, 6, DeleteTopicsRequest(topics=[_delete_state(fresh.topic_id)], timeout_ms=1000)
        )
        assert [(r.name, r.error_code) for r in deleted.responses] == [("fresh", ErrorCode.NONE)]
        again = await client.request(
            ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=["fresh"], timeout_ms=1000)
        )
        assert again.responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        meta = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
        assert "fresh" not in {t.name for t in meta.topics}


def _delete_state(topic_id):
    from protocol.messages.delete_topics import DeleteTopicState

    return DeleteTopicState(name=None, topic_id=topic_id)


async def test_data_survives_a_restart_on_the_same_dir(tmp_path):
    with trio.fail_after(DEADLINE):
        async with open_server(tmp_path / "data", topics={"keep": 1}) as first:
            c = await RawClient.connect(first.host, first.port)
            await c.request(ApiKey.PRODUCE, 9, _produce("keep", 0, _batch(b"one", b"two")))
            await c.aclose()
        async with open_server(tmp_path / "data") as second:
            c = await RawClient.connect(second.host, second.port)
            got = await c.request(ApiKey.FETCH, 12, _fetch("keep", 0, 0))
            assert _values(got.responses[0].partitions[0].records) == [b"one", b"two"]
            more = await c.request(ApiKey.PRODUCE, 9, _produce("keep", 0, _batch(b"three")))
            assert more.responses[0].partition_responses[0].base_offset == 2
            await c.aclose()
        assert (tmp_path / "data" / "keep-0" / ".kafka_cleanshutdown").exists()


async def test_every_advertised_version_of_the_data_path_apis_answers(server, client):
    from protocol.api import SUPPORTED_VERSIONS

    def versions(key):
        low, high = SUPPORTED_VERSIONS[key]
        return range(max(low, 3) if key == ApiKey.PRODUCE else low, high + 1)

    with trio.fail_after(DEADLINE):
        for v in versions(ApiKey.PRODUCE):
            sent = await client.request(ApiKey.PRODUCE, v, _produce("orders", 0, _batch(b"v%d" % v)))
            assert sent.responses[0].partition_responses[0].error_code == ErrorCode.NONE, v
        produced = len(versions(ApiKey.PRODUCE))
        orders_id = server.broker.topics.get("orders").topic_id
        for v in versions(ApiKey.FETCH):
            got = await client.request(ApiKey.FETCH, v, _fetch("orders", 0, 0, topic_id=orders_id))
            assert len(_values(got.responses[0].partitions[0].records)) == produced, v
            if v >= 13:
                assert got.responses[0].topic_id == orders_id
        unknown = await client.request(ApiKey.FETCH, 13, _fetch("", 0, 0, topic_id=uuid.uuid4()))
        assert unknown.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
        for v in versions(ApiKey.LIST_OFFSETS):
            request = ListOffsetsRequest(
                replica_id=-1,
                topics=[
                    ListOffsetsTopic(name="orders", partitions=[ListOffsetsPartition(partition_index=0, timestamp=-1)])
                ],
            )
            answer = await client.request(ApiKey.LIST_OFFSETS, v, request)
            assert answer.topics[0].partitions[0].offset == produced, v
        for v in versions(ApiKey.INIT_PRODUCER_ID):
            answer = await client.request(ApiKey.INIT_PRODUCER_ID, v, InitProducerIdRequest(transactional_id=None))
            assert answer.error_code == ErrorCode.NONE and answer.producer_id >= 0, v
        for v in versions(ApiKey.OFFSET_FOR_LEADER_EPOCH):
            answer = await client.request(
                ApiKey.OFFSET_FOR_LEADER_EPOCH,
                v,
                OffsetForLeaderEpochRequest(
                    topics=[
                        OffsetForLeaderTopic(
                            topic="orders", partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=0)]
                        )
                    ]
                ),
            )
            assert answer.topics[0].partitions[0].end_offset == produced, v
        for v in versions(ApiKey.CREATE_TOPICS):
            answer = await client.request(
                ApiKey.CREATE_TOPICS,
                v,
                CreateTopicsRequest(
                    timeout_ms=1000, topics=[CreatableTopic(name=f"v{v}", num_partitions=1, replication_factor=1)]
                ),
            )
            assert answer.topics[0].error_code == ErrorCode.NONE, v
        for v in versions(ApiKey.DELETE_TOPICS):
            name = f"v{v + 1}"  # CreateTopics made v2..v7
            request = (
                DeleteTopicsRequest(topics=[_delete_state_by_name(name)], timeout_ms=1000)
                if v >= 6
                else DeleteTopicsRequest(topic_names=[name], timeout_ms=1000)
            )
            answer = await client.request(ApiKey.DELETE_TOPICS, v, request)
            assert answer.responses[0].error_code == ErrorCode.NONE, v


def _delete_state_by_name(name):
    from protocol.messages.delete_topics import DeleteTopicState

    return DeleteTopicState(name=name)
