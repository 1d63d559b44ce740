"""Blocking helpers that drive a real server over the wire from a test's thread: produce
records, form a one-member consumer group, commit as that member, leave. Built on the tools'
own `Connection`, so they also exercise it."""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.tools.kafka_connection import Connection
from protocol.api import ApiKey
from protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from storage.batch import Record, encode_batch


def connect(bootstrap: str, client_id: str = "test-client") -> Connection:
    host, _, port = bootstrap.rpartition(":")
    return Connection(host, int(port), client_id, timeout=30)


def produce(conn: Connection, topic: str, partition: int, timestamps: list[int]) -> None:
    records = [Record(None, ts, b"k%d" % i, b"v%d" % i) for i, ts in enumerate(timestamps)]
    resp = conn.send(
        ApiKey.PRODUCE,
        9,
        ProduceRequest(
            acks=-1,
            timeout_ms=5000,
            topic_data=[
                TopicProduceData(
                    name=topic, partition_data=[PartitionProduceData(index=partition, records=encode_batch(0, records))]
                )
            ],
        ),
    )
    assert resp.responses[0].partition_responses[0].error_code == 0


@dataclass
class Member:
    group: str
    member_id: str
    generation: int


def join_and_sync(conn: Connection, group: str, topic: str, partitions: list[int]) -> Member:
    """One dynamic member that leads and assigns itself `partitions` of `topic`."""
    sub = encode_subscription(ConsumerProtocolSubscription(topics=[topic]))
    request = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=60000,
        rebalance_timeout_ms=60000,
        member_id="",
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=sub)],
    )
    first = conn.send(ApiKey.JOIN_GROUP, 5, request)
    assert first.error_code == 79  # MEMBER_ID_REQUIRED
    request.member_id = first.member_id
    joined = conn.send(ApiKey.JOIN_GROUP, 5, request)
    assert joined.error_code == 0, joined
    assignment = encode_assignment(ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(topic, partitions)]))
    synced = conn.send(
        ApiKey.SYNC_GROUP,
        3,
        SyncGroupRequest(
            group_id=group,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=assignment)],
        ),
    )
    assert synced.error_code == 0, synced
    return Member(group, joined.member_id, joined.generation_id)


def commit(conn: Connection, member: Member, topic: str, offsets: dict[int, int]) -> None:
    resp = conn.send(
        ApiKey.OFFSET_COMMIT,
        8,
        OffsetCommitRequest(
            group_id=member.group,
            generation_id_or_member_epoch=member.generation,
            member_id=member.member_id,
            topics=[
                OffsetCommitRequestTopic(
                    name=topic,
                    partitions=[
                        OffsetCommitRequestPartition(partition_index=p, committed_offset=o) for p, o in offsets.items()
                    ],
                )
            ],
        ),
    )
    assert all(p.error_code == 0 for t in resp.topics for p in t.partitions), resp


def leave(conn: Connection, member: Member) -> None:
    resp = conn.send(
        ApiKey.LEAVE_GROUP,
        3,
        LeaveGroupRequest(group_id=member.group, members=[MemberIdentity(member_id=member.member_id)]),
    )
    assert resp.error_code == 0
