"""The classic-group APIs over a real socket, at every served version: wiring, not rules.

The rules themselves are unit-tested in tests/coordinator/groups; here one member forms a group,
syncs, heartbeats, is described and listed, leaves, and the group is deleted — per version.
"""

from __future__ import annotations

import struct

import pytest
import trio

from protocol.api import SUPPORTED_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.integration.raw_client import RawClient

# ConsumerProtocolSubscription v0 for ["orders"] and Assignment v0 of orders 0-2, null user data.
SUBSCRIPTION = struct.pack(">hih6si", 0, 1, 6, b"orders", -1)
ASSIGNMENT = struct.pack(">hih6siiiii", 0, 1, 6, b"orders", 3, 0, 1, 2, -1)


def join_request(group: str, member_id: str = "", instance: str | None = None) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10000,
        rebalance_timeout_ms=10000,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
    )


async def join(client: RawClient, version: int, group: str):
    response = await client.request(ApiKey.JOIN_GROUP, version, join_request(group))
    if version >= 4:  # KIP-394: first join without a member id is refused with one to use
        assert response.error_code == ErrorCode.MEMBER_ID_REQUIRED
        assert response.member_id.startswith("raw-test-")
        response = await client.request(ApiKey.JOIN_GROUP, version, join_request(group, response.member_id))
    assert response.error_code == ErrorCode.NONE
    return response


@pytest.mark.parametrize("version", range(SUPPORTED_VERSIONS[ApiKey.JOIN_GROUP][1] + 1))
async def test_join_at_every_version(client, version):
    group = f"join-v{version}"
    with trio.fail_after(10):
        joined = await join(client, version, group)
    assert (joined.generation_id, joined.leader) == (1, joined.member_id)
    assert joined.protocol_name == "range"
    assert [(m.member_id, m.metadata) for m in joined.members] == [(joined.member_id, SUBSCRIPTION)]
    if version >= 7:
        assert joined.protocol_type == "consumer"


@pytest.mark.parametrize("version", range(SUPPORTED_VERSIONS[ApiKey.SYNC_GROUP][1] + 1))
async def test_sync_heartbeat_leave_at_every_version(client, version):
    group = f"sync-v{version}"
    with trio.fail_after(10):
        joined = await join(client, 5, group)
        member = joined.member_id
        synced = await client.request(
            ApiKey.SYNC_GROUP,
            version,
            SyncGroupRequest(
                group_id=group,
                generation_id=1,
                member_id=member,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[SyncGroupRequestAssignment(member_id=member, assignment=ASSIGNMENT)],
            ),
        )
        assert (synced.error_code, synced.assignment) == (ErrorCode.NONE, ASSIGNMENT)
        if version >= 5:
            assert (synced.protocol_type, synced.protocol_name) == ("consumer", "range")
        for hb_version in range(SUPPORTED_VERSIONS[ApiKey.HEARTBEAT][1] + 1):
            beat = await client.request(
                ApiKey.HEARTBEAT, hb_version, HeartbeatRequest(group_id=group, generation_id=1, member_id=member)
            )
            assert beat.error_code == ErrorCode.NONE
        stale = await client.request(
            ApiKey.HEARTBEAT, 3, HeartbeatRequest(group_id=group, generation_id=0, member_id=member)
        )
        assert stale.error_code == ErrorCode.ILLEGAL_GENERATION


@pytest.mark.parametrize("version", range(SUPPORTED_VERSIONS[ApiKey.LEAVE_GROUP][1] + 1))
async def test_leave_at_every_version(client, version):
    group = f"leave-v{version}"
    with trio.fail_after(10):
        member = (await join(client, 5, group)).member_id
        if version < 3:
            request = LeaveGroupRequest(group_id=group, member_id=member)
        else:
            request = LeaveGroupRequest(
                group_id=group, members=[MemberIdentity(member_id=member), MemberIdentity(member_id="nobody")]
            )
        left = await client.request(ApiKey.LEAVE_GROUP, version, request)
        if version < 3:
            assert left.error_code == ErrorCode.NONE
        else:
            assert [(m.member_id, m.error_code) for m in left.members] == [
                (member, ErrorCode.NONE),
                ("nobody", ErrorCode.UNKNOWN_MEMBER_ID),
            ]
        described = await client.request(ApiKey.DESCRIBE_GROUPS, 0, DescribeGroupsRequest(groups=[group]))
        assert (described.groups[0].group_state, described.groups[0].members) == ("Empty", [])


