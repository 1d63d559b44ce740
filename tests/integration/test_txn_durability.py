"""A client's AddPartitionsToTxn is answered before its fsync; the first transactional batch on the
partition is appended only once that record is durable (TxnService.add_partitions / durable).

The fsync of __transaction_state is held at a gate (a real fdatasync behind it, in its worker
thread) so the order is seen, not timed: while it is held, AddPartitions answers and the data log
stays untouched by the Produce that waits; once it passes, the batch is appended and answered.
"""

from __future__ import annotations

import os
import threading

import pytest
import trio
import trio.testing

import storage.fsutil as fsutil
from coordinator.embed.embedded import open_server
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC, partition_for
from coordinator.txn.service import TxnService
from protocol.errors import ErrorCode as E
from tests.integration.raw_client import RawClient
from tests.integration.test_transactions import add, end, init, produce

DEADLINE = 20


class Gate:
    """Holds every fdatasync of a __transaction_state file while closed."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.opened.set()

    def wrap(self, real):  # type: ignore[no-untyped-def]
        def fdatasync(fd: int) -> None:
            if TRANSACTION_STATE_TOPIC in os.readlink(f"/proc/self/fd/{fd}") and not self.opened.is_set():
                self.opened.wait(DEADLINE)
            real(fd)

        return fdatasync


@pytest.mark.parametrize("verification", ["true", "false"])
async def test_the_first_batch_waits_for_the_record_that_added_its_partition(tmp_path, monkeypatch, verification):
    gate = Gate()
    monkeypatch.setattr(fsutil, "fdatasync", gate.wrap(fsutil.fdatasync))
    waiting = trio.Event()
    real_durable = TxnService.durable

    async def durable(self: TxnService, transactional_id: str) -> E:
        waiting.set()  # a spy: the produce reached its wait
        return await real_durable(self, transactional_id)

    monkeypatch.setattr(TxnService, "durable", durable)
    settings = {"log.flush.mode": "group_commit", "transaction.partition.verification.enable": verification}
    with trio.fail_after(DEADLINE):
        async with open_server(tmp_path / "data", topics={"orders": 1}, settings=settings) as server:
            client = await RawClient.connect(server.host, server.port)
            producer = await RawClient.connect(server.host, server.port)
            pid = (await init(client, "tx")).producer_id
            data_log = server.broker.data.partition("orders", 0)
            gate.opened.clear()
            assert await add(client, "tx", pid, 0) == [E.NONE]  # answered with its fsync held
            txn_log = server.txn_runtime.writer.log(partition_for("tx", 50))
            assert txn_log.durable_offset < txn_log.log_end_offset
            answers: list[int] = []

            async def first_batch() -> None:
                answers.append(await produce(producer, "tx", pid, 0, 0, b"v"))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(first_batch)
                await waiting.wait()
                await trio.testing.wait_all_tasks_blocked()
                assert data_log.high_watermark == 0 and data_log.log_end_offset == 0  # not appended yet
                assert answers == []
                gate.opened.set()
            assert answers == [E.NONE] and data_log.log_end_offset == 1
            assert txn_log.durable_offset == txn_log.log_end_offset
            assert await end(client, "tx", pid, 0, True) == E.NONE
            await client.aclose()
            await producer.aclose()
