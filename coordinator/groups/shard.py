"""GroupShard: every group and committed offset of one __consumer_offsets partition.

Kafka's GroupCoordinatorShard (GroupMetadataManager + OffsetMetadataManager) for one partition:
the in-memory state the runtime's single writer changes, rebuilt from the partition's records by
`replay` at load and kept current by the same `replay` for every record an operation applies
(runtime/operation.py). Timers go through the shard's `ShardTimers` view of the runtime's timer
queue. Member ids come from an injectable UUID source so tests can predict them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.offset_store import OffsetStore
from coordinator.groups.replay import replay
from coordinator.runtime.operation import OpContext
from coordinator.runtime.timers import ShardTimers, Timers


class GroupShard:
    def __init__(
        self,
        partition: int = 0,
        config: GroupConfig | None = None,
        timers: ShardTimers | None = None,
        uuid_source: Callable[[], str] | None = None,
    ) -> None:
        self.partition = partition
        self.config = config or GroupConfig()
        self.timers = timers if timers is not None else ShardTimers(Timers(), partition)
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets = OffsetStore()
        self._uuid = uuid_source or (lambda: str(uuid.uuid4()))

    def replay(self, record: Any, now_ms: int) -> bool:
        """Apply one record (live, through OpContext.apply, and at load)."""
        return replay(record, self.groups, self.offsets, now_ms)

    def new_member_id(self, prefix: str) -> str:
        """Kafka ClassicGroup.generateMemberId: `<group.instance.id or client.id>-<uuid>`."""
        return f"{prefix}-{self._uuid()}"

    def group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def create_group(self, group_id: str, now_ms: int) -> ClassicGroup:
        """Kafka getOrMaybeCreateClassicGroup: a new classic group lives in memory at once
        (JoinGroup writes it too; an offset commit's replay creates a simple group)."""
        group = ClassicGroup(group_id, now_ms)
        self.groups[group_id] = group
        return group


# What every group and offset operation runs against.
GroupContext = OpContext[GroupShard]
