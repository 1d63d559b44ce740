"""ApiVersions, Metadata and FindCoordinator against a real server over a real socket."""

from __future__ import annotations

import struct

import pytest

from coordinator.share.wiring import served_versions
from protocol.api import SUPPORTED_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.headers import RequestHeader, encode_request_header
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.integration.raw_client import RawClient


def _ranges(response) -> dict[int, tuple[int, int]]:
    return {entry.api_key: (entry.min_version, entry.max_version) for entry in response.api_keys}


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
async def test_api_versions_lists_the_supported_table(client, server, version):
    request = ApiVersionsRequest(client_software_name="raw-test", client_software_version="1.0")
    response = await client.request(ApiKey.API_VERSIONS, version, request)
    assert response.error_code == ErrorCode.NONE
    # every API, the share-group ones only while share groups are served
    assert _ranges(response) == served_versions(SUPPORTED_VERSIONS, bool(server.shares))


@pytest.mark.parametrize("version", [3, 4])
async def test_api_versions_lists_features_from_v3(client, version):
    # KIP-584; before v4 a feature whose minimum is 0 is left out (KAFKA-17011).
    request = ApiVersionsRequest(client_software_name="raw-test", client_software_version="1.0")
    response = await client.request(ApiKey.API_VERSIONS, version, request)
    supported = {f.name: (f.min_version, f.max_version) for f in response.supported_features}
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in response.finalized_features}
    assert supported["metadata.version"] == (7, 29)
    assert ("group.version" in supported) == (version >= 4)
    assert finalized["metadata.version"] == (29, 29) and finalized["group.version"] == (1, 1)
    assert response.finalized_features_epoch >= 0


async def test_api_versions_above_max_gets_v0_body_with_error_35(client):
    # KIP-511: the body is not parsed, the answer is a v0 body whatever was asked.
    # A v9 header (flexible, so header v2) in front of a body we cannot know: the server must not parse it.
    header = encode_request_header(RequestHeader(ApiKey.API_VERSIONS, 9, 4242, "future-client"))
    payload = header + b"\x07future\x02\x01\xff\xfe"
    await client.send_raw(struct.pack(">i", len(payload)) + payload)
    response = await client.read_response(ApiKey.API_VERSIONS, 0, 4242)
    assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert _ranges(response)[ApiKey.API_VERSIONS] == SUPPORTED_VERSIONS[ApiKey.API_VERSIONS]


async def test_api_versions_v3_with_invalid_software_name_is_invalid_request(client):
    request = ApiVersionsRequest(client_software_name="bad name!", client_software_version="1.0")
    response = await client.request(ApiKey.API_VERSIONS, 3, request)
    assert response.error_code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("version", range(0, SUPPORTED_VERSIONS[ApiKey.METADATA][1] + 1))
async def test_metadata_all_topics_at_every_version(client, server, version):
    topics = [] if version == 0 else None  # v0: empty means all; v1+: null means all
    response = await client.request(ApiKey.METADATA, version, MetadataRequest(topics=topics))
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(0, server.host, server.port)]
    [orders] = [t for t in response.topics if t.name == "orders"]
    assert orders.error_code == ErrorCode.NONE
    assert [p.partition_index for p in orders.partitions] == [0, 1, 2]
    assert all(p.leader_id == 0 and p.replica_nodes == [0] and p.isr_nodes == [0] for p in orders.partitions)
    if version >= 10:
        assert orders.topic_id.int != 0
    if version >= 1:
        assert response.controller_id == 0


async def test_metadata_v1_empty_list_means_no_topics(client):
    response = await client.request(ApiKey.METADATA, 1, MetadataRequest(topics=[]))
    assert response.topics == []


async def test_metadata_auto_creates_when_allowed(client, server):
    request = MetadataRequest(topics=[MetadataRequestTopic(name="fresh")], allow_auto_topic_creation=True)
    response = await client.request(ApiKey.METADATA, 9, request)
    [fresh] = response.topics
    assert (fresh.name, fresh.error_code, len(fresh.partitions)) == ("fresh", ErrorCode.NONE, 1)
    assert server.broker.topics.get("fresh") is not None


