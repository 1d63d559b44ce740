"""A transaction coordinator for tests: what coordinator/server.py builds for transactions, on
real files, without sockets.

`TxnHarness(tmp_path, **settings)` holds a data path with topic "t" (2 partitions), the
__consumer_offsets and __transaction_state runtimes on one LogManager, the marker channel between
them and the services a broker uses. `async with h.running():` runs both runtimes (their timers,
loads and the deferred marker jobs). Time is trio's (TrioClock: MockClock in tests); logs use
log.flush.mode=interval so no fsync thread races MockClock's autojump.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import TopicRegistry
from coordinator.config import Config
from coordinator.groups.lifecycle import group_runtime
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.service import GroupService
from coordinator.groups.txn_offset_commit import OffsetsTxnMarkers
from coordinator.runtime.clock import TrioClock
from coordinator.txn.end_txn import EndTxnParams, EndTxnResult
from coordinator.txn.lifecycle import txn_runtime
from coordinator.txn.markers import MarkerChannel
from coordinator.txn.ops import AddPartitionsParams, InitPidParams
from coordinator.txn.placement import partition_for as txn_partition_for
from coordinator.txn.service import TxnService
from coordinator.txn.state import TransactionMetadata
from storage.batch import Record, encode_batch
from storage.log_manager import LogManager
from tests.support.runtime import OneBroker


class TxnHarness:
    def __init__(self, data_dir: str | Path, **settings: Any) -> None:
        self.data_dir = Path(data_dir)
        self.config = Config(
            {
                "data.dir": str(data_dir),
                "log.flush.mode": "interval",
                **{k.replace("_", "."): v for k, v in settings.items()},
            }
        )
        self.clock = TrioClock(epoch_ms=1_000_000)
        self.topics = TopicRegistry(self.data_dir)
        self.topics.load()
        self.topics.ensure("t", 2)
        self.logs = LogManager(self.data_dir, self.clock)
        self.data = DataPath(self.config, self.topics, self.clock, self.logs)
        self.data.open_all()
        self.groups_runtime = group_runtime(self.config, self.clock, self.logs, topics=self.topics)
        self.markers = MarkerChannel(self.data, OffsetsTxnMarkers(self.groups_runtime))
        self.runtime = txn_runtime(self.config, self.clock, self.logs, self.data.producer_ids, self.markers)
        self.txn = TxnService(self.runtime, OneBroker(), 0, self.config.transaction_max_timeout_ms)
        self.groups = GroupService(self.groups_runtime, OneBroker(), 0)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[TxnHarness]:
        async with trio.open_nursery() as nursery:
            await nursery.start(self.groups_runtime.run)
            await nursery.start(self.txn_run)
            await self.groups_runtime.loaded.wait()
            await self.runtime.loaded.wait()
            yield self
            nursery.cancel_scope.cancel()

    async def txn_run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        await self.runtime.run(task_status=task_status)

    def close(self) -> None:
        self.data.close()
        self.logs.close()

    # -- what a client does -------------------------------------------------------------------
    async def init(self, txn_id: str = "tx", timeout_ms: int = 60_000, pid: int = -1, epoch: int = -1) -> Any:
        return await self.txn.init_producer_id(InitPidParams(txn_id, timeout_ms, pid, epoch))

    async def add(
        self, pid: int, epoch: int, *partitions: tuple[str, int], txn_id: str = "tx", client_version: int = 0
    ) -> Any:
        return await self.txn.add_partitions(
            AddPartitionsParams(txn_id, pid, epoch, tuple(partitions), client_version=client_version)
        )

    async def add_offsets(self, pid: int, epoch: int, group: str, txn_id: str = "tx") -> Any:
        return await self.add(pid, epoch, (OFFSETS_TOPIC, partition_for(group)), txn_id=txn_id)

    async def end(self, pid: int, epoch: int, commit: bool, txn_id: str = "tx") -> Any:
        """EndTxn v0-v4 (transaction.version 0 rules): the error."""
        return (await self.txn.end_txn(EndTxnParams(txn_id, pid, epoch, commit))).error

    async def end_v2(self, pid: int, epoch: int, commit: bool, txn_id: str = "tx") -> EndTxnResult:
        """EndTxn v5 (KIP-890 part 2): error, and the next transaction's producer id and epoch."""
        return await self.txn.end_txn(EndTxnParams(txn_id, pid, epoch, commit, client_version=2))

    async def produce(self, pid: int, epoch: int, partition: int, *values: bytes, seq: int = 0) -> Any:
        records = [Record(None, 1000 + i, b"k", v) for i, v in enumerate(values)]
        part = self.data.partition("t", partition)
        assert part is not None
        return await part.append(
            encode_batch(0, records, producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=True),
            1 << 20,
        )

    def meta(self, txn_id: str = "tx") -> TransactionMetadata | None:
        shard = self.runtime.shard(txn_partition_for(txn_id, self.runtime.num_partitions))
        return None if shard is None else shard.get(txn_id)

    async def settled(self, txn_id: str = "tx") -> TransactionMetadata:
        """Wait (on the runtime, no sleeping) until the id's markers are all written."""
        with trio.fail_after(30):
            while True:
                meta = self.meta(txn_id)
                assert meta is not None
                if not meta.state.is_prepare:
                    return meta
                await trio.sleep(0.01)
