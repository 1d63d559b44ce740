"""Kafka's own OffsetCommit and OffsetFetch request tests, ported over a real socket at every
version the server advertises: OffsetCommitRequestTest.testOffsetCommit and OffsetFetchRequestTest
(testSingleGroupOffsetFetch, testSingleGroupAllOffsetFetch, testMultipleGroupsOffsetFetch,
testFetchOffsetWithRecreatedTopic) of Kafka 4.3 (core/src/test/scala/unit/kafka/server), each with
a classic group and a consumer group. v10 names topics by id: an unknown id is UNKNOWN_TOPIC_ID,
the response carries ids, not names. Plus what those tests leave out: the zero id, a v10 request
mixing known and unknown ids (and one id twice), and both generations of clients in one group.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import trio

from coordinator.embed.embedded import open_server
from protocol.api import SUPPORTED_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, TopicPartitions
from protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.integration.raw_client import RawClient
from tests.integration.test_group_apis import ASSIGNMENT, join

COMMIT_VERSIONS = range(SUPPORTED_VERSIONS[ApiKey.OFFSET_COMMIT][0], SUPPORTED_VERSIONS[ApiKey.OFFSET_COMMIT][1] + 1)
FETCH_MAX = SUPPORTED_VERSIONS[ApiKey.OFFSET_FETCH][1]
NONE = ErrorCode.NONE
ZERO = uuid.UUID(int=0)
Topic = tuple[str, uuid.UUID]  # (name, id): a request names it by one, the response by the same


@pytest.fixture
async def foo(tmp_path):
    """A server with topic foo (3 partitions) and a client: (server, client, foo's id)."""
    async with open_server(tmp_path, topics={"foo": 3}) as server:
        await server.runtime.loaded.wait()
        client = await RawClient.connect(server.host, server.port)
        yield server, client, server.broker.topics.get("foo").topic_id
        await client.aclose()


async def join_consumer_group(client: RawClient, group: str, new_protocol: bool) -> tuple[str, int]:
    """Kafka's GroupCoordinatorBaseRequestTest.joinConsumerGroup: (member id, epoch or generation)."""
    if new_protocol:
        r = await client.request(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            1,
            ConsumerGroupHeartbeatRequest(
                group_id=group,
                member_id=f"{group}-member",
                member_epoch=0,
                rebalance_timeout_ms=300_000,
                subscribed_topic_names=["foo"],
                topic_partitions=[],
            ),
        )
        assert r.error_code == NONE
        return r.member_id, r.member_epoch
    joined = await join(client, 5, group)
    synced = await client.request(
        ApiKey.SYNC_GROUP,
        5,
        SyncGroupRequest(
            group_id=group,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[SyncGroupRequestAssignment(joined.member_id, ASSIGNMENT)],
        ),
    )
    assert synced.error_code == NONE
    return joined.member_id, joined.generation_id


async def commit(
    client: RawClient, version: int, group: str, member: str, epoch: int, topic: Topic, partition: int, offset: int
) -> list[tuple[Any, int, int]]:
    """Kafka's commitOffset: one partition; [(the topic as the response names it, partition, error)]."""
    name, topic_id = topic
    t = OffsetCommitRequestTopic(name=name, partitions=[OffsetCommitRequestPartition(partition, offset)])
    t.topic_id = topic_id
    r = await client.request(
        ApiKey.OFFSET_COMMIT,
        version,
        OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=epoch, member_id=member, topics=[t]),
    )
    return [
        (rt.topic_id if version >= 10 else rt.name, p.partition_index, p.error_code)
        for rt in r.topics
        for p in rt.partitions
    ]


def named(version: int, topic: Topic) -> Any:
    """How a response of `version` names a topic: by name below v10, by id from v10."""
    return topic[1] if version >= 10 else topic[0]


async def fetch(
    client: RawClient, version: int, groups: list[tuple[str, str | None, int, list[tuple[Topic, list[int]]] | None]]
) -> dict[str, tuple[int, list[tuple[Any, list[tuple[int, int, int]]]]]]:
    """Kafka's fetchOffsets: {group: (error, [(topic, [(partition, offset, error)])])}; before
    v8 one group per request, as the test's helper does."""
    out: dict[str, tuple[int, list[tuple[Any, list[tuple[int, int, int]]]]]] = {}
    if version >= 8:
        request = OffsetFetchRequest(
            require_stable=True,
            groups=[
                OffsetFetchRequestGroup(
                    group_id=g,
                    member_id=m,
                    member_epoch=e,
                    topics=None if ts is None else [_fetch_topic(t, ps) for t, ps in ts],
                )
                for g, m, e, ts in groups
            ],
        )
        r = await client.request(ApiKey.OFFSET_FETCH, version, request)
        for g in r.groups:
            out[g.group_id] = (g.error_code, _topics(version, g.topics))
        return out
    for g, _, _, ts in groups:
        request = OffsetFetchRequest(
            group_id=g,
            topics=None if ts is None else [OffsetFetchRequestTopic(t[0], ps) for t, ps in ts],
            require_stable=version >= 7,
        )
        r = await client.request(ApiKey.OFFSET_FETCH, version, request)
        out[g] = (r.error_code, _topics(version, r.topics))
    return out


