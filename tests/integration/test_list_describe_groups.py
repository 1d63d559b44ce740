"""Kafka's own ListGroups and DescribeGroups request tests, ported over a real socket at every
version the server advertises: ListGroupsRequestTest.testListGroups (the states filter from v4,
the types filter from v5, classic and consumer groups side by side) and
DescribeGroupsRequestTest.testDescribeGroups (v6, KIP-1043: an unknown group is
GROUP_ID_NOT_FOUND with "Group grp-unknown not found."), plus what DescribeGroups v6 answers for
a consumer group ("... is not a classic group.", GroupMetadataManager.classicGroup).
"""

from __future__ import annotations

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import SUPPORTED_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.integration.raw_client import RawClient

NONE = ErrorCode.NONE


@pytest.fixture
async def client(tmp_path):
    async with open_server(tmp_path, topics={"foo": 3}) as server:
        await server.runtime.loaded.wait()
        c = await RawClient.connect(server.host, server.port)
        c.client_id = "client-id"
        yield c
        await c.aclose()


async def join_classic(client: RawClient, group: str, complete: bool = True, metadata: bytes = b"") -> str:
    """Kafka's joinDynamicConsumerGroupWithOldProtocol: a member id first (KIP-394), then the
    join; SyncGroup (assignment 4, 5, 6) only when the rebalance is to complete."""

    def request(member_id: str) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=group,
            session_timeout_ms=600_000,
            rebalance_timeout_ms=250_000,
            member_id=member_id,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="consumer-range", metadata=metadata)],
        )

    first = await client.request(ApiKey.JOIN_GROUP, 9, request(""))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    joined = await client.request(ApiKey.JOIN_GROUP, 9, request(first.member_id))
    assert joined.error_code == NONE
    if complete:
        synced = await client.request(
            ApiKey.SYNC_GROUP,
            5,
            SyncGroupRequest(
                group_id=group,
                generation_id=joined.generation_id,
                member_id=joined.member_id,
                protocol_type="consumer",
                protocol_name="consumer-range",
                assignments=[SyncGroupRequestAssignment(joined.member_id, bytes([4, 5, 6]))],
            ),
        )
        assert synced.error_code == NONE
    return joined.member_id


async def join_consumer(client: RawClient, group: str, member_id: str) -> str:
    r = await client.request(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        1,
        ConsumerGroupHeartbeatRequest(
            group_id=group,
            member_id=member_id,
            member_epoch=0,
            rebalance_timeout_ms=300_000,
            subscribed_topic_names=["foo"],
            topic_partitions=[],
        ),
    )
    assert r.error_code == NONE
    return member_id


async def leave_consumer(client: RawClient, group: str, member_id: str) -> None:
    r = await client.request(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        1,
        ConsumerGroupHeartbeatRequest(group_id=group, member_id=member_id, member_epoch=-1),
    )
    assert r.error_code == NONE


async def leave_classic(client: RawClient, group: str, member_id: str) -> None:
    r = await client.request(
        ApiKey.LEAVE_GROUP, 5, LeaveGroupRequest(group_id=group, members=[MemberIdentity(member_id=member_id)])
    )
    assert r.error_code == NONE


async def list_groups(client: RawClient, version: int, states=(), types=()) -> list[tuple[str, str, str, str]]:
    r = await client.request(
        ApiKey.LIST_GROUPS, version, ListGroupsRequest(states_filter=list(states), types_filter=list(types))
    )
    assert r.error_code == NONE
    return [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in r.groups]


