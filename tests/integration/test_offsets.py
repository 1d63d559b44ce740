"""Offsets over real sockets and real files: commits at v2/v5/v8/v9 come back from fetches at
v1/v5/v7/v8 after a restart (offset, metadata, leader epoch); DeleteGroups survives a restart;
COORDINATOR_LOAD_IN_PROGRESS while __consumer_offsets loads, on every group API's encoding."""

from __future__ import annotations

from functools import partial

import trio

from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.cluster.cluster import BrokerNode, Cluster
from coordinator.config import Config
from coordinator.control.versions import VersionLimits
from coordinator.embed.embedded import open_server
from coordinator.groups.lifecycle import OFFSETS_TOPIC_ID, group_runtime
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.service import GroupService
from coordinator.handlers import (
    k08_offset_commit,
    k09_offset_fetch,
    k11_join_group,
    k15_describe_groups,
    k16_list_groups,
    k42_delete_groups,
)
from coordinator.handlers.request_context import BrokerContext, RequestContext
from coordinator.runtime.clock import TrioClock
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.headers import RequestHeader
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.metadata import MetadataRequest
from protocol.messages.offset_commit import OffsetCommitRequest
from protocol.messages.offset_commit import OffsetCommitRequestPartition as CP
from protocol.messages.offset_commit import OffsetCommitRequestTopic as CT
from protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from storage.log_manager import LogManager
from tests.integration.raw_client import RawClient

NONE, UNKNOWN_TP = ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def _connect(server) -> RawClient:
    await server.runtime.loaded.wait()
    return await RawClient.connect(server.host, server.port)


def _commit(group: str, parts: list[CP], topic: str = "t", **kw) -> OffsetCommitRequest:
    return OffsetCommitRequest(group_id=group, topics=[CT(name=topic, partitions=parts)], **kw)


def _errors(response) -> list[tuple[str, int, int]]:
    return [(t.name, p.partition_index, p.error_code) for t in response.topics for p in t.partitions]


async def test_commits_at_each_version_survive_a_restart(tmp_path):
    async with open_server(tmp_path, topics={"t": 4}) as server:
        c = await _connect(server)
        r = await c.request(
            ApiKey.OFFSET_COMMIT,
            2,
            _commit("g2", [CP(0, 20, committed_metadata="v2"), CP(9, 1)], retention_time_ms=3_600_000),
        )
        assert _errors(r) == [("t", 9, UNKNOWN_TP), ("t", 0, NONE)]
        r = await c.request(ApiKey.OFFSET_COMMIT, 5, _commit("g5", [CP(1, 50, committed_metadata=None)]))
        assert _errors(r) == [("t", 1, NONE)]
        r = await c.request(
            ApiKey.OFFSET_COMMIT, 8, _commit("g8", [CP(2, 80, committed_leader_epoch=7, committed_metadata="m8")])
        )
        assert _errors(r) == [("t", 2, NONE)]
        r = await c.request(
            ApiKey.OFFSET_COMMIT, 9, _commit("g9", [CP(3, 90, committed_leader_epoch=3, committed_metadata="m9")])
        )
        assert _errors(r) == [("t", 3, NONE)]
        r = await c.request(ApiKey.OFFSET_COMMIT, 9, _commit("g9", [CP(0, 1)], topic="nope"))
        assert _errors(r) == [("nope", 0, UNKNOWN_TP)]
        r = await c.request(ApiKey.OFFSET_COMMIT, 9, _commit("absent", [CP(0, 1)], generation_id_or_member_epoch=1))
        assert _errors(r) == [("t", 0, ErrorCode.GROUP_ID_NOT_FOUND)]
        r = await c.request(ApiKey.OFFSET_COMMIT, 8, _commit("absent", [CP(0, 1)], generation_id_or_member_epoch=1))
        assert _errors(r) == [("t", 0, ErrorCode.ILLEGAL_GENERATION)]
        await c.aclose()
        partitions = {server.broker.groups.partition_for(g) for g in ("g2", "g5", "g8", "g9")}
    # Stopping closed every __consumer_offsets log cleanly (no recovery needed at the next start).
    for n in partitions:
        assert (tmp_path / f"__consumer_offsets-{n}" / ".kafka_cleanshutdown").is_file()

    async with open_server(tmp_path) as server:
        c = await _connect(server)
        r = await c.request(
            ApiKey.OFFSET_FETCH, 1, OffsetFetchRequest(group_id="g2", topics=[OffsetFetchRequestTopic("t", [0, 1])])
        )
        assert [(p.partition_index, p.committed_offset, p.metadata, p.error_code) for p in r.topics[0].partitions] == [
            (0, 20, "v2", 0),
            (1, -1, "", 0),
        ]
        r = await c.request(
            ApiKey.OFFSET_FETCH, 5, OffsetFetchRequest(group_id="g8", topics=[OffsetFetchRequestTopic("t", [2])])
        )
        p = r.topics[0].partitions[0]
        assert (r.error_code, p.committed_offset, p.committed_leader_epoch, p.metadata) == (0, 80, 7, "m8")
        r = await c.request(ApiKey.OFFSET_FETCH, 7, OffsetFetchRequest(group_id="g9", topics=None, require_stable=True))
        assert [
            (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata)
            for t in r.topics
            for p in t.partitions
        ] == [("t", 3, 90, 3, "m9")]
        r = await c.request(
            ApiKey.OFFSET_FETCH,
            8,
            OffsetFetchRequest(
                groups=[
                    OffsetFetchRequestGroup("g5", topics=[OffsetFetchRequestTopics(name="t", partition_indexes=[1])]),
                    OffsetFetchRequestGroup("g9", topics=None),
                    OffsetFetchRequestGroup("unknown", topics=None),
                ]
            ),
        )
        assert [
            (
                g.group_id,
                g.error_code,
                [
                    (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata)
                    for t in g.topics
                    for p in t.partitions
                ],
            )
            for g in r.groups
        ] == [("g5", 0, [("t", 1, 50, -1, "")]), ("g9", 0, [("t", 3, 90, 3, "m9")]), ("unknown", 0, [])]
        r = await c.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
        internal = [(t.name, len(t.partitions)) for t in r.topics if t.is_internal]
        assert sorted(internal) == [
            ("__consumer_offsets", 50),
            ("__share_group_state", 50),
            ("__transaction_state", 50),
        ]
        await c.aclose()