def _fetch_topic(topic: Topic, partitions: list[int]) -> OffsetFetchRequestTopics:
    t = OffsetFetchRequestTopics(name=topic[0], partition_indexes=partitions)
    t.topic_id = topic[1]
    return t


def _topics(version: int, topics: Any) -> list[tuple[Any, list[tuple[int, int, int]]]]:
    """Kafka's sortTopicPartitions: topics by name, a stable sort (from v10 every name is "",
    so the response's own order stays: unknown ids after the known topics), partitions by index."""
    return [
        (
            t.topic_id if version >= 10 else t.name,
            sorted((p.partition_index, p.committed_offset, p.error_code) for p in t.partitions),
        )
        for t in sorted(topics, key=lambda t: t.name)
    ]


@pytest.mark.parametrize("new_protocol", [True, False], ids=["consumer", "classic"])
async def test_offset_commit(foo, new_protocol):
    """OffsetCommitRequestTest.testOffsetCommit."""
    _, client, foo_id = foo
    t = ("foo", foo_id)
    with trio.fail_after(20):
        member, epoch = await join_consumer_group(client, "grp", new_protocol)
        for v in COMMIT_VERSIONS:
            ok = ErrorCode.UNSUPPORTED_VERSION if new_protocol and v < 9 else NONE
            assert await commit(client, v, "grp", member, epoch, t, 0, 100) == [(named(v, t), 0, ok)]
            unknown_group = ErrorCode.GROUP_ID_NOT_FOUND if v >= 9 else ErrorCode.ILLEGAL_GENERATION
            for group in ("unknown", ""):
                assert await commit(client, v, group, member, epoch, t, 0, 100) == [(named(v, t), 0, unknown_group)]
            assert await commit(client, v, "grp", "", epoch, t, 0, 100) == [
                (named(v, t), 0, ErrorCode.UNKNOWN_MEMBER_ID)
            ]
            stale = (
                ErrorCode.STALE_MEMBER_EPOCH
                if new_protocol and v >= 9
                else ErrorCode.UNSUPPORTED_VERSION
                if new_protocol
                else ErrorCode.ILLEGAL_GENERATION
            )
            assert await commit(client, v, "grp", member, epoch + 1, t, 0, 100) == [(named(v, t), 0, stale)]
            # As the admin client does: no member, no epoch, a group nobody is in.
            assert await commit(client, v, "other-grp", "", -1, t, 0, 100) == [(named(v, t), 0, NONE)]
            if v >= 10:
                bar = ("bar", uuid.uuid4())
                assert await commit(client, v, "grp", member, epoch, bar, 0, 100) == [
                    (bar[1], 0, ErrorCode.UNKNOWN_TOPIC_ID)
                ]


async def _commit_three(client: RawClient, group: str, member: str, epoch: int, t: Topic) -> None:
    for partition in range(3):
        assert await commit(client, 10, group, member, epoch, t, partition, 100 + partition) == [
            (t[1], partition, NONE)
        ]


@pytest.mark.parametrize("new_protocol", [True, False], ids=["consumer", "classic"])
async def test_single_group_offset_fetch(foo, new_protocol):
    """OffsetFetchRequestTest.testSingleGroupOffsetFetch: committed at v10, fetched at every
    version, with a partition that does not exist and, for unknown groups, an unknown topic."""
    _, client, foo_id = foo
    t, unknown = ("foo", foo_id), ("foo-unknown", uuid.uuid4())
    with trio.fail_after(20):
        member, epoch = await join_consumer_group(client, "grp", new_protocol)
        await _commit_three(client, "grp", member, epoch, t)
        for v in range(1, FETCH_MAX + 1):
            asked = [(t, [0, 1, 5])]
            got = await fetch(client, v, [("grp", member, epoch, asked)])
            assert got == {"grp": (NONE, [(named(v, t), [(0, 100, NONE), (1, 101, NONE), (5, -1, NONE)])])}, v
            got = await fetch(client, v, [("unknown", member, epoch, asked)])
            assert got == {"unknown": (NONE, [(named(v, t), [(0, -1, NONE), (1, -1, NONE), (5, -1, NONE)])])}, v
            got = await fetch(client, v, [("unknown", member, epoch, [(t, [0, 5]), (unknown, [1])])])
            lost = ErrorCode.UNKNOWN_TOPIC_ID if v >= 10 else NONE
            assert got == {
                "unknown": (NONE, [(named(v, t), [(0, -1, NONE), (5, -1, NONE)]), (named(v, unknown), [(1, -1, lost)])])
            }, v
            if new_protocol and v >= 9:
                assert await fetch(client, v, [("grp", "", epoch, [])]) == {"grp": (ErrorCode.UNKNOWN_MEMBER_ID, [])}
                got = await fetch(client, v, [("", member, epoch, asked)])
                assert got == {"": (NONE, [(named(v, t), [(0, -1, NONE), (1, -1, NONE), (5, -1, NONE)])])}
                got = await fetch(client, v, [("grp", member, epoch + 1, [])])
                assert got == {"grp": (ErrorCode.STALE_MEMBER_EPOCH, [])}