@pytest.mark.parametrize("version", range(SUPPORTED_VERSIONS[ApiKey.DESCRIBE_GROUPS][1] + 1))
async def test_describe_at_every_version(client, version):
    group = f"describe-v{version}"
    with trio.fail_after(10):
        member = (await join(client, 5, group)).member_id
        rebalancing = await client.request(
            ApiKey.DESCRIBE_GROUPS, version, DescribeGroupsRequest(groups=[group, "unknown"])
        )
        await client.request(
            ApiKey.SYNC_GROUP,
            3,
            SyncGroupRequest(
                group_id=group,
                generation_id=1,
                member_id=member,
                assignments=[SyncGroupRequestAssignment(member_id=member, assignment=ASSIGNMENT)],
            ),
        )
        stable = await client.request(ApiKey.DESCRIBE_GROUPS, version, DescribeGroupsRequest(groups=[group]))
    # Kafka describes members without metadata until the group is Stable (describeNoMetadata).
    [ours, unknown] = rebalancing.groups
    assert (ours.error_code, ours.group_state, ours.protocol_type, ours.protocol_data) == (
        ErrorCode.NONE,
        "CompletingRebalance",
        "consumer",
        "",
    )
    assert [(m.member_id, m.client_id, m.member_metadata) for m in ours.members] == [(member, "raw-test", b"")]
    assert (unknown.group_id, unknown.group_state, unknown.members) == ("unknown", "Dead", [])
    [ours] = stable.groups
    assert (ours.group_state, ours.protocol_data) == ("Stable", "range")
    assert [(m.member_id, m.member_metadata, m.member_assignment) for m in ours.members] == [
        (member, SUBSCRIPTION, ASSIGNMENT)
    ]


@pytest.mark.parametrize("version", range(SUPPORTED_VERSIONS[ApiKey.LIST_GROUPS][1] + 1))
async def test_list_at_every_version(client, version):
    with trio.fail_after(10):
        await join(client, 5, f"list-v{version}")
        listed = await client.request(ApiKey.LIST_GROUPS, version, ListGroupsRequest())
    assert [(g.group_id, g.protocol_type) for g in listed.groups] == [(f"list-v{version}", "consumer")]
    if version >= 4:
        assert listed.groups[0].group_state == "CompletingRebalance"
        filtered = await client.request(ApiKey.LIST_GROUPS, version, ListGroupsRequest(states_filter=["Stable"]))
        assert filtered.groups == []


@pytest.mark.parametrize("version", range(SUPPORTED_VERSIONS[ApiKey.DELETE_GROUPS][1] + 1))
async def test_delete_at_every_version(client, version):
    group = f"delete-v{version}"
    with trio.fail_after(10):
        member = (await join(client, 5, group)).member_id
        busy = await client.request(ApiKey.DELETE_GROUPS, version, DeleteGroupsRequest(groups_names=[group, "nope"]))
        assert [(r.group_id, r.error_code) for r in busy.results] == [
            (group, ErrorCode.NON_EMPTY_GROUP),
            ("nope", ErrorCode.GROUP_ID_NOT_FOUND),
        ]
        await client.request(ApiKey.LEAVE_GROUP, 1, LeaveGroupRequest(group_id=group, member_id=member))
        done = await client.request(ApiKey.DELETE_GROUPS, version, DeleteGroupsRequest(groups_names=[group]))
        assert [(r.group_id, r.error_code) for r in done.results] == [(group, ErrorCode.NONE)]


async def test_two_members_on_two_connections_form_one_generation(server):
    first = await RawClient.connect(server.host, server.port)
    second = await RawClient.connect(server.host, server.port)
    results = {}

    async def member(name: str, client: RawClient) -> None:
        results[name] = await join(client, 5, "pair")

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(member, "a", first)
            nursery.start_soon(member, "b", second)
    a, b = results["a"], results["b"]
    assert a.generation_id == b.generation_id
    assert a.leader == b.leader
    leader = a if a.member_id == a.leader else b
    assert sorted(m.member_id for m in leader.members) == sorted([a.member_id, b.member_id])
    await first.aclose()
    await second.aclose()
