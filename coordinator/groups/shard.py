"""GroupShard: every group and committed offset of one __consumer_offsets partition.

Kafka's GroupCoordinatorShard (GroupMetadataManager + OffsetMetadataManager) for one partition:
the in-memory state the runtime's single writer changes, rebuilt from the partition's records by
`replay` at load and kept current by the same `replay` for every record an operation applies
(runtime/operation.py). `groups` holds classic groups and KIP-848 consumer groups under their ids
(one namespace, as in Kafka); `group()` finds classic ones, `consumer_group()` consumer ones.
Timers go through the shard's `ShardTimers` view of the runtime's timer queue; `topics` is the
runtime's read-only topics image. Member ids come from an injectable UUID source.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from coordinator.groups.consumer.context import NoClassicBridge
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.records import is_consumer_record
from coordinator.groups.consumer.replay import replay_consumer_record
from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.offset_store import OffsetStore
from coordinator.groups.replay import AnyGroup, replay
from coordinator.groups.topics_image import TopicsImage
from coordinator.runtime.operation import OpContext
from coordinator.runtime.timers import ShardTimers, Timers


class _ReplayBridge(NoClassicBridge):
    """What replay needs of the classic side: a consumer-group record replaces a "simple" classic
    group (offsets only), Kafka getOrMaybeCreatePersistedConsumerGroup."""

    def replaceable_on_replay(self, group: Any) -> bool:
        return isinstance(group, ClassicGroup) and group.is_simple()


REPLAY_BRIDGE = _ReplayBridge()


class GroupShard:
    def __init__(
        self,
        partition: int = 0,
        config: GroupConfig | None = None,
        timers: ShardTimers | None = None,
        uuid_source: Callable[[], str] | None = None,
        topics: TopicsImage | None = None,
    ) -> None:
        self.partition = partition
        self.config = config or GroupConfig()
        self.timers = timers if timers is not None else ShardTimers(Timers(), partition)
        self.groups: dict[str, AnyGroup] = {}
        self.offsets = OffsetStore()
        self.topics = topics if topics is not None else TopicsImage()
        # The topics image version this shard's groups were last told about (onNewMetadataImage).
        self.topics_seen = self.topics.version
        self._uuid = uuid_source or (lambda: str(uuid.uuid4()))

    def replay(self, record: Any, now_ms: int) -> bool:
        """Apply one record (live, through OpContext.apply, and at load)."""
        if is_consumer_record(record):
            replay_consumer_record(self.groups, record, REPLAY_BRIDGE)
            return True
        return replay(record, self.groups, self.offsets, now_ms)

    def new_member_id(self, prefix: str) -> str:
        """Kafka ClassicGroup.generateMemberId: `<group.instance.id or client.id>-<uuid>`."""
        return f"{prefix}-{self._uuid()}"

    def new_uuid(self) -> uuid.UUID:
        """A random uuid (KIP-848 member ids the coordinator makes); from the injected source when
        it gives uuid text, so tests can predict them."""
        text = self._uuid()
        try:
            return uuid.UUID(text)
        except ValueError:
            return uuid.uuid5(uuid.NAMESPACE_OID, text)

    def group(self, group_id: str) -> ClassicGroup | None:
        """The classic group with this id (None if there is none, or it is a consumer group)."""
        group = self.groups.get(group_id)
        return group if isinstance(group, ClassicGroup) else None

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        group = self.groups.get(group_id)
        return group if isinstance(group, ConsumerGroup) else None

    def create_group(self, group_id: str, now_ms: int) -> ClassicGroup:
        """Kafka getOrMaybeCreateClassicGroup: a new classic group lives in memory at once
        (JoinGroup writes it too; an offset commit's replay creates a simple group)."""
        group = ClassicGroup(group_id, now_ms)
        self.groups[group_id] = group
        return group


# What every group and offset operation runs against.
GroupContext = OpContext[GroupShard]