@pytest.mark.parametrize("new_protocol", [True, False], ids=["consumer", "classic"])
async def test_single_group_all_offset_fetch(foo, new_protocol):
    """OffsetFetchRequestTest.testSingleGroupAllOffsetFetch (v2+: topics null = all)."""
    _, client, foo_id = foo
    t = ("foo", foo_id)
    with trio.fail_after(20):
        member, epoch = await join_consumer_group(client, "grp", new_protocol)
        await _commit_three(client, "grp", member, epoch, t)
        for v in range(2, FETCH_MAX + 1):
            got = await fetch(client, v, [("grp", member, epoch, None)])
            assert got == {"grp": (NONE, [(named(v, t), [(0, 100, NONE), (1, 101, NONE), (2, 102, NONE)])])}, v
            assert await fetch(client, v, [("unknown", member, epoch, None)]) == {"unknown": (NONE, [])}
            if new_protocol and v >= 9:
                assert await fetch(client, v, [("grp", "", epoch, None)]) == {"grp": (ErrorCode.UNKNOWN_MEMBER_ID, [])}
                got = await fetch(client, v, [("grp", member, epoch + 1, None)])
                assert got == {"grp": (ErrorCode.STALE_MEMBER_EPOCH, [])}


@pytest.mark.parametrize("new_protocol", [True, False], ids=["consumer", "classic"])
async def test_multiple_groups_offset_fetch(foo, new_protocol):
    """OffsetFetchRequestTest.testMultipleGroupsOffsetFetch (v8+): the unknown id's topic comes
    after the group's known topics, whatever the request's order."""
    _, client, foo_id = foo
    t, unknown = ("foo", foo_id), ("foo-unknown", uuid.uuid4())
    with trio.fail_after(20):
        for group in ("grp-0", "grp-1", "grp-2"):
            member, epoch = await join_consumer_group(client, group, new_protocol)
            await _commit_three(client, group, member, epoch, t)
        for v in range(8, FETCH_MAX + 1):
            got = await fetch(
                client,
                v,
                [
                    ("grp-0", None, -1, [(t, [0, 1, 5])]),
                    ("grp-1", None, -1, None),
                    ("grp-2", None, -1, []),
                    ("grp-3", None, -1, [(t, [0])]),
                    ("grp-4", None, -1, [(unknown, [0]), (t, [5])]),
                ],
            )
            lost = ErrorCode.UNKNOWN_TOPIC_ID if v >= 10 else NONE
            assert got == {
                "grp-0": (NONE, [(named(v, t), [(0, 100, NONE), (1, 101, NONE), (5, -1, NONE)])]),
                "grp-1": (NONE, [(named(v, t), [(0, 100, NONE), (1, 101, NONE), (2, 102, NONE)])]),
                "grp-2": (NONE, []),
                "grp-3": (NONE, [(named(v, t), [(0, -1, NONE)])]),
                "grp-4": (NONE, [(named(v, t), [(5, -1, NONE)]), (named(v, unknown), [(0, -1, lost)])]),
            }, v


async def test_fetch_offset_with_recreated_topic(foo):
    """OffsetFetchRequestTest.testFetchOffsetWithRecreatedTopic: offsets of the deleted topic
    are not answered for the new topic of the same name."""
    server, client, foo_id = foo
    with trio.fail_after(20):
        member, epoch = await join_consumer_group(client, "grp", True)
        await _commit_three(client, "grp", member, epoch, ("foo", foo_id))
        deleted = await client.request(
            ApiKey.DELETE_TOPICS, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name="foo")], timeout_ms=5000)
        )
        assert deleted.responses[0].error_code == NONE
        server.create_topic("foo", 3)
        new_id = server.broker.topics.get("foo").topic_id
        assert new_id != foo_id
        got = await fetch(client, 10, [("grp", member, epoch, [(("foo", new_id), [0, 1, 2])])])
        assert got == {"grp": (NONE, [(new_id, [(0, -1, NONE), (1, -1, NONE), (2, -1, NONE)])])}