async def test_list_groups(client):
    """ListGroupsRequestTest.testListGroups with the consumer protocol on: grp-1 Stable, grp-2
    CompletingRebalance, grp-3 Empty (classic); grp-4 Stable, grp-5 Reconciling, grp-6 Empty
    (consumer). Below v4 no state is answered, below v5 no type; filters need v4 / v5."""
    with trio.fail_after(30):
        for v in range(SUPPORTED_VERSIONS[ApiKey.LIST_GROUPS][1] + 1):

            def listed(group: str, state: str, kind: str, v: int = v) -> tuple[str, str, str, str]:
                return (group, "consumer", state if v >= 4 else "", kind if v >= 5 else "")

            m1 = await join_classic(client, "grp-1")
            r1 = listed("grp-1", "Stable", "classic")
            m2 = await join_classic(client, "grp-2", complete=False)
            r2 = listed("grp-2", "CompletingRebalance", "classic")
            await leave_classic(client, "grp-3", await join_classic(client, "grp-3"))
            r3 = listed("grp-3", "Empty", "classic")
            m4 = await join_consumer(client, "grp-4", "m4")
            r4 = listed("grp-4", "Stable", "consumer")
            m5a = await join_consumer(client, "grp-5", "m5a")
            m5b = await join_consumer(client, "grp-5", "m5b")
            r5 = listed("grp-5", "Reconciling", "consumer")
            await leave_consumer(client, "grp-6", await join_consumer(client, "grp-6", "m6"))
            r6 = listed("grp-6", "Empty", "consumer")

            assert set(await list_groups(client, v)) == {r1, r2, r3, r4, r5, r6}, v
            if v >= 4:
                assert set(await list_groups(client, v, states=["Stable"])) == {r4, r1}
                assert set(await list_groups(client, v, states=["CompletingRebalance", "Reconciling"])) == {r2, r5}
                assert set(await list_groups(client, v, states=["Stable", "Empty", "Empty"])) == {r4, r1, r3, r6}
                assert await list_groups(client, v, states=["Assigning"]) == []
                # Kafka compares states lower-case.
                assert set(await list_groups(client, v, states=["STABLE"])) == {r4, r1}
            if v >= 5:
                assert await list_groups(client, v, states=["Stable"], types=["consumer"]) == [r4]
                assert set(await list_groups(client, v, types=["consumer"])) == {r4, r5, r6}
                assert set(await list_groups(client, v, types=["classic"])) == {r1, r2, r3}
                assert await list_groups(client, v, types=["share"]) == []
                assert await list_groups(client, v, types=["no-such-type"]) == []

            await leave_classic(client, "grp-1", m1)
            await leave_classic(client, "grp-2", m2)
            await leave_consumer(client, "grp-4", m4)
            await leave_consumer(client, "grp-5", m5a)
            await leave_consumer(client, "grp-5", m5b)
            groups = [f"grp-{n}" for n in range(1, 7)]
            deleted = await client.request(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=groups))
            assert [(d.group_id, d.error_code) for d in deleted.results] == [(g, NONE) for g in groups]
            assert await list_groups(client, v) == []


async def test_describe_groups(client):
    """DescribeGroupsRequestTest.testDescribeGroups at every version, and a consumer group."""
    with trio.fail_after(20):
        m1 = await join_classic(client, "grp-1", metadata=bytes([1, 2, 3]))
        m2 = await join_classic(client, "grp-2", complete=False, metadata=bytes([1, 2, 3]))
        await join_consumer(client, "grp-consumer", "c1")
        for v in range(SUPPORTED_VERSIONS[ApiKey.DESCRIBE_GROUPS][1] + 1):
            r = await client.request(
                ApiKey.DESCRIBE_GROUPS,
                v,
                DescribeGroupsRequest(groups=["grp-1", "grp-2", "grp-unknown", "grp-consumer"]),
            )
            got = [
                (
                    g.group_id,
                    g.error_code,
                    g.error_message,
                    g.group_state,
                    g.protocol_type,
                    g.protocol_data,
                    [
                        (
                            m.member_id,
                            m.group_instance_id,
                            m.client_id,
                            m.client_host,
                            m.member_metadata,
                            m.member_assignment,
                        )
                        for m in g.members
                    ],
                )
                for g in r.groups
            ]
            v6 = v >= 6
            assert got == [
                (
                    "grp-1",
                    NONE,
                    None,
                    "Stable",
                    "consumer",
                    "consumer-range",
                    [(m1, None, "client-id", "/127.0.0.1", bytes([1, 2, 3]), bytes([4, 5, 6]))],
                ),
                (
                    "grp-2",
                    NONE,
                    None,
                    "CompletingRebalance",
                    "consumer",
                    "",
                    [(m2, None, "client-id", "/127.0.0.1", b"", b"")],
                ),
                # The group does not exist: Dead, and from v6 GROUP_ID_NOT_FOUND with a message.
                (
                    "grp-unknown",
                    ErrorCode.GROUP_ID_NOT_FOUND if v6 else NONE,
                    "Group grp-unknown not found." if v6 else None,
                    "Dead",
                    "",
                    "",
                    [],
                ),
                (
                    "grp-consumer",
                    ErrorCode.GROUP_ID_NOT_FOUND if v6 else NONE,
                    "Group grp-consumer is not a classic group." if v6 else None,
                    "Dead",
                    "",
                    "",
                    [],
                ),
            ], v
