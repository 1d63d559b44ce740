"""Share groups over real sockets: two members join with ShareGroupHeartbeat, one acquires with
ShareFetch, and bad acknowledgements and sessions get Kafka's codes without changing what is held.
Wiring and bytes; the rules are in tests/coordinator/share and tests/coordinator/groups/share."""

from __future__ import annotations

import uuid

import trio

from coordinator.control.share_control import share_partitions
from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages import share_acknowledge as sa
from protocol.messages import share_fetch as sf
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from storage.batch import Record, encode_batch
from tests.integration.raw_client import RawClient

DEADLINE = 30  # seconds: a safety net, never a timing assertion
ACCEPT = 1


async def _produce(client: RawClient, count: int) -> None:
    records = encode_batch(0, [Record(None, 1_000 + i, None, b"v%d" % i) for i in range(count)])
    request = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[TopicProduceData(name="orders", partition_data=[PartitionProduceData(index=0, records=records)])],
    )
    (topic,) = (await client.request(ApiKey.PRODUCE, 9, request)).responses
    assert topic.partition_responses[0].error_code == ErrorCode.NONE


async def _join(client: RawClient, member: str) -> None:
    """Heartbeat until the member is assigned partition 0 (answered once it is initialized)."""
    epoch = 0
    while True:
        request = ShareGroupHeartbeatRequest(
            "sg", member, epoch, subscribed_topic_names=["orders"] if not epoch else None
        )
        answer = await client.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, request)
        assert answer.error_code == ErrorCode.NONE, answer
        epoch = answer.member_epoch
        if answer.assignment is not None and answer.assignment.topic_partitions:
            return
        await trio.sleep(0.05)  # the member's next heartbeat (the server answers at once)


def _fetch(
    topic_id: uuid.UUID, member: str, epoch: int, acks: list[sf.AcknowledgementBatch] = ()
) -> sf.ShareFetchRequest:
    partition = sf.FetchPartition(partition_index=0, acknowledgement_batches=list(acks))
    return sf.ShareFetchRequest(
        group_id="sg",
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=0,
        min_bytes=1,
        max_records=500,
        batch_size=500,
        topics=[sf.FetchTopic(topic_id=topic_id, partitions=[partition])] if epoch == 0 else [],
    )


def _ack(
    topic_id: uuid.UUID, member: str, epoch: int, first: int, last: int, kind: int = ACCEPT
) -> sa.ShareAcknowledgeRequest:
    batch = sa.AcknowledgementBatch(first_offset=first, last_offset=last, acknowledge_types=[kind])
    partition = sa.AcknowledgePartition(partition_index=0, acknowledgement_batches=[batch])
    return sa.ShareAcknowledgeRequest(
        group_id="sg",
        member_id=member,
        share_session_epoch=epoch,
        topics=[sa.AcknowledgeTopic(topic_id=topic_id, partitions=[partition])],
    )


def _partition_error(answer: sa.ShareAcknowledgeResponse) -> tuple[int, int]:
    (topic,) = answer.responses
    (partition,) = topic.partitions
    return answer.error_code, partition.error_code


