"""ShareStateShard: the state of every share-partition kept in one __share_group_state partition
(Kafka's ShareCoordinatorShard maps: shareStateMap, leaderEpochMap, stateEpochMap,
snapshotUpdateCount, and its ShareCoordinatorOffsetsManager).

Changed only through `replay`, live (OpContext.apply) and at load, record by record in log order
(every ShareUpdate counts, so the loader replays them all: `ShareStateShards.replay_every_record`).
A ShareSnapshot replaces the key's state, raises the recorded leader and state epochs and resets
the update count once it reached the limit; a ShareUpdate merges into the state (batches through
the combiner) and counts one more update; a snapshot tombstone forgets the key. `written` learns
each record's log offset (after the append, and at load) for pruning (offsets.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from coordinator.runtime.operation import OpContext
from coordinator.runtime.timers import ShardTimers, Timers
from coordinator.share.persister import SharePartitionKey, StateBatch
from coordinator.share.state.combiner import combine_state_batches
from coordinator.share.state.offsets import SnapshotOffsets
from coordinator.share.state.records import SNAPSHOT_TYPE, ShareSnapshot, ShareTombstone, ShareUpdate

UNINITIALIZED_EPOCH = 0  # ShareGroupOffset.UNINITIALIZED_EPOCH
NO_TIMESTAMP = 0


@dataclass(frozen=True)
class ShareStateSettings:
    """Kafka's ShareCoordinatorConfig (the share.coordinator.* settings of the same names)."""

    snapshot_update_records_per_snapshot: int = 500
    cold_partition_snapshot_interval_ms: int = 300_000
    prune_interval_ms: int = 300_000  # share.coordinator.state.topic.prune.interval.ms

    @classmethod
    def from_config(cls, config: Any) -> ShareStateSettings:
        return cls(
            config.get("share.coordinator.snapshot.update.records.per.snapshot"),
            config.get("share.coordinator.cold.partition.snapshot.interval.ms"),
            config.get("share.coordinator.state.topic.prune.interval.ms"),
        )


@dataclass(frozen=True, slots=True)
class ShareGroupOffset:
    """One share-partition's state as the coordinator holds it (Kafka's ShareGroupOffset)."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int
    batches: tuple[StateBatch, ...]
    create_timestamp: int = NO_TIMESTAMP
    write_timestamp: int = NO_TIMESTAMP

    @classmethod
    def of_snapshot(cls, r: ShareSnapshot) -> ShareGroupOffset:
        return cls(
            r.snapshot_epoch,
            r.state_epoch,
            r.leader_epoch,
            r.start_offset,
            r.delivery_complete_count,
            r.batches,
            r.create_timestamp,
            r.write_timestamp,
        )

    @classmethod
    def of_update(cls, r: ShareUpdate) -> ShareGroupOffset:
        """An update with no snapshot before it (ShareGroupOffset.fromRecord(ShareUpdateValue))."""
        return cls(
            r.snapshot_epoch, UNINITIALIZED_EPOCH, r.leader_epoch, r.start_offset, r.delivery_complete_count, r.batches
        )

    def merged(self, r: ShareUpdate) -> ShareGroupOffset:
        """ShareCoordinatorShard.merge: -1 start offset and leader epoch mean unchanged; the
        update's delivery complete count is the writer's newest (KIP-1226)."""
        start = self.start_offset if r.start_offset == -1 else r.start_offset
        leader = self.leader_epoch if r.leader_epoch == -1 else r.leader_epoch
        return ShareGroupOffset(
            self.snapshot_epoch,
            self.state_epoch,
            leader,
            start,
            r.delivery_complete_count,
            combine_state_batches(self.batches, r.batches, start),
            self.create_timestamp,
            self.write_timestamp,
        )


class TopicsView(Protocol):
    """The topics as the coordinator sees them (groups/topics_image.py's TopicsImage)."""

    def refresh(self) -> None: ...
    def by_id(self, topic_id: uuid.UUID) -> Any: ...  # with num_partitions, or None


class ShareStateShard:
    def __init__(
        self,
        partition: int = 0,
        settings: ShareStateSettings | None = None,
        timers: ShardTimers | None = None,
        topics: TopicsView | None = None,
    ) -> None:
        self.partition = partition
        self.settings = settings or ShareStateSettings()
        self.timers = timers if timers is not None else ShardTimers(Timers(), partition)
        self.topics = topics
        self.states: dict[SharePartitionKey, ShareGroupOffset] = {}
        self.leader_epochs: dict[SharePartitionKey, int] = {}
        self.state_epochs: dict[SharePartitionKey, int] = {}
        self.update_counts: dict[SharePartitionKey, int] = {}
        self.offsets = SnapshotOffsets()

    def replay(self, record: Any, now_ms: int) -> bool:
        """Apply one record (live and at load)."""
        if isinstance(record, ShareSnapshot):
            key = record.key
            self._raise(self.leader_epochs, key, record.leader_epoch)
            self._raise(self.state_epochs, key, record.state_epoch)
            self.states[key] = ShareGroupOffset.of_snapshot(record)
            if self.update_counts.get(key, -1) >= self.settings.snapshot_update_records_per_snapshot:
                self.update_counts[key] = 0
            return True
        if isinstance(record, ShareUpdate):
            key = record.key
            self._raise(self.leader_epochs, key, record.leader_epoch)
            current = self.states.get(key)
            self.states[key] = ShareGroupOffset.of_update(record) if current is None else current.merged(record)
            self.update_counts[key] = self.update_counts[key] + 1 if key in self.update_counts else 0
            return True
        if isinstance(record, ShareTombstone):
            if record.record_type != SNAPSHOT_TYPE:
                return False  # Kafka never writes an update tombstone; nothing to undo
            self.states.pop(record.key, None)
            self.leader_epochs.pop(record.key, None)
            self.state_epochs.pop(record.key, None)
            self.update_counts.pop(record.key, None)
            return True
        return False  # UnknownShareRecord: skipped, as Kafka's loader skips it

    def written(self, records: Sequence[Any], first_offset: int) -> None:
        """The records just replayed sit at `first_offset`, `first_offset + 1`, ...: snapshots and
        tombstones move the pruning point (Kafka's replay(offset, ...) -> offsetsManager)."""
        for offset, record in enumerate(records, first_offset):
            if isinstance(record, ShareSnapshot):
                self.offsets.snapshot_written(record.key, offset, False)
            elif isinstance(record, ShareTombstone) and record.record_type == SNAPSHOT_TYPE:
                self.offsets.snapshot_written(record.key, offset, True)

    @staticmethod
    def _raise(table: dict[SharePartitionKey, int], key: SharePartitionKey, epoch: int) -> None:
        """maybeUpdateLeaderEpochMap / maybeUpdateStateEpochMap: the recorded epoch only grows."""
        if key not in table or table[key] < epoch:
            table[key] = epoch

    def partition_count(self, topic_id: uuid.UUID) -> int | None:
        """The topic's partition count in the metadata image, None if it has no such topic."""
        if self.topics is None:
            return None
        self.topics.refresh()
        meta = self.topics.by_id(topic_id)
        return None if meta is None else int(meta.num_partitions)


ShareContext = OpContext[ShareStateShard]
