"""The data path in the transcript: Produce, Fetch and ListOffsets over real sockets, each event
carrying one summary per topic-partition (records, bytes, offsets, high watermark), the topic by
name even when Fetch v13+ names it by id; and the text timeline built from them."""

from __future__ import annotations

import io
import json

import pytest
import trio

from coordinator.embed.embedded import open_server
from coordinator.observe.transcript import batch_counts
from coordinator.tools.transcript_render import render
from protocol.api import ApiKey
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.primitives import ZERO_UUID
from storage.batch import Record, encode_batch
from tests.integration.raw_client import RawClient

DEADLINE = 30  # a safety net, never a timing assertion


def batch(*values: bytes) -> bytes:
    return encode_batch(0, [Record(None, 1000 + i, None, v) for i, v in enumerate(values)])


def fetch(partition: int, offset: int, topic_id=None) -> FetchRequest:
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        topics=[
            FetchTopic(
                topic="" if topic_id else "orders",
                topic_id=topic_id or ZERO_UUID,
                partitions=[FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20)],
            )
        ],
    )


@pytest.fixture
async def events(tmp_path):
    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", topics={"orders": 2}, settings={"transcript.file": str(path)}) as server:
        client = await RawClient.connect(server.host, server.port)
        client.client_id = "learner"
        orders_id = server.broker.topics.get("orders").topic_id
        with trio.fail_after(DEADLINE):
            await client.request(
                ApiKey.PRODUCE,
                9,
                ProduceRequest(
                    acks=-1,
                    timeout_ms=5000,
                    topic_data=[
                        TopicProduceData(
                            name="orders",
                            partition_data=[
                                PartitionProduceData(index=0, records=batch(b"a", b"b", b"c")),
                                PartitionProduceData(index=1, records=batch(b"d")),
                            ],
                        )
                    ],
                ),
            )
            await client.request(
                ApiKey.PRODUCE,
                9,
                ProduceRequest(
                    acks=-1,
                    timeout_ms=5000,
                    topic_data=[
                        TopicProduceData(
                            name="orders", partition_data=[PartitionProduceData(index=0, records=batch(b"e", b"f"))]
                        )
                    ],
                ),
            )
            await client.request(ApiKey.FETCH, 12, fetch(0, 1))
            await client.request(ApiKey.FETCH, 16, fetch(1, 1, topic_id=orders_id))  # by id, nothing new
            await client.request(
                ApiKey.LIST_OFFSETS,
                7,
                ListOffsetsRequest(
                    replica_id=-1,
                    topics=[
                        ListOffsetsTopic(
                            name="orders",
                            partitions=[
                                ListOffsetsPartition(partition_index=0, timestamp=-1),
                                ListOffsetsPartition(partition_index=1, timestamp=-2),
                            ],
                        )
                    ],
                ),
            )
        await client.aclose()
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def partitions(events, kind, api):
    return [e["partitions"] for e in events if e["type"] == kind and e["api"] == api]


async def test_each_data_path_event_summarises_its_partitions(events):
    _, found = events
    assert partitions(found, "request", "Produce") == [
        [
            {"topic": "orders", "partition": 0, "records": 3, "bytes": len(batch(b"a", b"b", b"c"))},
            {"topic": "orders", "partition": 1, "records": 1, "bytes": len(batch(b"d"))},
        ],
        [{"topic": "orders", "partition": 0, "records": 2, "bytes": len(batch(b"e", b"f"))}],
    ]
    assert partitions(found, "response", "Produce") == [
        [
            {"topic": "orders", "partition": 0, "base_offset": 0, "error": None},
            {"topic": "orders", "partition": 1, "base_offset": 0, "error": None},
        ],
        [{"topic": "orders", "partition": 0, "base_offset": 3, "error": None}],
    ]
    assert partitions(found, "request", "Fetch") == [
        [{"topic": "orders", "partition": 0, "offset": 1}],
        [{"topic": "orders", "partition": 1, "offset": 1}],
    ]
    by_name, by_id = partitions(found, "response", "Fetch")
    # offset 1 lies inside the first batch (0-2): the broker returns whole batches, both of them
    assert by_name == [
        {
            "topic": "orders",
            "partition": 0,
            "records": 5,
            "bytes": len(batch(b"a", b"b", b"c")) + len(batch(b"e", b"f")),
            "high_watermark": 5,
            "error": None,
        }
    ]
    assert by_id == [{"topic": "orders", "partition": 1, "records": 0, "bytes": 0, "high_watermark": 1, "error": None}]
    assert partitions(found, "request", "ListOffsets") == [
        [{"topic": "orders", "partition": 0, "timestamp": -1}, {"topic": "orders", "partition": 1, "timestamp": -2}]
    ]
    assert partitions(found, "response", "ListOffsets") == [
        [
            {"topic": "orders", "partition": 0, "timestamp": -1, "offset": 5, "error": None},
            {"topic": "orders", "partition": 1, "timestamp": -2, "offset": 0, "error": None},
        ]
    ]
    # other APIs carry no summary
    assert all("partitions" not in e for e in found if e.get("api") == "ApiVersions")


async def test_the_timeline_reads_the_data_path(events):
    path, _ = events
    out = io.StringIO()
    with open(path, encoding="utf-8") as f:
        assert render(f, None, out) == 0
    text = [line.split(None, 1)[1] for line in out.getvalue().splitlines()]
    size = len(batch(b"a", b"b", b"c"))
    assert (
        f"learner      -> Produce v9  orders-0: 3 records, {size} bytes, orders-1: 1 record, {len(batch(b'd'))} bytes"
        in text
    )
    assert "learner      <- Produce  orders-0 at base offset 3" in text
    assert "learner      -> Fetch v16  orders-1 from offset 1" in text
    assert (
        f"learner      <- Fetch  orders-0: 5 records, {size + len(batch(b'e', b'f'))} bytes, high watermark 5" in text
    )
    assert "learner      <- Fetch  orders-1: nothing new, high watermark 1" in text
    assert "learner      -> ListOffsets v7  orders-0 at latest, orders-1 at earliest" in text
    assert "learner      <- ListOffsets  orders-0: latest -> offset 5; orders-1: earliest -> offset 0" in text


def test_batch_counts_stop_at_a_torn_batch():
    two = batch(b"a", b"b") + batch(b"c")
    assert batch_counts(two) == (3, len(two))
    assert batch_counts(two[:-5]) == (2, len(two) - 5)  # the torn second batch is not counted
    assert batch_counts(b"") == (0, 0) and batch_counts(None) == (0, 0)
