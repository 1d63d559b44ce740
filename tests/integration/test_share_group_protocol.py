"""KIP-932 share-group membership over a real socket, raw protocol: ShareGroupHeartbeat v1,
ShareGroupDescribe v1, Describe/Alter/DeleteShareGroupOffsets, share groups in ListGroups and
DeleteGroups, the share.version feature, Kafka's errors for bad input (nothing written), a restart
that reloads the group, and the APIs withdrawn when group.share.enable is off. The share
coordinator is an in-memory fake behind the SharePersister interface. Wiring and bytes, not rules
(those are in tests/coordinator/groups/share)."""

from __future__ import annotations

import trio

from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.share.persister import ShareState
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsRequestPartition,
    AlterShareGroupOffsetsRequestTopic,
)
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequestTopic,
)
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsRequestTopic,
)
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.share_group_describe import ShareGroupDescribeRequest
from protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from tests.coordinator.groups.share.support import FakePersister
from tests.integration.share_support import share_server

HB, DESCRIBE = ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE
SHARE_APIS = {76, 77, 90, 91, 92}


def join(group: str, member_id: str, topics: list[str] | None = None) -> ShareGroupHeartbeatRequest:
    return ShareGroupHeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=0, subscribed_topic_names=topics or ["orders"]
    )


async def test_a_share_consumers_life_over_the_wire(tmp_path):
    persister = FakePersister()
    with trio.fail_after(20):
        async with share_server(tmp_path / "data", persister) as (server, client):
            orders = server.broker.topics.get("orders").topic_id
            versions = await client.request(ApiKey.API_VERSIONS, 4, ApiVersionsRequest("kgc-test", "1.0"))
            ranges = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
            assert {k: ranges[k] for k in SHARE_APIS} == {76: (1, 1), 77: (1, 1), 90: (0, 1), 91: (0, 0), 92: (0, 0)}
            assert ("share.version", 1) in {(f.name, f.max_version_level) for f in versions.finalized_features}

            joined = await client.request(HB, 1, join("sg", "member-1"))
            assert (joined.error_code, joined.member_id, joined.member_epoch, joined.heartbeat_interval_ms) == (
                0,
                "member-1",
                2,
                5000,
            )  # answered after the share coordinator initialized both partitions: they are assigned
            assert [(tp.topic_id, tp.partitions) for tp in joined.assignment.topic_partitions] == [(orders, [0, 1])]
            assert sorted(persister.keys("initialize")) == [(orders, 0), (orders, 1)]
            second = await client.request(HB, 1, join("sg", "member-2"))
            assert second.error_code == 0

            (described,) = (await client.request(DESCRIBE, 1, ShareGroupDescribeRequest(["sg"]))).groups
            assert (described.error_code, described.group_state, described.assignor_name) == (0, "Stable", "simple")
            assert sorted(m.member_id for m in described.members) == ["member-1", "member-2"]
            listed = await client.request(ApiKey.LIST_GROUPS, 5, ListGroupsRequest(types_filter=["share"]))
            assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed.groups] == [
                ("sg", "share", "Stable", "share")
            ]
            (classic_view,) = (await client.request(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(["sg"]))).groups
            assert (classic_view.error_code, classic_view.group_state) == (0, "Dead")
            refused = await client.request(
                ApiKey.JOIN_GROUP,
                5,
                JoinGroupRequest(
                    group_id="sg",
                    session_timeout_ms=10_000,
                    rebalance_timeout_ms=10_000,
                    member_id="",
                    protocol_type="consumer",
                    protocols=[JoinGroupRequestProtocol("range", b"")],
                ),
            )
            assert refused.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL

            key0 = next(k for k in persister.states if k.partition == 0)
            persister.states[key0] = ShareState(1, 0, 0, 0, ())  # started at 0, nothing delivered yet
            offsets = await client.request(
                ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
                1,
                DescribeShareGroupOffsetsRequest(
                    [
                        DescribeShareGroupOffsetsRequestGroup(
                            "sg", [DescribeShareGroupOffsetsRequestTopic("orders", [0])]
                        )
                    ]
                ),
            )
            (row,) = offsets.groups[0].topics[0].partitions
            assert (offsets.groups[0].error_code, row.partition_index, row.start_offset, row.lag) == (0, 0, 0, 0)

            busy = await client.request(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(["sg"]))
            assert busy.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
            for member in ("member-1", "member-2"):
                left = await client.request(
                    HB, 1, ShareGroupHeartbeatRequest(group_id="sg", member_id=member, member_epoch=-1)
                )
                assert (left.error_code, left.member_epoch) == (0, -1)
            altered = await client.request(
                ApiKey.ALTER_SHARE_GROUP_OFFSETS,
                0,
                AlterShareGroupOffsetsRequest(
                    "sg", [AlterShareGroupOffsetsRequestTopic("orders", [AlterShareGroupOffsetsRequestPartition(1, 7)])]
                ),
            )
            assert altered.error_code == 0 and [p.error_code for p in altered.responses[0].partitions] == [0]
            assert [s.start_offset for k, s in persister.states.items() if k.partition == 1] == [7]
            wiped = await client.request(
                ApiKey.DELETE_SHARE_GROUP_OFFSETS,
                0,
                DeleteShareGroupOffsetsRequest("sg", [DeleteShareGroupOffsetsRequestTopic("orders")]),
            )
            assert (wiped.error_code, [(t.topic_name, t.error_code) for t in wiped.responses]) == (0, [("orders", 0)])
            deleted = await client.request(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(["sg"]))
            assert deleted.results[0].error_code == 0 and persister.states == {}
            (gone,) = (await client.request(DESCRIBE, 1, ShareGroupDescribeRequest(["sg"]))).groups
            assert gone.error_code == ErrorCode.GROUP_ID_NOT_FOUND


