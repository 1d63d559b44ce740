"""A group coordinator runtime for tests: the real runtime, shards and writer on real files, plus
a writer that remembers what it appended and can hold durability back.

`GroupHarness(tmp_path, **group_settings)` builds what coordinator/server.py builds for groups
(writer -> CoordinatorRuntime -> GroupService) with a predictable member-id source and a clock
that follows trio's (MockClock in tests). `writer.hold()` keeps every wait for durability parked
until `writer.release()`, so a test can see that no reply leaves before its records are durable.
Durability defaults to log.flush.mode=interval: a real fsync runs in a worker thread, and while
a task waits on a thread MockClock's autojump would race ahead in virtual time.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.lifecycle import GroupShards
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.records import encode_record
from coordinator.groups.service import GroupService
from coordinator.groups.shard import GroupShard
from coordinator.runtime.clock import TimerClock, TrioClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime
from coordinator.runtime.partition_writer import PartitionWriter
from storage.log import LogConfig
from storage.log_manager import LogManager


class RecordingWriter(PartitionWriter):
    """A real PartitionWriter that also lists the records appended and can hold durability."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: list[Any] = []
        self.durable_count = 0
        self._released = trio.Event()
        self._released.set()

    def append(self, partition: int, records: Sequence[Any]) -> int:
        offset = super().append(partition, records)
        self.records.extend(records)
        return offset

    async def wait_durable(self, partition: int, offset: int) -> None:
        await self._released.wait()
        await super().wait_durable(partition, offset)
        self.durable_count = len(self.records)

    def hold(self) -> None:
        self._released = trio.Event()

    def release(self) -> None:
        self._released.set()


class OneBroker:
    """Broker 0 leads every partition (what a one-broker cluster answers)."""

    def leader(self, topic_name: str, partition: int) -> int:
        return 0


class GroupHarness:
    def __init__(
        self,
        data_dir: str | Path,
        *,
        num_partitions: int = 50,
        epoch_ms: int = 0,
        durability: str = "interval",
        clock: TimerClock | None = None,
        **settings: Any,
    ) -> None:
        counter = itertools.count(1)
        self.clock = clock if clock is not None else TrioClock(epoch_ms=epoch_ms)
        self.logs = LogManager(data_dir, self.clock)
        self.writer = RecordingWriter(
            OFFSETS_TOPIC,
            self.logs,
            num_partitions,
            LogConfig(cleanup_policy="compact", durability=durability),
            self.clock,
            encode_record,
        )
        self.runtime: CoordinatorRuntime[GroupShard] = CoordinatorRuntime(
            GroupShards(GroupConfig(**settings), uuid_source=lambda: f"u{next(counter)}"), self.writer, self.clock
        )
        self.service = GroupService(self.runtime, OneBroker(), 0)

    def shard(self, group_id: str = "g") -> GroupShard:
        shard = self.runtime.shard(partition_for(group_id, self.runtime.num_partitions))
        assert shard is not None, "the group's partition is not active"
        return shard

    def group(self, group_id: str = "g") -> ClassicGroup | None:
        return self.shard(group_id).group(group_id)
