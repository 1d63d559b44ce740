"""The share coordinator for tests: what coordinator/server.py builds for __share_group_state, on
real files, without sockets.

`ShareStateHarness(data_dir, **settings)` holds the topic registry (topic "t", 4 partitions: the
metadata image topic ids are checked in), the LogManager, the __share_group_state runtime and its
service. `async with h.running(load=...)` runs the runtime (its loads and timers); leaving it
closes the logs cleanly. Settings are Kafka names with "_" for "." (share_coordinator_..._ms).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from coordinator.broker.topics import TopicRegistry
from coordinator.config import Config
from coordinator.runtime.clock import TimerClock, TrioClock
from coordinator.share.persister import SharePartitionKey, StateBatch
from coordinator.share.state.lifecycle import share_state_runtime
from coordinator.share.state.service import ShareStateService
from storage.log_manager import LogManager

ACKNOWLEDGED, AVAILABLE = 2, 0


class ShareStateHarness:
    def __init__(
        self, data_dir: str | Path, *, flush: str = "interval", clock: TimerClock | None = None, **settings: Any
    ) -> None:
        self.data_dir = Path(data_dir)
        self.config = Config(
            {
                "data.dir": str(data_dir),
                "log.flush.mode": flush,
                "share.coordinator.state.topic.num.partitions": 3,
                **{k.replace("_", "."): v for k, v in settings.items()},
            }
        )
        self.clock = clock or TrioClock(epoch_ms=1_000_000)  # a ManualClock: timers fire when it moves
        self.topics = TopicRegistry(self.data_dir)
        self.topics.load()
        self.topic = self.topics.ensure("t", 4)
        self.logs = LogManager(self.data_dir, self.clock)
        self.runtime = share_state_runtime(self.config, self.clock, self.logs, self.topics)
        self.service = ShareStateService(self.runtime)

    def key(self, group: str = "sg", partition: int = 0) -> SharePartitionKey:
        return SharePartitionKey(group, self.topic.topic_id, partition)

    @asynccontextmanager
    async def running(self, *, load: bool = True) -> AsyncIterator[ShareStateHarness]:
        async with trio.open_nursery() as nursery:
            await nursery.start(self._run, load)
            if load:
                await self.runtime.loaded.wait()
            yield self
            nursery.cancel_scope.cancel()
        self.logs.close()

    async def _run(self, load: bool, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        await self.runtime.run(load=load, task_status=task_status)

    async def ack(self, key: SharePartitionKey, offset: int, leader_epoch: int = 0, state_epoch: int = 0) -> int:
        """What a share partition writes when one record is acknowledged."""
        batch = StateBatch(offset, offset, ACKNOWLEDGED, 1)
        return await self.service.write(key, state_epoch, leader_epoch, -1, -1, (batch,))


def acknowledged(batches: tuple[StateBatch, ...]) -> set[int]:
    """The offsets the batches hold as ACKNOWLEDGED."""
    return {o for b in batches if b.delivery_state == ACKNOWLEDGED for o in range(b.first_offset, b.last_offset + 1)}