async def test_bad_input_gets_kafkas_errors_and_writes_nothing(tmp_path):
    with trio.fail_after(20):
        async with share_server(tmp_path / "data", FakePersister()) as (server, client):
            partition = server.broker.groups.partition_for("sg")
            log = server.runtime.writer.log(partition)
            log_end = None if log is None else log.log_end_offset
            cases = [
                (join("sg", ""), ErrorCode.INVALID_REQUEST, "MemberId can't be empty."),
                (join("", "m1"), ErrorCode.INVALID_REQUEST, "GroupId can't be empty."),
                (
                    ShareGroupHeartbeatRequest(group_id="sg", member_id="m1", member_epoch=0),
                    ErrorCode.INVALID_REQUEST,
                    "SubscribedTopicNames must be set in first request.",
                ),
                (
                    ShareGroupHeartbeatRequest(group_id="sg", member_id="m1", member_epoch=-7),
                    ErrorCode.INVALID_REQUEST,
                    "MemberEpoch is invalid.",
                ),
                (
                    ShareGroupHeartbeatRequest(group_id="sg", member_id="m1", member_epoch=3),
                    ErrorCode.GROUP_ID_NOT_FOUND,
                    "Share group sg not found.",
                ),
            ]
            for request, code, message in cases:
                answer = await client.request(HB, 1, request)
                assert (answer.error_code, answer.error_message) == (code, message)
            assert server.broker.groups.shard_for("sg").groups == {}
            log = server.runtime.writer.log(partition)
            assert (None if log is None else log.log_end_offset) == log_end  # nothing written
            (empty,) = (await client.request(DESCRIBE, 1, ShareGroupDescribeRequest([""]))).groups
            assert empty.error_code == ErrorCode.INVALID_GROUP_ID


