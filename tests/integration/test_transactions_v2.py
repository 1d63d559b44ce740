"""Transactions v2 (KIP-890 part 2) over real sockets, request by request, as a Kafka 4 producer
sends them when the broker finalizes transaction.version 2.

No client installed here speaks v2 (librdkafka 2.16, kafka-python, aiokafka, kafkajs and
@platformatic/kafka stop at EndTxn v4, see docs/transactions.md), so these wire-level tests
follow Kafka's own cases instead: TransactionsTest and the KafkaApis/AddPartitionsToTxnManager
version gates (Produce v11 TRANSACTION_ABORTABLE, Produce v12 and TxnOffsetCommit v5 adding
their partition, EndTxn v5 bumping the epoch). Every wait is on a condition under a deadline.
"""

from __future__ import annotations

import trio

from protocol.api import ApiKey
from protocol.errors import ErrorCode as E
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from tests.integration.raw_client import RawClient
from tests.integration.test_transactions import _until, fetch, init, produce

DEADLINE = 20


async def end_v5(c: RawClient, txn: str, pid: int, epoch: int, commit: bool, version: int = 5):
    r = await c.request(ApiKey.END_TXN, version, EndTxnRequest(txn, pid, epoch, commit))
    return r.error_code, r.producer_id, r.producer_epoch


async def commit_offset(c: RawClient, txn: str, pid: int, epoch: int, group: str, version: int) -> int:
    r = await c.request(
        ApiKey.TXN_OFFSET_COMMIT,
        version,
        TxnOffsetCommitRequest(
            transactional_id=txn,
            group_id=group,
            producer_id=pid,
            producer_epoch=epoch,
            topics=[TxnOffsetCommitRequestTopic("orders", [TxnOffsetCommitRequestPartition(0, 7)])],
        ),
    )
    return r.topics[0].partitions[0].error_code


async def described(c: RawClient, txn: str):
    r = await c.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest([txn]))
    state = r.transaction_states[0]
    partitions = sorted((t.topic, p) for t in state.topics for p in t.partitions)
    return state.transaction_state, state.producer_epoch, partitions


async def test_the_broker_offers_transactions_v2(client, server):
    with trio.fail_after(DEADLINE):
        r = await client.request(ApiKey.API_VERSIONS, 4, ApiVersionsRequest("kgc-test", "1"))
        supported = {f.name: (f.min_version, f.max_version) for f in r.supported_features}
        finalized = {f.name: f.max_version_level for f in r.finalized_features}
        assert supported["transaction.version"] == (0, 2) and finalized["transaction.version"] == 2
        maxima = {k.api_key: k.max_version for k in r.api_keys}
        # What Kafka's TransactionManager requires before it uses v2 (KAFKA-14563).
        assert maxima[ApiKey.PRODUCE] >= 12 and maxima[ApiKey.TXN_OFFSET_COMMIT] >= 5
        assert maxima[ApiKey.END_TXN] == 5
        v3 = await client.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest("kgc-test", "1"))
        assert "transaction.version" not in {f.name for f in v3.supported_features}  # min 0: v4+ only
        assert {f.name: f.max_version_level for f in v3.finalized_features}["transaction.version"] == 2


async def test_a_v2_producer_never_sends_add_partitions_or_add_offsets(client, server):
    with trio.fail_after(DEADLINE):
        pid = (await init(client, "tv2", version=5)).producer_id
        # Produce v12 adds orders-0 to the transaction (AddPartitionsToTxnManager ADD_PARTITION).
        assert await produce(client, "tv2", pid, 0, 0, b"first", version=12) == 0
        assert await described(client, "tv2") == ("Ongoing", 0, [("orders", 0)])
        # TxnOffsetCommit v5 adds the group's __consumer_offsets partition (no AddOffsetsToTxn).
        assert await commit_offset(client, "tv2", pid, 0, "g2", version=5) == 0
        state, _, partitions = await described(client, "tv2")
        assert state == "Ongoing" and [t for t, _ in partitions] == ["__consumer_offsets", "orders"]
        assert await end_v5(client, "tv2", pid, 0, True) == (0, pid, 1)  # the epoch of the next one
        done = await _until(lambda: described(client, "tv2"), lambda d: d[0] != "PrepareCommit")
        assert done == ("CompleteCommit", 1, [])  # (the markers follow the answer, as in Kafka)
        committed = await fetch(client, 1)
        assert committed.last_stable_offset == committed.high_watermark == 2  # the data and its marker
        assert await end_v5(client, "tv2", pid, 0, True) == (0, pid, 1)  # a retry gets the same answer
        assert await produce(client, "tv2", pid, 0, 1, b"zombie", version=12) == E.INVALID_PRODUCER_EPOCH
        assert await produce(client, "tv2", pid, 1, 0, b"second", version=12) == 0
        assert await end_v5(client, "tv2", pid, 1, False) == (0, pid, 2)
        await _until(lambda: described(client, "tv2"), lambda d: d[0] == "CompleteAbort")
        aborted = await fetch(client, 1, offset=2)  # (each batch has its own segment: timestamp 1)
        assert [(a.producer_id, a.first_offset) for a in aborted.aborted_transactions] == [(pid, 2)]
        assert await end_v5(client, "tv2", pid, 2, False) == (0, pid, 3)  # an abort of nothing bumps too
        await _until(lambda: described(client, "tv2"), lambda d: d[0] == "CompleteAbort" and d[1] == 3)
        assert (await end_v5(client, "tv2", pid, 3, True))[0] == E.INVALID_TXN_STATE  # nothing to commit
        assert (await end_v5(client, "tv2", pid, 9, False))[0] == E.PRODUCER_FENCED
        assert (await end_v5(client, "nobody", pid, 0, False))[0] == E.INVALID_PRODUCER_ID_MAPPING


async def test_partitions_outside_the_transaction_get_each_versions_error(client, server):
    with trio.fail_after(DEADLINE):
        pid = (await init(client, "tv1", version=4)).producer_id
        # KIP-890 part 1 verification, answered by the request's version (AddPartitionsToTxnManager).
        assert await produce(client, "tv1", pid, 0, 0, b"x", version=10) == E.INVALID_TXN_STATE
        assert await produce(client, "tv1", pid, 0, 0, b"x", version=11) == E.TRANSACTION_ABORTABLE
        assert await commit_offset(client, "tv1", pid, 0, "g1", version=3) == E.INVALID_TXN_STATE
        assert await commit_offset(client, "tv1", pid, 0, "g1", version=4) == E.TRANSACTION_ABORTABLE
        assert await described(client, "tv1") == ("Empty", 0, [])  # none of them added anything
        # EndTxn v4 keeps the classic rules on a v2 broker: no bump, no identity in the answer.
        assert await produce(client, "tv1", pid, 0, 0, b"y", version=12) == 0
        assert await end_v5(client, "tv1", pid, 0, True, version=4) == (0, -1, -1)
        done = await _until(lambda: described(client, "tv1"), lambda d: d[0] != "PrepareCommit")
        assert done == ("CompleteCommit", 0, [])
