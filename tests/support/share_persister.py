"""An in-memory SharePersister for tests of share partitions without a share coordinator: it
keeps each key's state per offset, applies writes over it (newest wins, start offset prunes),
and can be told to fail the next writes. The real one is coordinator/share/state/."""

from __future__ import annotations

from coordinator.share.persister import (
    UNINITIALIZED_START_OFFSET,
    SharePartitionKey,
    ShareState,
    StateBatch,
    StateSummary,
)
from protocol.errors import ErrorCode


class MemoryPersister:
    def __init__(self, *, initialize_on_read: bool = True) -> None:
        self.initialize_on_read = initialize_on_read
        self.states: dict[SharePartitionKey, ShareState] = {}
        self.writes: list[tuple[SharePartitionKey, int, tuple[StateBatch, ...]]] = []  # (key, start, batches)
        self.fail_writes = 0  # answer this many writes with COORDINATOR_NOT_AVAILABLE

    async def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> int:
        self.states[key] = ShareState(state_epoch, start_offset, -1, -1, ())
        return ErrorCode.NONE

    async def read(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, ShareState | None]:
        state = self.states.get(key)
        if state is None:
            if not self.initialize_on_read:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
            state = self.states[key] = ShareState(0, UNINITIALIZED_START_OFFSET, leader_epoch, -1, ())
        return ErrorCode.NONE, state

    async def write(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: tuple[StateBatch, ...],
    ) -> int:
        if self.fail_writes:
            self.fail_writes -= 1
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        old = self.states.get(key)
        if old is None:
            return ErrorCode.INVALID_REQUEST
        per_offset = {
            o: (b.delivery_state, b.delivery_count)
            for b in old.batches
            for o in range(b.first_offset, b.last_offset + 1)
        }
        for b in batches:
            for o in range(b.first_offset, b.last_offset + 1):
                per_offset[o] = (b.delivery_state, b.delivery_count)
        start = start_offset if start_offset >= 0 else old.start_offset
        runs: list[StateBatch] = []
        for o in sorted(x for x in per_offset if x >= start):
            state, count = per_offset[o]
            last = runs[-1] if runs else None
            if (
                last is not None
                and last.last_offset == o - 1
                and (last.delivery_state, last.delivery_count) == (state, count)
            ):
                runs[-1] = StateBatch(last.first_offset, o, state, count)
            else:
                runs.append(StateBatch(o, o, state, count))
        self.states[key] = ShareState(state_epoch, start, leader_epoch, delivery_complete_count, tuple(runs))
        self.writes.append((key, start, batches))
        return ErrorCode.NONE

    async def delete(self, key: SharePartitionKey) -> int:
        self.states.pop(key, None)
        return ErrorCode.NONE

    async def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, StateSummary | None]:
        state = self.states.get(key)
        if state is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        return ErrorCode.NONE, StateSummary(
            state.state_epoch, state.start_offset, state.leader_epoch, state.delivery_complete_count
        )
