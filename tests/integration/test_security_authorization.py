"""Every API that Kafka's KafkaApis authorizes answers its *_AUTHORIZATION_FAILED code to a principal
with no ACLs (allow.everyone.if.no.acl.found=false), and the same request from a super user gets
no authorization error: one table, one real server, our raw client."""

from __future__ import annotations

import pytest

from coordinator.embed.embedded import open_server
from coordinator.embed.security import SecurityOptions
from protocol.api import ApiKey
from protocol.errors import ErrorCode as E
from protocol.messages import add_offsets_to_txn as aot
from protocol.messages import add_partitions_to_txn as apt
from protocol.messages import consumer_group_describe as cgd
from protocol.messages import consumer_group_heartbeat as cgh
from protocol.messages import create_topics as ct
from protocol.messages import delete_groups as dg
from protocol.messages import delete_topics as dt
from protocol.messages import describe_groups as dgr
from protocol.messages import describe_transactions as dtx
from protocol.messages import (
    end_txn,
    fetch,
    heartbeat,
    leave_group,
    list_groups,
    produce,
    sasl_authenticate,
    sasl_handshake,
    sync_group,
)
from protocol.messages import find_coordinator as fc
from protocol.messages import init_producer_id as ipi
from protocol.messages import list_offsets as lo
from protocol.messages import list_transactions as ltx
from protocol.messages import offset_commit as oc
from protocol.messages import offset_delete as od
from protocol.messages import offset_fetch as of
from protocol.messages import offset_for_leader_epoch as ofle
from protocol.messages import txn_offset_commit as toc
from tests.integration.raw_client import RawClient

USERS = {"admin": "admin-secret", "alice": "alice-secret"}