async def test_a_restart_reloads_the_share_group(tmp_path):
    data = tmp_path / "data"
    persister = FakePersister()
    with trio.fail_after(20):
        async with share_server(data, persister) as (_, client):
            first = await client.request(HB, 1, join("sg", "m1"))
        async with share_server(data, persister) as (_, client):
            (described,) = (await client.request(DESCRIBE, 1, ShareGroupDescribeRequest(["sg"]))).groups
            assert [(m.member_id, m.member_epoch) for m in described.members] == [("m1", first.member_epoch)]
            again = await client.request(
                HB, 1, ShareGroupHeartbeatRequest(group_id="sg", member_id="m1", member_epoch=first.member_epoch)
            )
            assert (again.error_code, again.member_epoch) == (0, first.member_epoch)


async def test_share_groups_switched_off_withdraw_the_apis(tmp_path):
    with trio.fail_after(20):
        async with share_server(tmp_path / "data", None, {"group.share.enable": False}) as (_, client):
            versions = await client.request(ApiKey.API_VERSIONS, 4, ApiVersionsRequest("kgc-test", "1.0"))
            assert SHARE_APIS.isdisjoint(k.api_key for k in versions.api_keys)
            assert "share.version" not in {f.name for f in versions.finalized_features}
            assert "share.version" in {f.name for f in versions.supported_features}


async def test_share_groups_switched_off_at_run_time_answer_unsupported_version(tmp_path):
    with trio.fail_after(20):
        async with share_server(tmp_path / "data", FakePersister()) as (server, client):
            server.broker.groups.share.settings.enabled = False  # the one ShareSettings, read at use time
            refused = await client.request(HB, 1, join("sg", "m1"))
            assert refused.error_code == ErrorCode.UNSUPPORTED_VERSION
            (described,) = (await client.request(DESCRIBE, 1, ShareGroupDescribeRequest(["sg"]))).groups
            assert described.error_code == ErrorCode.UNSUPPORTED_VERSION
            versions = await client.request(ApiKey.API_VERSIONS, 4, ApiVersionsRequest("kgc-test", "1.0"))
            assert "share.version" not in {f.name for f in versions.finalized_features}


class Deny:
    """An authorizer refusing the listed (operation, resource type, name) actions."""

    def __init__(self, *refused: tuple[AclOperation, ResourceType, str]) -> None:
        self.refused = set(refused)

    def authorize(self, principal: str, host: str, op: AclOperation, kind: ResourceType, name: str) -> bool:
        return (op, kind, name) not in self.refused


async def test_kafkas_authorization_questions(tmp_path):
    with trio.fail_after(20):
        async with share_server(tmp_path / "data", FakePersister()) as (server, client):
            server.broker.topics.ensure("secret", 1, 1)
            server.broker.authorizer = Deny(
                (AclOperation.READ, ResourceType.GROUP, "closed"),
                (AclOperation.DESCRIBE, ResourceType.TOPIC, "secret"),
                (AclOperation.DESCRIBE, ResourceType.GROUP, "hidden"),
            )
            assert (
                await client.request(HB, 1, join("closed", "m1"))
            ).error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
            denied = await client.request(HB, 1, join("sg", "m1", ["orders", "secret"]))
            assert denied.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
            assert server.broker.groups.shard_for("sg").groups == {}  # refused before the coordinator
            described = (await client.request(DESCRIBE, 1, ShareGroupDescribeRequest(["hidden", "nope"]))).groups
            assert [(g.group_id, g.error_code) for g in described] == [
                ("hidden", ErrorCode.GROUP_AUTHORIZATION_FAILED),
                ("nope", ErrorCode.GROUP_ID_NOT_FOUND),
            ]
            request = DescribeShareGroupOffsetsRequest(
                [
                    DescribeShareGroupOffsetsRequestGroup("hidden", None),
                    DescribeShareGroupOffsetsRequestGroup("sg", [DescribeShareGroupOffsetsRequestTopic("secret", [0])]),
                ]
            )
            hidden, sg = (await client.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, request)).groups
            assert hidden.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
            assert [(p.partition_index, p.start_offset, p.error_code) for p in sg.topics[0].partitions] == [
                (0, -1, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            ]
