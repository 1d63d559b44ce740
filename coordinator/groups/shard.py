"""GroupShard: every group and committed offset of one __consumer_offsets partition.

Kafka's GroupCoordinatorShard (GroupMetadataManager + OffsetMetadataManager) for one partition:
the in-memory state the runtime's single writer changes, rebuilt from the partition's records by
`replay` at load and kept current by the same `replay` for every record an operation applies
(runtime/operation.py). `groups` holds classic groups, KIP-848 consumer groups and KIP-932 share
groups under their ids (one namespace, as in Kafka); `group()` finds classic ones,
`consumer_group()` consumer ones, `share_group()` share ones. Timers go through the shard's
`ShardTimers` view of the runtime's timer queue; `topics` is the runtime's read-only topics image;
`share` (the server's ShareSettings) and `group_configs` (dynamic GROUP configs) are shared by every
shard and read at use time. Member ids come from an injectable UUID source. Offsets of open
transactions wait in `txn_offsets` for their marker (txn_offsets.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from coordinator.groups.consumer.context import NoClassicBridge
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.records import is_consumer_record
from coordinator.groups.consumer.replay import replay_consumer_record
from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.offset_store import OffsetStore
from coordinator.groups.records import OffsetCommitRecord, OffsetTombstone
from coordinator.groups.replay import AnyGroup, replay, replay_offset_commits
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.share.records import is_share_record
from coordinator.groups.share.replay import replay_share_record
from coordinator.groups.topics_image import TopicsImage
from coordinator.groups.txn_offsets import TransactionalOffsets
from coordinator.runtime.operation import OpContext
from coordinator.runtime.timers import ShardTimers, Timers
from coordinator.share.settings import GroupOverrides, ShareSettings


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
        share: ShareSettings | None = None,
        group_configs: GroupOverrides | None = None,
    ) -> None:
        self.partition = partition
        self.config = config or GroupConfig()
        self.timers = timers if timers is not None else ShardTimers(Timers(), partition)
        self.groups: dict[str, AnyGroup] = {}
        self.offsets = OffsetStore()
        self.txn_offsets = TransactionalOffsets()
        self.topics = topics if topics is not None else TopicsImage()
        # The topics image version this shard's groups were last told about (onNewMetadataImage).
        self.topics_seen = self.topics.version
        self._uuid = uuid_source or (lambda: str(uuid.uuid4()))
        self.share = share if share is not None else ShareSettings()
        self.group_configs = group_configs

    def replay(self, record: Any, now_ms: int) -> bool:
        """Apply one record (live, through OpContext.apply, and at load)."""
        if type(record) is OffsetCommitRecord:  # nearly every record: the path replay_all's take
            replay_offset_commits((record,), self.groups, self.offsets, now_ms)
            txn = self.txn_offsets
            if txn.open_by_group:  # open transactions must know what plain commits did
                txn.on_commit(record, txn.next_seq())
            return True
        if is_consumer_record(record):
            replay_consumer_record(self.groups, record, REPLAY_BRIDGE)
            return True
        if is_share_record(record):
            replay_share_record(self.groups, record, now_ms)
            return True
        applied = replay(record, self.groups, self.offsets, now_ms)
        txn = self.txn_offsets
        if txn.open_by_group and isinstance(record, OffsetTombstone):  # as _replay_commits does
            txn.on_tombstone(record.group_id, record.topic, record.partition)
        return applied

    def replay_all(self, records: Sequence[Any], now_ms: int) -> None:
        """`replay` of each record in order (OpContext.apply_all); a commit's offset records,
        the hot case, go through the same commit path in one pass."""
        for record in records:  # (a plain loop: a generator in all() costs more per record)
            if type(record) is not OffsetCommitRecord:
                for record in records:
                    self.replay(record, now_ms)
                return
        self._replay_commits(records, now_ms)

    def _replay_commits(self, records: Sequence[OffsetCommitRecord], now_ms: int) -> None:
        replay_offset_commits(records, self.groups, self.offsets, now_ms)
        txn = self.txn_offsets
        if txn.open_by_group:  # open transactions must know what plain commits did
            for record in records:
                txn.on_commit(record, txn.next_seq())

    def replay_transactional(self, record: Any, producer_id: int, now_ms: int) -> bool:
        """A record of a transactional batch: an offset commit waits for its marker
        (OffsetMetadataManager.replay with a producer id); anything else replays as usual."""
        if not isinstance(record, OffsetCommitRecord):
            return self.replay(record, now_ms)
        if record.group_id not in self.groups:  # the commit's simple group, as a plain commit makes it
            self.groups[record.group_id] = ClassicGroup(record.group_id, now_ms)
        self.txn_offsets.add(producer_id, record, self.txn_offsets.next_seq())
        return True

    def replay_end_transaction(self, producer_id: int, commit: bool, now_ms: int) -> None:
        """A COMMIT/ABORT marker (replayEndTransactionMarker)."""
        self.txn_offsets.end(producer_id, commit, self.offsets)

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

    def share_group(self, group_id: str) -> ShareGroup | None:
        group = self.groups.get(group_id)
        return group if isinstance(group, ShareGroup) else None

    def create_group(self, group_id: str, now_ms: int) -> ClassicGroup:
        """Kafka getOrMaybeCreateClassicGroup: a new classic group lives in memory at once
        (JoinGroup writes it too; an offset commit's replay creates a simple group)."""
        group = ClassicGroup(group_id, now_ms)
        self.groups[group_id] = group
        return group


# What every group and offset operation runs against.
GroupContext = OpContext[GroupShard]