async def test_bad_acknowledgements_and_sessions_get_kafkas_codes_and_change_nothing(tmp_path):
    async with open_server(tmp_path / "data", topics={"orders": 1}) as server:
        server.share_settings.auto_offset_reset = "earliest"
        topic_id = server.broker.topics.get("orders").topic_id
        a = await RawClient.connect(server.host, server.port)
        b = await RawClient.connect(server.host, server.port)
        member_a, member_b = str(uuid.uuid4()), str(uuid.uuid4())
        with trio.fail_after(DEADLINE):
            await _produce(a, 10)
            await _join(a, member_a)
            await _join(b, member_b)  # two members, one partition: both are assigned it
            fetched = await a.request(ApiKey.SHARE_FETCH, 1, _fetch(topic_id, member_a, 0))
            acquired = fetched.responses[0].partitions[0].acquired_records
            assert [(r.first_offset, r.last_offset, r.delivery_count) for r in acquired] == [(0, 9, 1)]
            empty = await b.request(ApiKey.SHARE_FETCH, 1, _fetch(topic_id, member_b, 0))
            assert empty.error_code == ErrorCode.NONE
            assert all(not p.acquired_records for t in empty.responses for p in t.partitions)
            before = share_partitions(server.shares, "sg")

            bad = {
                "acquired by another member": (b, _ack(topic_id, member_b, 1, 0, 9)),
                "past the end": (a, _ack(topic_id, member_a, 1, 20, 25)),
                "stale session epoch": (a, _ack(topic_id, member_a, 7, 0, 9)),
                "epoch 0 on ShareAcknowledge": (a, _ack(topic_id, member_a, 0, 0, 9)),
                "no such session": (b, _ack(topic_id, str(uuid.uuid4()), 1, 0, 9)),
                "unknown topic id": (a, _ack(uuid.uuid4(), member_a, 2, 0, 9)),  # "past the end" used epoch 1
            }
            codes = {}
            for name, (client, request) in bad.items():
                answer = await client.request(ApiKey.SHARE_ACKNOWLEDGE, 1, request)
                codes[name] = answer.error_code if answer.error_code else _partition_error(answer)[1]
            assert codes == {
                "acquired by another member": ErrorCode.INVALID_RECORD_STATE,
                "past the end": ErrorCode.INVALID_REQUEST,  # Kafka: "past acquired records"
                "stale session epoch": ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                "epoch 0 on ShareAcknowledge": ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                "no such session": ErrorCode.SHARE_SESSION_NOT_FOUND,
                "unknown topic id": ErrorCode.UNKNOWN_TOPIC_ID,
            }
            assert share_partitions(server.shares, "sg") == before  # nothing changed hands

            # A group whose share-partitions nobody initialized (no member ever joined): the share
            # coordinator refuses the read (INVALID_REQUEST, Kafka's maybeGetReadStateError) and
            # Kafka's fetchPersisterError makes that UNKNOWN_SERVER_ERROR for the partition.
            stranger = _fetch(topic_id, str(uuid.uuid4()), 0)
            stranger.group_id = "nobody-joined"
            (part,) = (await b.request(ApiKey.SHARE_FETCH, 1, stranger)).responses[0].partitions
            assert (part.error_code, part.acquired_records) == (ErrorCode.UNKNOWN_SERVER_ERROR, [])

            # Member a still holds all ten and accepts them: the start offset moves past them.
            done = await a.request(ApiKey.SHARE_ACKNOWLEDGE, 1, _ack(topic_id, member_a, 3, 0, 9))
            assert _partition_error(done) == (ErrorCode.NONE, ErrorCode.NONE)
        await a.aclose()
        await b.aclose()


async def test_a_moved_leader_is_named_with_its_endpoint(tmp_path):
    """KIP-951 as ShareFetch answers it: NOT_LEADER_OR_FOLLOWER with the current leader and its
    endpoint, so the client goes there without a metadata round trip."""
    async with open_server(tmp_path / "data", topics={"orders": 1}, brokers=2) as server:
        server.share_settings.auto_offset_reset = "earliest"
        topic_id = server.broker.topics.get("orders").topic_id
        leader = server.broker.cluster.leadership("orders", 0).leader
        other = 1 - leader
        assert server.control is not None
        with trio.fail_after(DEADLINE):
            moved = await server.control.move_leader("orders", 0, other)
            asked = server.brokers[leader]
            client = await RawClient.connect(asked.advertised_host, asked.advertised_port)
            answer = await client.request(ApiKey.SHARE_FETCH, 1, _fetch(topic_id, str(uuid.uuid4()), 0))
            (part,) = answer.responses[0].partitions
            assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (other, moved.leader_epoch)
            target = server.brokers[other]
            assert [(e.node_id, e.host, e.port) for e in answer.node_endpoints] == [
                (other, target.advertised_host, target.advertised_port)
            ]
            await client.aclose()