async def test_deleted_group_and_deleted_offsets_stay_gone_after_a_restart(tmp_path):
    async with open_server(tmp_path, topics={"t": 2}) as server:
        c = await _connect(server)
        for group in ("gone", "kept"):
            await c.request(ApiKey.OFFSET_COMMIT, 8, _commit(group, [CP(0, 5), CP(1, 6)]))
        r = await c.request(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=["gone", "never"]))
        assert [(x.group_id, x.error_code) for x in r.results] == [("gone", 0), ("never", ErrorCode.GROUP_ID_NOT_FOUND)]
        r = await c.request(
            ApiKey.OFFSET_DELETE,
            0,
            OffsetDeleteRequest(
                group_id="kept",
                topics=[
                    OffsetDeleteRequestTopic("t", [OffsetDeleteRequestPartition(1), OffsetDeleteRequestPartition(7)])
                ],
            ),
        )
        assert (r.error_code, _errors(r)) == (0, [("t", 7, UNKNOWN_TP), ("t", 1, NONE)])
        r = await c.request(ApiKey.OFFSET_DELETE, 0, OffsetDeleteRequest(group_id="never", topics=[]))
        assert (r.error_code, r.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
        await c.aclose()

    async with open_server(tmp_path) as server:
        c = await _connect(server)
        r = await c.request(
            ApiKey.OFFSET_FETCH,
            8,
            OffsetFetchRequest(
                groups=[OffsetFetchRequestGroup("gone", topics=None), OffsetFetchRequestGroup("kept", topics=None)]
            ),
        )
        assert [
            (g.group_id, [(p.partition_index, p.committed_offset) for t in g.topics for p in t.partitions])
            for g in r.groups
        ] == [("gone", []), ("kept", [(0, 5)])]
        r = await c.request(ApiKey.LIST_GROUPS, 4, ListGroupsRequest())
        assert [(g.group_id, g.group_state) for g in r.groups] == [("kept", "Empty")]
        r = await c.request(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=["gone"]))
        assert r.groups[0].group_state == "Dead"
        await c.aclose()


def _request_context(broker: BrokerContext, key: ApiKey, version: int) -> RequestContext:
    return RequestContext(broker, RequestHeader(key, version, 1, "test"), "127.0.0.1", 1)


