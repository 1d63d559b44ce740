"""What the transcript and the control plane see of transactions: each state change with its
cause, the transactions in snapshot(), and the manual clock stepping the transaction timers."""

from __future__ import annotations

import io
import json

import trio

from coordinator.embed.embedded import open_server
from coordinator.tools.transcript_render import render
from protocol.api import ApiKey
from protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from tests.integration.raw_client import RawClient


async def _begin(server, txn: str, timeout_ms: int = 60_000) -> tuple[RawClient, int]:
    client = await RawClient.connect(server.host, server.port)
    init = await client.request(
        ApiKey.INIT_PRODUCER_ID, 4, InitProducerIdRequest(transactional_id=txn, transaction_timeout_ms=timeout_ms)
    )
    await client.request(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=txn,
            v3_and_below_producer_id=init.producer_id,
            v3_and_below_producer_epoch=0,
            v3_and_below_topics=[AddPartitionsToTxnTopic("orders", [0])],
        ),
    )
    return client, init.producer_id


async def test_the_transcript_names_each_transaction_change_and_its_cause(tmp_path):
    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", topics={"orders": 1}, settings={"transcript.file": str(path)}) as server:
        with trio.fail_after(20):
            client, pid = await _begin(server, "tx-seen")
            await client.request(ApiKey.END_TXN, 3, EndTxnRequest("tx-seen", pid, 0, True))
            while not any(e.get("to") == "CompleteCommit" for e in _events(path)):
                await trio.sleep(0.01)
            await client.aclose()
    changes = [(e["from"], e["to"], e["reason"]) for e in _events(path) if e["type"] == "transaction"]
    assert [c[:2] for c in changes] == [
        ("-", "Empty"),
        ("Empty", "Ongoing"),
        ("Ongoing", "PrepareCommit"),
        ("PrepareCommit", "CompleteCommit"),
    ]
    assert changes[0][2].startswith("InitProducerId from client")
    assert changes[1][2].startswith("AddPartitionsToTxn from client")
    assert changes[3][2] == "every COMMIT marker of 'tx-seen' is durable"
    out = io.StringIO()
    assert render(path.read_text().splitlines(keepends=True), None, out) == 0  # `kgc transcript t.jsonl`
    assert (
        "[txn tx-seen] == Ongoing -> PrepareCommit (producer 0 epoch 0)  because EndTxn from client" in out.getvalue()
    )


def _events(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_the_manual_clock_times_a_transaction_out_and_the_snapshot_shows_it(tmp_path):
    settings = {
        "clock.mode": "manual",
        "control.enable": True,
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
    }
    async with open_server(tmp_path / "data", topics={"orders": 1}, settings=settings) as server:
        with trio.fail_after(20):
            client, pid = await _begin(server, "tx-clock", timeout_ms=5_000)
            [txn] = server.control.snapshot()["transactions"]
            assert (txn["transactional_id"], txn["state"], txn["partitions"]) == ("tx-clock", "Ongoing", ["orders-0"])
            await server.control.advance_clock(3_000)
            assert server.control.snapshot()["transactions"][0]["state"] == "Ongoing"  # not yet
            await server.control.advance_clock(3_000)  # past its 5 s timeout: the check aborts it
            while server.control.snapshot()["transactions"][0]["state"] != "CompleteAbort":
                await trio.sleep(0.01)
            assert server.control.snapshot()["transactions"][0]["producer_epoch"] == 1  # fenced
            await client.aclose()
