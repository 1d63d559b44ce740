"""The Kafka 4.2/4.3 group API versions with real clients, and which client speaks which.

What each client here negotiates (read from the server's transcript; ApiVersions picks the
highest version both sides know): confluent-kafka 2.16 / librdkafka 2.16 OffsetCommit 9,
OffsetFetch 9, ListGroups 5, DescribeGroups 5, ConsumerGroupHeartbeat 1, ConsumerGroupDescribe 0;
kafka-python 3.0 consumer OffsetCommit/OffsetFetch 8, its admin ListGroups 5 and DescribeGroups 6,
and its protocol layer (Kafka 4.3's JSON) OffsetCommit/OffsetFetch 10; @platformatic/kafka 1.35
OffsetCommit/OffsetFetch 9; kafkajs 2.2.4 OffsetCommit 5 / OffsetFetch 4; aiokafka 0.14
OffsetCommit/OffsetFetch 3. No consumer here commits by topic id yet, so v10 is driven through
kafka-python's own encoders, in one group with librdkafka's v9 commits by name.
"""

from __future__ import annotations

import collections
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient
from kafka.protocol.consumer import OffsetCommitRequest, OffsetFetchRequest

from coordinator.embed.embedded import EmbeddedServer
from interop.clients.consumer_protocol import FAST_SETTINGS
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
ZERO = uuid.UUID(int=0)


def _versions(transcript: Path) -> dict[tuple[str, str], set[int]]:
    seen: dict[tuple[str, str], set[int]] = collections.defaultdict(set)
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "request":
            seen[(event["client"], event["api"])].add(event["version"])
    return seen


def _kafka_python(admin: KafkaAdminClient, request: Any) -> Any:
    """One request through kafka-python's own connection (its version negotiation and codec)."""

    async def send() -> Any:
        return await admin._manager.send(request, node_id=0)

    return admin._manager.run(send)


def test_both_generations_of_clients_in_one_group(tmp_path):
    """librdkafka (consumer protocol) commits by name at v9; kafka-python's protocol layer fetches
    the same offsets by id at v10 and commits by id, a zero and an unknown id answering
    UNKNOWN_TOPIC_ID; librdkafka's AdminClient reads the v10 commit back by name. kafka-python's
    admin lists with the v5 filters and describes at v6 (GROUP_ID_NOT_FOUND with its message)."""
    transcript = tmp_path / "t.jsonl"
    settings = {**FAST_SETTINGS, "transcript.file": str(transcript)}
    with EmbeddedServer(tmp_path / "data", topics={"t": 3}, settings=settings) as server:
        producer = Producer({"bootstrap.servers": server.bootstrap})
        for i in range(6):
            producer.produce("t", b"v", partition=i % 3)
        producer.flush(10)

        consumer = Consumer(
            {
                "bootstrap.servers": server.bootstrap,
                "group.id": "cg",
                "group.protocol": "consumer",
                "client.id": "rdk",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe(["t"])
        got: list[Any] = []
        wait_until(
            lambda: got.extend(m for m in [consumer.poll(0.1)] if m and not m.error()) or len(got) >= 6, DEADLINE
        )
        consumer.commit(asynchronous=False)

        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="kp")
        try:
            # A v10 client learns the topic id from Metadata, as any client would.
            topic_id = uuid.UUID(admin.describe_topics(["t"])[0]["topic_id"])
            Topics = OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics
            fetch = OffsetFetchRequest(
                groups=[
                    OffsetFetchRequest.OffsetFetchRequestGroup(
                        group_id="cg", topics=[Topics(topic_id=topic_id, partition_indexes=[0, 1, 2])]
                    )
                ],
                min_version=10,
            )
            (group,) = _kafka_python(admin, fetch).groups
            assert [
                (t.topic_id, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in group.topics
            ] == [(topic_id, [(0, 2), (1, 2), (2, 2)])]

            T = OffsetCommitRequest.OffsetCommitRequestTopic
            P = T.OffsetCommitRequestPartition
            commit = OffsetCommitRequest(
                group_id="simple",
                generation_id_or_member_epoch=-1,
                member_id="",
                topics=[
                    T(topic_id=topic_id, partitions=[P(partition_index=0, committed_offset=5)]),
                    T(topic_id=ZERO, partitions=[P(partition_index=1, committed_offset=5)]),
                    T(topic_id=uuid.uuid4(), partitions=[P(partition_index=2, committed_offset=5)]),
                    T(topic_id=topic_id, partitions=[P(partition_index=1, committed_offset=6)]),
                ],
                min_version=10,
            )
            unknown = commit.topics[2].topic_id
            answered = _kafka_python(admin, commit)
            # One entry per id, in first-seen order: the errors first (Kafka's OffsetCommitResponse
            # builder), then the committed topic with both its entries merged. kafka-python reads
            # the zero id as None.
            assert [
                (t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answered.topics
            ] == [(None, [(1, 100)]), (unknown, [(2, 100)]), (topic_id, [(0, 0), (1, 0)])]

            listed = admin.list_groups(types_filter=["consumer"], states_filter=["Stable"])
            assert [(g["group_id"], g["group_state"], g["group_type"]) for g in listed] == [
                ("cg", "Stable", "consumer")
            ]
            # The commits to "simple" made it a classic group (Kafka's simple group: no protocol, Empty).
            assert [
                (g["group_id"], g["protocol_type"], g["group_state"])
                for g in admin.list_groups(types_filter=["classic"])
            ] == [("simple", "", "Empty")]
            described = admin.describe_groups(["nope", "cg"])
            assert [(described[g]["group_state"], str(described[g]["error"])) for g in ("nope", "cg")] == [
                ("Dead", "[Error 69] GroupIdNotFoundError: Group nope not found."),
                ("Dead", "[Error 69] GroupIdNotFoundError: Group cg is not a classic group."),
            ]
        finally:
            admin.close()
        rdk_admin = AdminClient({"bootstrap.servers": server.bootstrap, "client.id": "rdk-admin"})
        (future,) = rdk_admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("simple")]).values()
        offsets = sorted((tp.topic, tp.partition, tp.offset) for tp in future.result().topic_partitions)
        assert offsets == [("t", 0, 5), ("t", 1, 6)]
        consumer.close()

    versions = _versions(transcript)
    assert versions[("rdk", "OffsetCommit")] == {9} and versions[("rdk", "ConsumerGroupHeartbeat")] == {1}
    assert versions[("kp", "OffsetCommit")] == {10} and versions[("kp", "OffsetFetch")] == {10}
    assert versions[("kp", "DescribeGroups")] == {6} and versions[("kp", "ListGroups")] == {5}
    assert versions[("rdk-admin", "OffsetFetch")] == {9}