# (api, version, request, the code alice gets); every one names topic "t", group "g", txn "x".
CASES = [
    (ApiKey.HEARTBEAT, 4, heartbeat.HeartbeatRequest("g", 1, "m"), E.GROUP_AUTHORIZATION_FAILED),
    (
        ApiKey.SYNC_GROUP,
        5,
        sync_group.SyncGroupRequest("g", 1, "m", None, "consumer", "range"),
        E.GROUP_AUTHORIZATION_FAILED,
    ),
    (ApiKey.LEAVE_GROUP, 5, leave_group.LeaveGroupRequest("g", members=[]), E.GROUP_AUTHORIZATION_FAILED),
    (
        ApiKey.OFFSET_FETCH,
        9,
        of.OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup("g", topics=None)]),
        E.GROUP_AUTHORIZATION_FAILED,
    ),
    (ApiKey.OFFSET_FETCH, 5, of.OffsetFetchRequest("g", None), E.GROUP_AUTHORIZATION_FAILED),
    (
        ApiKey.FIND_COORDINATOR,
        4,
        fc.FindCoordinatorRequest(key_type=0, coordinator_keys=["g"]),
        E.GROUP_AUTHORIZATION_FAILED,
    ),
    (ApiKey.FIND_COORDINATOR, 3, fc.FindCoordinatorRequest("x", 1), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    (
        ApiKey.PRODUCE,
        9,
        produce.ProduceRequest(
            None, 1, 1000, [produce.TopicProduceData("t", partition_data=[produce.PartitionProduceData(0, None)])]
        ),
        E.TOPIC_AUTHORIZATION_FAILED,
    ),
    (
        ApiKey.FETCH,
        12,
        fetch.FetchRequest(
            max_wait_ms=0,
            topics=[fetch.FetchTopic("t", partitions=[fetch.FetchPartition(0, partition_max_bytes=1000)])],
        ),
        E.TOPIC_AUTHORIZATION_FAILED,
    ),
    (
        ApiKey.LIST_OFFSETS,
        7,
        lo.ListOffsetsRequest(-1, 0, [lo.ListOffsetsTopic("t", [lo.ListOffsetsPartition(0, -1, -1)])]),
        E.TOPIC_AUTHORIZATION_FAILED,
    ),
    (ApiKey.DELETE_GROUPS, 2, dg.DeleteGroupsRequest(["g"]), E.GROUP_AUTHORIZATION_FAILED),
    (ApiKey.DESCRIBE_GROUPS, 5, dgr.DescribeGroupsRequest(["g"], True), E.GROUP_AUTHORIZATION_FAILED),
    (ApiKey.INIT_PRODUCER_ID, 4, ipi.InitProducerIdRequest("x", 60000), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    (ApiKey.INIT_PRODUCER_ID, 4, ipi.InitProducerIdRequest(None, 60000), E.CLUSTER_AUTHORIZATION_FAILED),
    (ApiKey.ADD_OFFSETS_TO_TXN, 3, aot.AddOffsetsToTxnRequest("x", 1, 0, "g"), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    (ApiKey.END_TXN, 3, end_txn.EndTxnRequest("x", 1, 0, True), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    (
        ApiKey.TXN_OFFSET_COMMIT,
        3,
        toc.TxnOffsetCommitRequest(
            "x", "g", 1, 0, topics=[toc.TxnOffsetCommitRequestTopic("t", [toc.TxnOffsetCommitRequestPartition(0, 1)])]
        ),
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ),
    (
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        apt.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id="x",
            v3_and_below_producer_id=1,
            v3_and_below_topics=[apt.AddPartitionsToTxnTopic("t", [0])],
        ),
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ),
    (ApiKey.ADD_PARTITIONS_TO_TXN, 4, apt.AddPartitionsToTxnRequest(transactions=[]), E.CLUSTER_AUTHORIZATION_FAILED),
    (
        ApiKey.CREATE_TOPICS,
        7,
        ct.CreateTopicsRequest([ct.CreatableTopic("new-topic", 1, 1)]),
        E.TOPIC_AUTHORIZATION_FAILED,
    ),
    (ApiKey.DELETE_TOPICS, 5, dt.DeleteTopicsRequest(topic_names=["t"]), E.TOPIC_AUTHORIZATION_FAILED),
    (
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        0,
        cgh.ConsumerGroupHeartbeatRequest(
            "g", "", 0, rebalance_timeout_ms=5000, subscribed_topic_names=["t"], topic_partitions=[]
        ),
        E.GROUP_AUTHORIZATION_FAILED,
    ),
    (ApiKey.CONSUMER_GROUP_DESCRIBE, 0, cgd.ConsumerGroupDescribeRequest(["g"]), E.GROUP_AUTHORIZATION_FAILED),
    (ApiKey.DESCRIBE_TRANSACTIONS, 0, dtx.DescribeTransactionsRequest(["x"]), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    (
        ApiKey.OFFSET_DELETE,
        0,
        od.OffsetDeleteRequest("g", [od.OffsetDeleteRequestTopic("t", [od.OffsetDeleteRequestPartition(0)])]),
        E.GROUP_AUTHORIZATION_FAILED,
    ),
    (
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        4,
        ofle.OffsetForLeaderEpochRequest(
            -1, [ofle.OffsetForLeaderTopic("t", [ofle.OffsetForLeaderPartition(0, -1, 0)])]
        ),
        E.TOPIC_AUTHORIZATION_FAILED,
    ),
]
AUTHORIZATION_CODES = {
    E.TOPIC_AUTHORIZATION_FAILED,
    E.GROUP_AUTHORIZATION_FAILED,
    E.CLUSTER_AUTHORIZATION_FAILED,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}


def error_codes(value) -> set[int]:
    """Every *error_code field anywhere in a response."""
    found: set[int] = set()
    if isinstance(value, list):
        for item in value:
            found |= error_codes(item)
    elif hasattr(value, "__dataclass_fields__") or hasattr(type(value), "__dataclass_fields__"):
        for name in type(value).__dataclass_fields__:
            item = getattr(value, name)
            if name.endswith("error_code") and isinstance(item, int):
                found.add(item)
            else:
                found |= error_codes(item)
    return found


async def login(server, user):
    client = await RawClient.connect(server.host, server.port)
    await client.request(ApiKey.SASL_HANDSHAKE, 1, sasl_handshake.SaslHandshakeRequest("PLAIN"))
    token = f"\x00{user}\x00{USERS[user]}".encode()
    assert (
        await client.request(ApiKey.SASL_AUTHENTICATE, 2, sasl_authenticate.SaslAuthenticateRequest(token))
    ).error_code == 0
    return client


@pytest.fixture
async def clients(tmp_path):
    options = SecurityOptions(users=USERS, authorizer=True, mechanisms=("PLAIN",))
    settings = {"connection.failed.authentication.delay.ms": 0}
    async with open_server(tmp_path / "d", security=options, settings=settings, topics={"t": 1}) as server:
        alice, admin = await login(server, "alice"), await login(server, "admin")
        yield alice, admin
        await alice.aclose()
        await admin.aclose()


async def test_each_api_refuses_a_principal_without_acls_and_serves_a_super_user(clients):
    alice, admin = clients
    for key, version, request, expected in CASES:
        refused = await alice.request(key, version, request)
        assert expected in error_codes(refused), (ApiKey(key).name, version, refused)
        served = await admin.request(key, version, request)
        assert not AUTHORIZATION_CODES & set(error_codes(served)), (ApiKey(key).name, version, served)


async def test_lists_and_describes_leave_out_what_the_principal_may_not_see(clients):
    alice, admin = clients
    await admin.request(ApiKey.INIT_PRODUCER_ID, 4, ipi.InitProducerIdRequest("x", 60000))
    commit = oc.OffsetCommitRequest(
        "g", -1, "", topics=[oc.OffsetCommitRequestTopic("t", partitions=[oc.OffsetCommitRequestPartition(0, 1)])]
    )
    assert (await admin.request(ApiKey.OFFSET_COMMIT, 9, commit)).topics[0].partitions[
        0
    ].error_code == 0  # group g exists
    for client, groups, txns in ((alice, [], 0), (admin, ["g"], 1)):  # DESCRIBE CLUSTER (a super user): everything
        listed = await client.request(ApiKey.LIST_TRANSACTIONS, 1, ltx.ListTransactionsRequest())
        assert len(listed.transaction_states) == txns
        found = await client.request(ApiKey.LIST_GROUPS, 5, list_groups.ListGroupsRequest())
        assert [g.group_id for g in found.groups] == groups
    described = await admin.request(ApiKey.DESCRIBE_GROUPS, 5, dgr.DescribeGroupsRequest(["g"], True))
    # A super user may do all of GROUP's operations: READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
    assert described.groups[0].authorized_operations == (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)
    fetched = await alice.request(
        ApiKey.OFFSET_FETCH, 9, of.OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup("g", topics=None)])
    )
    assert fetched.groups[0].error_code == E.GROUP_AUTHORIZATION_FAILED