async def test_load_in_progress_until_the_partition_is_loaded(tmp_path):
    async with open_server(tmp_path, topics={"t": 1}) as server:
        c = await _connect(server)
        await c.request(ApiKey.OFFSET_COMMIT, 8, _commit("g", [CP(0, 42)]))
        await c.aclose()
    config = Config({"data.dir": str(tmp_path)})
    topics = TopicRegistry(tmp_path)
    topics.load()
    async with trio.open_nursery() as nursery:
        clock = TrioClock()
        runtime = group_runtime(config, clock, LogManager(tmp_path, clock))
        await nursery.start(partial(runtime.run, load=False))  # loading held back
        topics.register_internal(Topic(OFFSETS_TOPIC, runtime.num_partitions, OFFSETS_TOPIC_ID, internal=True))
        node = BrokerNode(0, "127.0.0.1", 0)
        cluster = Cluster([node], topics)
        service = GroupService(runtime, cluster, 0)
        broker = BrokerContext(config, topics, None, cluster, service, None, node, VersionLimits())  # type: ignore[arg-type]
        fetch = OffsetFetchRequest(group_id="g", topics=[OffsetFetchRequestTopic("t", [0])])
        r = await k09_offset_fetch.handle(_request_context(broker, ApiKey.OFFSET_FETCH, 1), fetch)
        assert (r.error_code, _errors(r)) == (0, [("t", 0, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)])
        r = await k09_offset_fetch.handle(_request_context(broker, ApiKey.OFFSET_FETCH, 2), fetch)
        assert (r.error_code, r.topics) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [])
        many = OffsetFetchRequest(groups=[OffsetFetchRequestGroup("g", topics=None)])
        r = await k09_offset_fetch.handle(_request_context(broker, ApiKey.OFFSET_FETCH, 8), many)
        assert [(g.group_id, g.error_code) for g in r.groups] == [("g", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)]
        r = await k08_offset_commit.handle(_request_context(broker, ApiKey.OFFSET_COMMIT, 8), _commit("g", [CP(0, 1)]))
        assert _errors(r) == [("t", 0, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)]
        join = JoinGroupRequest(
            group_id="g",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            member_id="",
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol("range", b"")],
        )
        r = await k11_join_group.handle(_request_context(broker, ApiKey.JOIN_GROUP, 9), join)
        assert r.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        r = await k16_list_groups.handle(_request_context(broker, ApiKey.LIST_GROUPS, 4), ListGroupsRequest())
        assert r.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        # A group on another, empty partition is served meanwhile.
        other = OffsetFetchRequest(groups=[OffsetFetchRequestGroup("other-group", topics=None)])
        assert service.partition_for("other-group") != service.partition_for("g")
        r = await k09_offset_fetch.handle(_request_context(broker, ApiKey.OFFSET_FETCH, 8), other)
        assert r.groups[0].error_code == 0
        r = await k15_describe_groups.handle(
            _request_context(broker, ApiKey.DESCRIBE_GROUPS, 5), DescribeGroupsRequest(groups=["other-group", "g"])
        )
        assert [(g.group_id, g.error_code, g.group_state) for g in r.groups] == [
            ("other-group", 0, "Dead"),
            ("g", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ""),
        ]
        r = await k42_delete_groups.handle(
            _request_context(broker, ApiKey.DELETE_GROUPS, 2), DeleteGroupsRequest(groups_names=["g", "other-group"])
        )
        assert [(g.group_id, g.error_code) for g in r.results] == [
            ("g", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
            ("other-group", ErrorCode.GROUP_ID_NOT_FOUND),
        ]

        await runtime.load_all()
        r = await k09_offset_fetch.handle(_request_context(broker, ApiKey.OFFSET_FETCH, 2), fetch)
        assert (r.error_code, r.topics[0].partitions[0].committed_offset) == (0, 42)
        nursery.cancel_scope.cancel()


async def test_a_topic_named_twice_is_answered_once(tmp_path):
    """Kafka's OffsetCommitResponse.Builder merges partitions by topic name: a topic the request
    names twice gets one response topic, whether or not another partition was unknown."""
    async with open_server(tmp_path, topics={"t": 3, "u": 1}) as server:
        c = await _connect(server)
        twice = [
            CT(name="t", partitions=[CP(0, 1)]),
            CT(name="u", partitions=[CP(0, 4)]),
            CT(name="t", partitions=[CP(2, 3)]),
        ]
        r = await c.request(ApiKey.OFFSET_COMMIT, 8, OffsetCommitRequest(group_id="twice", topics=twice))
        assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == [
            ("t", [(0, NONE), (2, NONE)]),
            ("u", [(0, NONE)]),
        ]
        twice[1].partitions.append(CP(5, 1))
        r = await c.request(ApiKey.OFFSET_COMMIT, 8, OffsetCommitRequest(group_id="twice", topics=twice))
        assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == [
            ("u", [(5, UNKNOWN_TP), (0, NONE)]),
            ("t", [(0, NONE), (2, NONE)]),
        ]
        await c.aclose()


async def test_one_commit_is_one_batch_in_consumer_offsets(tmp_path):
    from coordinator.groups.lifecycle import offsets_log_config
    from coordinator.groups.records import decode_record
    from coordinator.runtime.clock import SystemClock
    from storage.batch import iter_records
    from storage.log import Log

    async with open_server(tmp_path, topics={"t": 3}) as server:
        c = await _connect(server)
        r = await c.request(ApiKey.OFFSET_COMMIT, 8, _commit("one", [CP(0, 1), CP(1, 2), CP(2, 3)]))
        assert _errors(r) == [("t", 0, NONE), ("t", 1, NONE), ("t", 2, NONE)]
        await c.aclose()
        n = server.broker.groups.partition_for("one")
        config = server.broker.config
    log = Log.open(tmp_path / f"__consumer_offsets-{n}", offsets_log_config(config), SystemClock())
    batches = [[decode_record(rec.key, rec.value) for rec in iter_records(data)] for _, data in log.iter_batches()]
    log.close()
    assert [[(r.topic, r.partition, r.offset) for r in batch] for batch in batches] == [
        [("t", 0, 1), ("t", 1, 2), ("t", 2, 3)]
    ]
