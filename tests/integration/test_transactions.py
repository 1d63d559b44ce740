"""Transactions over real sockets: every transaction API at its versions, bad input with Kafka's
error codes, and three brokers where the transaction coordinator moves with its partition.

Every wait is on a condition under a deadline; time never passes by sleeping for real.
"""

from __future__ import annotations

import trio

from coordinator.embed.embedded import open_server
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC, partition_for
from protocol.api import ApiKey
from protocol.errors import ErrorCode as E
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.list_transactions import ListTransactionsRequest
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from storage.batch import Record, encode_batch
from tests.integration.raw_client import RawClient

DEADLINE = 20


async def init(c: RawClient, txn: str, version: int = 4, **kw):
    return await c.request(
        ApiKey.INIT_PRODUCER_ID,
        version,
        InitProducerIdRequest(transactional_id=txn, transaction_timeout_ms=60_000, **kw),
    )


async def add(c: RawClient, txn: str, pid: int, epoch: int, version: int = 3, topic: str = "orders", partitions=(0,)):
    r = await c.request(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        version,
        AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=txn,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[AddPartitionsToTxnTopic(topic, list(partitions))],
        ),
    )
    return [p.partition_error_code for t in r.results_by_topic_v3_and_below for p in t.results_by_partition]


async def end(c: RawClient, txn: str, pid: int, epoch: int, commit: bool, version: int = 3):
    return (await c.request(ApiKey.END_TXN, version, EndTxnRequest(txn, pid, epoch, commit))).error_code


async def produce(c: RawClient, txn: str | None, pid: int, epoch: int, seq: int, value: bytes, version: int = 9):
    batch = encode_batch(
        0,
        [Record(None, 1, b"k", value)],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=txn is not None,
    )
    r = await c.request(
        ApiKey.PRODUCE,
        version,
        ProduceRequest(
            transactional_id=txn,
            acks=-1,
            timeout_ms=5000,
            topic_data=[TopicProduceData("orders", partition_data=[PartitionProduceData(0, batch)])],
        ),
    )
    return r.responses[0].partition_responses[0].error_code


async def fetch(c: RawClient, isolation: int, offset: int = 0):
    r = await c.request(
        ApiKey.FETCH,
        11,
        FetchRequest(
            replica_id=-1,
            max_wait_ms=0,
            max_bytes=1 << 20,
            isolation_level=isolation,
            topics=[
                FetchTopic(
                    topic="orders",
                    partitions=[FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)],
                )
            ],
        ),
    )
    return r.responses[0].partitions[0]


async def test_a_transaction_over_the_wire_and_the_bad_inputs(client, server):
    with trio.fail_after(DEADLINE):
        r = await client.request(
            ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=1, coordinator_keys=["tx-a", "tx-b"])
        )
        assert [(c.key, c.error_code, c.node_id) for c in r.coordinators] == [("tx-a", 0, 0), ("tx-b", 0, 0)]
        assert await add(client, "tx-a", 0, 0) == [E.INVALID_PRODUCER_ID_MAPPING]  # before InitProducerId
        first = await init(client, "tx-a")
        pid = first.producer_id
        assert (first.error_code, first.producer_epoch) == (0, 0)
        assert await end(client, "tx-a", pid, 0, True) == E.INVALID_TXN_STATE  # nothing open
        assert await produce(client, "tx-a", pid, 0, 0, b"x") == E.INVALID_TXN_STATE  # partition not added
        assert await add(client, "tx-a", pid, 0) == [0]
        assert await produce(client, "tx-a", pid, 0, 0, b"uncommitted") == 0
        assert (await fetch(client, 1)).last_stable_offset == 0
        assert await end(client, "tx-a", pid, 0, False) == 0
        aborted = await _until(lambda: fetch(client, 1), lambda p: p.last_stable_offset == 2)
        assert [(a.producer_id, a.first_offset) for a in aborted.aborted_transactions] == [(pid, 0)]
        assert (await fetch(client, 0)).aborted_transactions is None
        second = await init(client, "tx-a")  # a new producer: the first one is a zombie now
        assert second.producer_epoch == 1
        assert await add(client, "tx-a", pid, 0, version=1) == [E.INVALID_PRODUCER_EPOCH]  # v<2: old code
        assert await add(client, "tx-a", pid, 0, version=2) == [E.PRODUCER_FENCED]
        assert await end(client, "tx-a", pid, 0, True, version=1) == E.INVALID_PRODUCER_EPOCH
        assert await add(client, "tx-a", pid, 1, topic="nope") == [E.UNKNOWN_TOPIC_OR_PARTITION]


