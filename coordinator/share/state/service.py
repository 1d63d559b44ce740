"""ShareStateService: the share coordinator as the share partitions and the group coordinator
reach it, the in-process `SharePersister` (Kafka's DefaultStatePersister and
ShareCoordinatorService, without the RPCs 83-87 between them).

Each call runs one operation on the key's __share_group_state partition (placement.py); its
answer is durable when the call returns. One service serves every broker of the cluster (it is
not bound to a node: the partition's runtime follows its leader). While the partition is loading
or failed, the call waits for it to settle, and while no broker leads it, it retries with backoff,
as DefaultStatePersister retries COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE /
NOT_COORDINATOR; after `retry_window_ms` it answers that error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import trio

from coordinator.observe.reasons import explain
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime, CoordinatorUnavailable, PartitionState
from coordinator.share.persister import SharePartitionKey, ShareState, StateBatch, StateSummary
from coordinator.share.state import ops
from coordinator.share.state.placement import partition_for
from coordinator.share.state.shard import ShareContext, ShareStateShard

P = TypeVar("P")
R = TypeVar("R")

RETRY_WINDOW_MS = 15_000  # about what DefaultStatePersister's backoff retries add up to
_FIRST_BACKOFF_S, _MAX_BACKOFF_S = 0.05, 1.0


class ShareStateService:
    def __init__(self, runtime: CoordinatorRuntime[ShareStateShard], retry_window_ms: int = RETRY_WINDOW_MS) -> None:
        self.runtime = runtime
        self.num_partitions = runtime.num_partitions
        self.retry_window_ms = retry_window_ms

    def partition_for(self, key: SharePartitionKey | str) -> int:
        return partition_for(key, self.num_partitions)

    async def _run(
        self, key: SharePartitionKey, op: Callable[[ShareContext, P], R], params: P, failed: Callable[[int], R]
    ) -> R:
        partition = self.partition_for(key)
        deadline = trio.current_time() + self.retry_window_ms / 1000
        backoff = _FIRST_BACKOFF_S
        while True:
            try:
                return await self.runtime.run_op(partition, op, params)
            except CoordinatorUnavailable as exc:
                error = exc
            remaining = deadline - trio.current_time()
            if remaining <= 0:
                explain(error.error_code, f"{error} (still, after {self.retry_window_ms} ms of retries)")
                return failed(error.error_code)
            with trio.move_on_after(remaining):
                if self.runtime.state(partition) in (PartitionState.LOADING, PartitionState.FAILED):
                    await self.runtime.settled(partition)
                else:  # no broker leads it: look again later
                    await trio.sleep(min(backoff, remaining))
                    backoff = min(backoff * 2, _MAX_BACKOFF_S)

    # -- SharePersister -------------------------------------------------------------------------
    async def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> int:
        return await self._run(key, ops.initialize, ops.InitializeParams(key, state_epoch, start_offset), int)

    async def read(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, ShareState | None]:
        return await self._run(key, ops.read, ops.ReadParams(key, leader_epoch), lambda code: (code, None))

    async def write(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: tuple[StateBatch, ...],
    ) -> int:
        params = ops.WriteParams(key, state_epoch, leader_epoch, start_offset, delivery_complete_count, tuple(batches))
        return await self._run(key, ops.write, params, int)

    async def delete(self, key: SharePartitionKey) -> int:
        return await self._run(key, ops.delete, key, int)

    async def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, StateSummary | None]:
        return await self._run(key, ops.read_summary, ops.ReadParams(key, leader_epoch), lambda code: (code, None))
