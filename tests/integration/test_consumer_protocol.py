"""KIP-848 over a real socket: ConsumerGroupHeartbeat and ConsumerGroupDescribe at each version,
the other group APIs on a consumer group, Kafka's errors for bad input, a restart that reloads the
group from __consumer_offsets, and the protocol switched off by group.coordinator.rebalance.protocols.
Wiring and bytes, not rules (those are in tests/coordinator/groups/modern)."""

from __future__ import annotations

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, TopicPartitions
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from tests.integration.raw_client import RawClient

HB = ApiKey.CONSUMER_GROUP_HEARTBEAT


def join(group: str, member_id: str, **kwargs) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        group_id=group,
        member_id=member_id,
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["orders"],
        topic_partitions=[],
        **kwargs,
    )


async def test_advertised_in_api_versions(client):
    response = await client.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest("kgc-test", "1.0"))
    ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert ranges[HB] == (0, 1) and ranges[ApiKey.CONSUMER_GROUP_DESCRIBE] == (0, 1)


@pytest.mark.parametrize("version", [0, 1])
async def test_join_heartbeat_describe_leave(client, server, version):
    group = f"cg-v{version}"
    orders = server.broker.topics.get("orders").topic_id
    with trio.fail_after(10):
        joined = await client.request(HB, version, join(group, "" if version == 0 else "member-1"))
        assert (joined.error_code, joined.member_epoch, joined.heartbeat_interval_ms) == (0, 1, 5000)
        member_id = joined.member_id
        assert member_id == "member-1" if version == 1 else len(member_id) == 22  # Kafka's Uuid text
        assert [(tp.topic_id, tp.partitions) for tp in joined.assignment.topic_partitions] == [(orders, [0, 1, 2])]
        beat = await client.request(
            HB, version, ConsumerGroupHeartbeatRequest(group_id=group, member_id=member_id, member_epoch=1)
        )
        assert (beat.error_code, beat.member_epoch, beat.assignment) == (0, 1, None)
        for describe_version in (0, 1):
            (described,) = (
                await client.request(
                    ApiKey.CONSUMER_GROUP_DESCRIBE, describe_version, ConsumerGroupDescribeRequest([group])
                )
            ).groups
            assert (
                described.group_state,
                described.group_epoch,
                described.assignment_epoch,
                described.assignor_name,
            ) == ("Stable", 1, 1, "uniform")
            (member,) = described.members
            assert (member.member_id, member.client_id, member.client_host) == (member_id, "raw-test", "/127.0.0.1")
            assert [(p.topic_name, p.partitions) for p in member.assignment.topic_partitions] == [("orders", [0, 1, 2])]
            assert member.member_type == (1 if describe_version == 1 else -1)
        left = await client.request(
            HB, version, ConsumerGroupHeartbeatRequest(group_id=group, member_id=member_id, member_epoch=-1)
        )
        assert (left.error_code, left.member_epoch) == (0, -1)


async def test_bad_input_gets_kafkas_errors(client):
    with trio.fail_after(10):
        empty_id = await client.request(HB, 1, join("cg-bad", ""))
        assert (empty_id.error_code, empty_id.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        assignor = await client.request(HB, 1, join("cg-bad", "m", server_assignor="sticky"))
        assert assignor.error_code == ErrorCode.UNSUPPORTED_ASSIGNOR
        regex = await client.request(
            HB,
            1,
            ConsumerGroupHeartbeatRequest(
                group_id="cg-bad",
                member_id="m",
                member_epoch=0,
                rebalance_timeout_ms=1000,
                subscribed_topic_regex="(",
                topic_partitions=[],
            ),
        )
        assert regex.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
        unknown = await client.request(
            HB, 1, ConsumerGroupHeartbeatRequest(group_id="cg-bad", member_id="m", member_epoch=3)
        )
        assert (unknown.error_code, unknown.error_message, unknown.member_id) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            "Consumer group cg-bad not found.",
            None,
        )
        described = await client.request(
            ApiKey.CONSUMER_GROUP_DESCRIBE, 1, ConsumerGroupDescribeRequest(["cg-bad", ""])
        )
        assert [g.error_code for g in described.groups] == [ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.INVALID_GROUP_ID]


async def test_group_apis_on_a_consumer_group(client):
    with trio.fail_after(10):
        joined = await client.request(HB, 1, join("cg-apis", "m1"))
        listed = await client.request(ApiKey.LIST_GROUPS, 5, ListGroupsRequest(types_filter=["consumer"]))
        assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed.groups] == [
            ("cg-apis", "consumer", "Stable", "consumer")
        ]

        async def commit(epoch: int) -> int:
            response = await client.request(
                ApiKey.OFFSET_COMMIT,
                9,
                OffsetCommitRequest(
                    group_id="cg-apis",
                    generation_id_or_member_epoch=epoch,
                    member_id="m1",
                    topics=[OffsetCommitRequestTopic("orders", partitions=[OffsetCommitRequestPartition(0, 42)])],
                ),
            )
            return response.topics[0].partitions[0].error_code

        assert await commit(joined.member_epoch) == ErrorCode.NONE
        assert await commit(joined.member_epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH

        async def fetch(epoch: int):
            response = await client.request(
                ApiKey.OFFSET_FETCH,
                9,
                OffsetFetchRequest(
                    groups=[
                        OffsetFetchRequestGroup(
                            "cg-apis", "m1", epoch, [OffsetFetchRequestTopics("orders", partition_indexes=[0])]
                        )
                    ]
                ),
            )
            return response.groups[0]

        ok, stale = await fetch(joined.member_epoch), await fetch(0)
        assert (ok.error_code, ok.topics[0].partitions[0].committed_offset) == (0, 42)
        assert stale.error_code == ErrorCode.STALE_MEMBER_EPOCH


async def test_a_restart_reloads_the_group_and_its_members_keep_their_epoch(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with open_server(data, topics={"orders": 3}) as server:
            client = await RawClient.connect(server.host, server.port)
            await client.request(HB, 1, join("cg-restart", "m1"))
            await client.request(HB, 1, join("cg-restart", "m2"))
            await client.aclose()
        async with open_server(data, port=0) as server:
            client = await RawClient.connect(server.host, server.port)
            (described,) = (
                await client.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, ConsumerGroupDescribeRequest(["cg-restart"]))
            ).groups
            assert (described.group_epoch, sorted(m.member_id for m in described.members)) == (2, ["m1", "m2"])
            first = next(m for m in described.members if m.member_id == "m1")
            owned = [TopicPartitions(p.topic_id, p.partitions) for p in first.assignment.topic_partitions]
            beat = await client.request(
                HB,
                1,
                ConsumerGroupHeartbeatRequest(
                    group_id="cg-restart", member_id="m1", member_epoch=first.member_epoch, topic_partitions=owned
                ),
            )
            assert beat.error_code == ErrorCode.NONE
            await client.aclose()


async def test_consumer_protocol_can_be_switched_off(tmp_path):
    settings = {"group.coordinator.rebalance.protocols": "classic"}
    with trio.fail_after(10):
        async with open_server(tmp_path / "data", settings=settings, topics={"orders": 1}) as server:
            client = await RawClient.connect(server.host, server.port)
            refused = await client.request(HB, 1, join("cg-off", "m1"))
            assert (refused.error_code, refused.member_id) == (ErrorCode.UNSUPPORTED_VERSION, None)
            described = await client.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, ConsumerGroupDescribeRequest(["x"]))
            assert described.groups[0].error_code == ErrorCode.UNSUPPORTED_VERSION
            await client.aclose()