async def test_txn_offset_commit_bad_inputs(client, server):
    with trio.fail_after(DEADLINE):
        pid = (await init(client, "tx-o")).producer_id

        async def commit(group: str, version: int = 3, **kw):
            r = await client.request(
                ApiKey.TXN_OFFSET_COMMIT,
                version,
                TxnOffsetCommitRequest(
                    transactional_id="tx-o",
                    group_id=group,
                    producer_id=pid,
                    producer_epoch=0,
                    topics=[TxnOffsetCommitRequestTopic("orders", [TxnOffsetCommitRequestPartition(0, 5)])],
                    **kw,
                ),
            )
            return r.topics[0].partitions[0].error_code

        assert await commit("g") == E.INVALID_TXN_STATE  # AddOffsetsToTxn first
        r = await client.request(ApiKey.ADD_OFFSETS_TO_TXN, 3, AddOffsetsToTxnRequest("tx-o", pid, 0, "g"))
        assert r.error_code == 0
        assert await commit("g", generation_id=1, member_id="m") == E.ILLEGAL_GENERATION  # unknown group
        assert await commit("g") == 0  # generation -1: a simple group
        assert await commit("g", generation_id=0, member_id="ghost") == E.UNKNOWN_MEMBER_ID
        d = await client.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest(["tx-o", "nope"]))
        assert [(s.transactional_id, s.error_code, s.transaction_state) for s in d.transaction_states] == [
            ("tx-o", 0, "Ongoing"),
            ("nope", E.TRANSACTIONAL_ID_NOT_FOUND, ""),
        ]
        assert d.transaction_states[0].topics[0].topic == "__consumer_offsets"
        listed = await client.request(
            ApiKey.LIST_TRANSACTIONS,
            2,
            ListTransactionsRequest(state_filters=["Ongoing", "Bogus"], transactional_id_pattern="tx-.*"),
        )
        assert [(t.transactional_id, t.transaction_state) for t in listed.transaction_states] == [("tx-o", "Ongoing")]
        assert listed.unknown_state_filters == ["Bogus"]


async def test_the_transaction_coordinator_moves_with_its_partition(tmp_path):
    async with open_server(tmp_path / "data", topics={"orders": 1}, brokers=3) as server:
        with trio.fail_after(DEADLINE):
            clients = [await RawClient.connect(b.advertised_host, b.advertised_port) for b in server.brokers]
            found = await clients[0].request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="tx-m", key_type=1))
            leader = server.cluster.leader(TRANSACTION_STATE_TOPIC, partition_for("tx-m"))
            assert (found.error_code, found.node_id) == (0, leader)
            other = (leader + 1) % 3
            assert (await init(clients[other], "tx-m")).error_code == E.NOT_COORDINATOR
            pid = (await init(clients[leader], "tx-m")).producer_id
            assert await add(clients[leader], "tx-m", pid, 0) == [0]
            server.controller.move_leader(TRANSACTION_STATE_TOPIC, partition_for("tx-m"), other)
            found = await clients[0].request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="tx-m", key_type=1))
            assert found.node_id == other
            await server.txn_runtime.settled(partition_for("tx-m"))
            assert await end(clients[other], "tx-m", pid, 0, True) == 0  # the new coordinator loaded it
            for c in clients:
                await c.aclose()


async def _until(get, ok):
    while True:
        value = await get()
        if ok(value):
            return value
        await trio.sleep(0.01)


async def test_a_transaction_survives_its_coordinator_broker_going_down(tmp_path):
    async with open_server(tmp_path / "data", topics={"orders": 1}, brokers=3) as server:
        with trio.fail_after(DEADLINE):
            partition = partition_for("tx-down")
            leader = server.cluster.leader(TRANSACTION_STATE_TOPIC, partition)
            first = await RawClient.connect(
                server.brokers[leader].advertised_host, server.brokers[leader].advertised_port
            )
            pid = (await init(first, "tx-down")).producer_id
            assert await add(first, "tx-down", pid, 0) == [0]
            await first.aclose()
            await server.controller.broker_down(leader)  # its partitions elect new leaders
            successor = server.cluster.leader(TRANSACTION_STATE_TOPIC, partition)
            assert successor not in (leader, -1)
            client = await RawClient.connect(
                server.brokers[successor].advertised_host, server.brokers[successor].advertised_port
            )
            found = await client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="tx-down", key_type=1))
            assert (found.error_code, found.node_id) == (0, successor)
            await server.txn_runtime.settled(partition)
            assert await end(client, "tx-down", pid, 0, False) == 0  # the open transaction came along
            await client.aclose()