async def test_zero_unknown_and_repeated_ids(foo):
    """Bad input at v10: the zero id and an unknown id are UNKNOWN_TOPIC_ID for their partitions
    while the rest commits; one id named twice answers as one entry (Kafka's response builder:
    refused entries first, in request order). A name set on a v10 topic is not on the wire."""
    _, client, foo_id = foo
    unknown = uuid.uuid4()
    topics = []
    for name, topic_id, partition in (("foo", foo_id, 0), ("foo", ZERO, 1), ("x", unknown, 2), ("", foo_id, 1)):
        t = OffsetCommitRequestTopic(name=name, partitions=[OffsetCommitRequestPartition(partition, 10 + partition)])
        t.topic_id = topic_id
        topics.append(t)
    with trio.fail_after(10):
        r = await client.request(ApiKey.OFFSET_COMMIT, 10, OffsetCommitRequest(group_id="bad", topics=topics))
        assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == [
            (ZERO, [(1, ErrorCode.UNKNOWN_TOPIC_ID)]),
            (unknown, [(2, ErrorCode.UNKNOWN_TOPIC_ID)]),
            (foo_id, [(0, NONE), (1, NONE)]),
        ]
        got = await fetch(client, 10, [("bad", None, -1, [(("foo", foo_id), [0, 1]), (("", ZERO), [0])])])
        assert got == {
            "bad": (NONE, [(foo_id, [(0, 10, NONE), (1, 11, NONE)]), (ZERO, [(0, -1, ErrorCode.UNKNOWN_TOPIC_ID)])])
        }


async def test_v9_and_v10_clients_share_a_consumer_groups_offsets_and_a_lagging_epoch_commits(foo):
    """One consumer group, a v9 client committing by name and a v10 client by id: each reads the
    other's offsets. KIP-1251 over the wire: after m1 gave foo-2 up to m2 and moved to epoch 2, its
    commits at epoch 1 pass for the partitions it kept and are refused for foo-2 (the whole commit)."""
    _, client, foo_id = foo
    t = ("foo", foo_id)

    async def heartbeat(member: str, epoch: int, owned: list[int] | None = None) -> Any:
        request = ConsumerGroupHeartbeatRequest(group_id="cg", member_id=member, member_epoch=epoch)
        if owned is not None:
            request.topic_partitions = [TopicPartitions(foo_id, owned)]
        r = await client.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, request)
        assert r.error_code == NONE
        return r

    with trio.fail_after(20):
        m1, _ = await join_consumer_group(client, "cg", True)
        assert await commit(client, 9, "cg", m1, 1, t, 0, 5) == [("foo", 0, NONE)]
        assert await commit(client, 10, "cg", m1, 1, t, 1, 6) == [(foo_id, 1, NONE)]
        for v in (9, 10):
            got = await fetch(client, v, [("cg", m1, 1, [(t, [0, 1])])])
            assert got == {"cg": (NONE, [(named(v, t), [(0, 5, NONE), (1, 6, NONE)])])}
        m2 = "cg-member-2"
        await heartbeat_join(client, m2)
        revoking = await heartbeat(m1, 1)  # m1 must give a partition up: it stays at epoch 1
        kept = sorted(p for tp in revoking.assignment.topic_partitions for p in tp.partitions)
        given = ({0, 1, 2} - set(kept)).pop()
        assert (await heartbeat(m1, 1, kept)).member_epoch == 2
        for v in (9, 10):
            assert await commit(client, v, "cg", m1, 1, t, kept[0], 7) == [(named(v, t), kept[0], NONE)]
            assert await commit(client, v, "cg", m1, 1, t, given, 7) == [
                (named(v, t), given, ErrorCode.STALE_MEMBER_EPOCH)
            ]
            assert await commit(client, v, "cg", m1, 3, t, kept[0], 7) == [
                (named(v, t), kept[0], ErrorCode.STALE_MEMBER_EPOCH)
            ]


async def heartbeat_join(client: RawClient, member: str) -> None:
    r = await client.request(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        1,
        ConsumerGroupHeartbeatRequest(
            group_id="cg",
            member_id=member,
            member_epoch=0,
            rebalance_timeout_ms=300_000,
            subscribed_topic_names=["foo"],
            topic_partitions=[],
        ),
    )
    assert r.error_code == NONE
