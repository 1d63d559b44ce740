"""Kafka's answers where kgc used to differ, checked over a real socket (issue: house in order).

Each case names where Kafka decides it: KafkaApis (SyncGroup v5+ needs protocol type and name),
GroupCoordinatorService (empty group ids), OffsetMetadataManager (commits to ""), ClassicGroup
members' clientHost (InetAddress.toString()), GroupMetadataManager.describeGroups (assignments
outside Stable), and the new-member join timeout, a fixed 5 minutes in Kafka and a setting here.
"""

from __future__ import annotations

import uuid

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import SUPPORTED_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.integration.raw_client import RawClient
from tests.integration.test_group_apis import ASSIGNMENT, join, join_request


async def test_sync_group_v5_without_protocol_type_or_name_is_inconsistent(client):
    with trio.fail_after(10):
        member = (await join(client, 5, "sync-null")).member_id
        for type_, name in ((None, "range"), ("consumer", None)):
            r = await client.request(
                ApiKey.SYNC_GROUP,
                5,
                SyncGroupRequest(
                    group_id="sync-null", generation_id=1, member_id=member, protocol_type=type_, protocol_name=name
                ),
            )
            assert r.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        # v4 carries neither: nothing to check, the sync succeeds.
        r = await client.request(
            ApiKey.SYNC_GROUP,
            4,
            SyncGroupRequest(
                group_id="sync-null",
                generation_id=1,
                member_id=member,
                assignments=[SyncGroupRequestAssignment(member, ASSIGNMENT)],
            ),
        )
        assert (r.error_code, r.assignment) == (ErrorCode.NONE, ASSIGNMENT)


async def test_empty_group_id_on_sync_heartbeat_and_leave_is_invalid(client):
    with trio.fail_after(10):
        r = await client.request(
            ApiKey.SYNC_GROUP,
            5,
            SyncGroupRequest(
                group_id="", generation_id=1, member_id="m", protocol_type="consumer", protocol_name="range"
            ),
        )
        assert r.error_code == ErrorCode.INVALID_GROUP_ID
        r = await client.request(ApiKey.HEARTBEAT, 4, HeartbeatRequest(group_id="", generation_id=1, member_id="m"))
        assert r.error_code == ErrorCode.INVALID_GROUP_ID
        for version in range(SUPPORTED_VERSIONS[ApiKey.LEAVE_GROUP][1] + 1):
            request = (
                LeaveGroupRequest(group_id="", member_id="m")
                if version < 3
                else LeaveGroupRequest(group_id="", members=[MemberIdentity(member_id="m")])
            )
            r = await client.request(ApiKey.LEAVE_GROUP, version, request)
            assert (r.error_code, r.members) == (ErrorCode.INVALID_GROUP_ID, []), version


def _commit(generation: int, member: str = "", topic_id: uuid.UUID | None = None) -> OffsetCommitRequest:
    topic = OffsetCommitRequestTopic(name="orders", partitions=[OffsetCommitRequestPartition(0, 7)])
    if topic_id is not None:  # v10 names the topic by id
        topic.topic_id = topic_id
    return OffsetCommitRequest(group_id="", generation_id_or_member_epoch=generation, member_id=member, topics=[topic])


@pytest.mark.parametrize("version", range(2, SUPPORTED_VERSIONS[ApiKey.OFFSET_COMMIT][1] + 1))
async def test_offset_commit_to_the_empty_group_id(server, client, version):
    topic_id = server.broker.topics.get("orders").topic_id if version >= 10 else None
    with trio.fail_after(10):
        r = await client.request(ApiKey.OFFSET_COMMIT, version, _commit(1, "m", topic_id))
        expected = ErrorCode.GROUP_ID_NOT_FOUND if version >= 9 else ErrorCode.ILLEGAL_GENERATION
        assert r.topics[0].partitions[0].error_code == expected
        r = await client.request(ApiKey.OFFSET_COMMIT, version, _commit(-1, topic_id=topic_id))  # a simple group
        assert r.topics[0].partitions[0].error_code == ErrorCode.NONE


async def test_describe_shows_client_host_as_kafka_writes_it_and_keeps_assignments_in_a_rebalance(server):
    a = await RawClient.connect(server.host, server.port)
    b = await RawClient.connect(server.host, server.port)
    with trio.fail_after(10):
        joined = {}

        async def member(name, client):
            joined[name] = await join(client, 5, "desc")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(member, "a", a)
            nursery.start_soon(member, "b", b)
        leader = joined["a"] if joined["a"].member_id == joined["a"].leader else joined["b"]
        ids = sorted(j.member_id for j in joined.values())
        follower_client, leader_client = (b, a) if leader is joined["a"] else (a, b)
        follower = next(m for m in ids if m != leader.member_id)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                follower_client.request,
                ApiKey.SYNC_GROUP,
                3,
                SyncGroupRequest(group_id="desc", generation_id=1, member_id=follower),
            )
            await trio.testing.wait_all_tasks_blocked()
            await leader_client.request(
                ApiKey.SYNC_GROUP,
                3,
                SyncGroupRequest(
                    group_id="desc",
                    generation_id=1,
                    member_id=leader.member_id,
                    assignments=[SyncGroupRequestAssignment(m, ASSIGNMENT + m.encode()) for m in ids],
                ),
            )
        # The leader rejoins: a rebalance that starts from Stable (its JoinGroup parks).
        async with trio.open_nursery() as nursery:
            nursery.start_soon(leader_client.request, ApiKey.JOIN_GROUP, 5, join_request("desc", leader.member_id))
            await trio.testing.wait_all_tasks_blocked()
            probe = await RawClient.connect(server.host, server.port)
            described = await probe.request(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=["desc"]))
            await probe.aclose()
            nursery.cancel_scope.cancel()
    [group] = described.groups
    assert group.group_state == "PreparingRebalance"
    assert {m.member_id: (m.client_host, m.member_metadata, m.member_assignment) for m in group.members} == {
        m: ("/127.0.0.1", b"", ASSIGNMENT + m.encode()) for m in ids
    }
    await a.aclose()
    await b.aclose()


async def test_new_member_join_timeout_is_a_setting(tmp_path):
    """A new member parked in a rebalance whose old member never rejoins is dropped after
    group.classic.new.member.join.timeout.ms (Kafka: fixed 5 minutes), not the rebalance timeout."""
    settings = {"group.classic.new.member.join.timeout.ms": 300}
    async with open_server(tmp_path / "data", settings=settings) as server:
        old = await RawClient.connect(server.host, server.port)
        new = await RawClient.connect(server.host, server.port)
        with trio.fail_after(10):
            first = await join(old, 5, "slow")
            await old.request(
                ApiKey.SYNC_GROUP,
                3,
                SyncGroupRequest(
                    group_id="slow",
                    generation_id=1,
                    member_id=first.member_id,
                    assignments=[SyncGroupRequestAssignment(first.member_id, ASSIGNMENT)],
                ),
            )
            r = await new.request(ApiKey.JOIN_GROUP, 5, join_request("slow"))
            assert r.error_code == ErrorCode.MEMBER_ID_REQUIRED
            # `old` (rebalance timeout 10 s) never rejoins; the new member's join is answered at 300 ms.
            r = await new.request(ApiKey.JOIN_GROUP, 5, join_request("slow", r.member_id))
        assert r.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        await old.aclose()
        await new.aclose()