async def test_metadata_unknown_topic_without_auto_create(client, server):
    request = MetadataRequest(topics=[MetadataRequestTopic(name="absent")], allow_auto_topic_creation=False)
    response = await client.request(ApiKey.METADATA, 9, request)
    assert [(t.name, t.error_code) for t in response.topics] == [("absent", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert server.broker.topics.get("absent") is None


async def test_metadata_invalid_topic_name_is_refused(client):
    request = MetadataRequest(topics=[MetadataRequestTopic(name="bad/name")], allow_auto_topic_creation=True)
    response = await client.request(ApiKey.METADATA, 4, request)
    assert response.topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_find_coordinator_single_key(client, server, version):
    response = await client.request(ApiKey.FIND_COORDINATOR, version, FindCoordinatorRequest(key="group-a"))
    assert (response.error_code, response.node_id, response.host, response.port) == (
        ErrorCode.NONE,
        0,
        server.host,
        server.port,
    )


@pytest.mark.parametrize("version", [4, 5, 6])
async def test_find_coordinator_batched_keys(client, server, version):
    request = FindCoordinatorRequest(coordinator_keys=["a", "b"], key_type=0)
    response = await client.request(ApiKey.FIND_COORDINATOR, version, request)
    assert [(c.key, c.error_code, c.node_id, c.port) for c in response.coordinators] == [
        ("a", ErrorCode.NONE, 0, server.port),
        ("b", ErrorCode.NONE, 0, server.port),
    ]


async def test_find_coordinator_for_share_keys(client, server):
    """Key type 2 (v6): "groupId:topicId:partition" -> the leader of its __share_group_state
    partition; any other key, or a version below 6, is INVALID_REQUEST, as Kafka answers."""
    from coordinator.share.state.placement import SHARE_STATE_TOPIC, parse_coordinator_key, partition_for

    key = "share-1:Uj5wn_FqTXirEASvVZRY1w:3"
    bad = ["share-1", "share-1:not-an-id:3", "share-1:Uj5wn_FqTXirEASvVZRY1w:x", ":Uj5wn_FqTXirEASvVZRY1w:3"]
    request = FindCoordinatorRequest(key_type=2, coordinator_keys=[key, *bad])
    response = await client.request(ApiKey.FIND_COORDINATOR, 6, request)
    found, *refused = response.coordinators
    partition = partition_for(parse_coordinator_key(key), server.share_state.num_partitions)
    leader = server.cluster.node(server.cluster.leader(SHARE_STATE_TOPIC, partition))
    assert (found.error_code, found.node_id, found.host, found.port) == (0, leader.node_id, leader.host, leader.port)
    assert [(c.key, c.error_code, c.node_id) for c in refused] == [(k, ErrorCode.INVALID_REQUEST, -1) for k in bad]
    assert all("Share coordinator key is invalid" in c.error_message for c in refused)
    below_v6 = await client.request(ApiKey.FIND_COORDINATOR, 5, request)
    assert {c.error_code for c in below_v6.coordinators} == {ErrorCode.INVALID_REQUEST}


async def test_pipelined_requests_are_answered_in_order(client):
    sent = []
    data = b""
    for i in range(50):
        version = i % 4
        cid, frame = client.encode(
            ApiKey.API_VERSIONS,
            version,
            ApiVersionsRequest(client_software_name="pipeline", client_software_version="1"),
        )
        sent.append((cid, version))
        data += frame
    await client.send_raw(data)  # one write: the server sees them all at once
    for cid, version in sent:
        response = await client.read_response(ApiKey.API_VERSIONS, version, cid)
        assert response.error_code == ErrorCode.NONE


async def test_topics_survive_a_restart(tmp_path):
    from coordinator.embed.embedded import open_server

    async with open_server(tmp_path, topics={"kept": 5}) as first:
        first_id = first.broker.topics.get("kept").topic_id
    async with open_server(tmp_path, topics={"kept": 2}) as second:  # existing topic is not changed
        kept = second.broker.topics.get("kept")
        assert (kept.partitions, kept.topic_id) == (5, first_id)
        client = await RawClient.connect(second.host, second.port)
        response = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
        assert [(t.name, len(t.partitions), t.topic_id) for t in response.topics if not t.is_internal] == [
            ("kept", 5, first_id)
        ]
        await client.aclose()


async def test_metadata_auto_creation_stops_at_max_partitions(tmp_path):
    # A client naming ever more topics must not create them past the cap CreateTopics enforces.
    from coordinator.embed.embedded import open_server

    settings = {"max.partitions": 4, "num.partitions": 1}
    async with open_server(tmp_path / "data", topics={"orders": 3}, settings=settings) as server:
        client = await RawClient.connect(server.host, server.port)
        names = [MetadataRequestTopic(name="first"), MetadataRequestTopic(name="second")]
        response = await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=names))
        assert [(t.name, t.error_code) for t in response.topics] == [
            ("first", ErrorCode.NONE),  # 3 + 1 = 4 partitions: within the cap
            ("second", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),  # 5 would not be
        ]
        assert server.broker.topics.get("second") is None
        await client.aclose()
