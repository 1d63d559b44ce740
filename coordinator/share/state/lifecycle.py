"""How the runtime creates and loads share-state shards, and the __share_group_state runtime
itself (Kafka's ShareCoordinatorService startup: the shard builder, setupRecordPruning,
setupSnapshotColdPartitions).

__share_group_state has cleanup.policy=delete with retention.ms=-1 (ShareCoordinatorService
.shareGroupStateTopicConfigs, as KIP-932 defines it), never compacted: a key's ShareUpdate
records share one record key, and each counts. The coordinator prunes instead: every
share.coordinator.state.topic.prune.interval.ms a loaded shard tombstones the states of deleted
topics (onTopicsDeleted, here found by looking) and deletes the segments wholly below its last
redundant offset (offsets.py; Kafka deletes records below it, kgc whole segments, never past what
is durable); every share.coordinator.cold.partition.snapshot.interval.ms it re-snapshots states
not snapshotted since, so that quiet keys do not hold pruning back.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from typing import Any

from coordinator.groups.topics_image import TopicsImage, TopicSource
from coordinator.observe.reasons import because
from coordinator.runtime.clock import TimerClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime
from coordinator.runtime.partition_writer import PartitionWriter, internal_topic_log_config
from coordinator.runtime.timers import ShardTimers
from coordinator.share.state.ops import forget_deleted_topics, snapshot_cold_partitions
from coordinator.share.state.placement import SHARE_STATE_TOPIC
from coordinator.share.state.records import decode_record, encode_record
from coordinator.share.state.shard import ShareContext, ShareStateSettings, ShareStateShard, TopicsView
from storage.log import LogConfig
from storage.log_manager import LogManager

log = logging.getLogger(__name__)

SHARE_STATE_TOPIC_ID = uuid.uuid5(uuid.NAMESPACE_URL, "kgc:" + SHARE_STATE_TOPIC)


class SegmentPruner:
    """Deletes the segments of a __share_group_state partition that lie wholly below an offset."""

    def __init__(self, writer: PartitionWriter) -> None:
        self._writer = writer

    def __call__(self, partition: int, below: int) -> int:
        log_ = self._writer.log(partition)
        if log_ is None:
            return 0
        try:  # only what is durable: the snapshot that makes a prefix redundant must survive a crash
            return log_.delete_segments_before(min(below, log_.durable_offset))
        except Exception as exc:  # the log is failed now; the partition's next append reloads it
            log.warning("pruning %s-%s below %s failed: %r", SHARE_STATE_TOPIC, partition, below, exc)
            return 0


class ShareStateShards:
    topic = SHARE_STATE_TOPIC
    replay_every_record = True  # every ShareUpdate of a key counts: no latest-per-key load

    def __init__(
        self, settings: ShareStateSettings, topics: TopicsView | None = None, prune: SegmentPruner | None = None
    ) -> None:
        self.settings = settings
        self.topics = topics
        self.prune = prune

    def new_shard(self, partition: int, timers: ShardTimers) -> ShareStateShard:
        return ShareStateShard(partition, self.settings, timers, self.topics)

    def encode(self, record: Any) -> tuple[bytes, bytes | None]:
        return encode_record(record)

    def decode(self, key: bytes, value: bytes | None) -> Any:
        return decode_record(key, value)

    def on_loaded(self, ctx: ShareContext) -> None:
        _schedule_cold(ctx.shard, ctx.now_ms)
        self._schedule_prune(ctx.shard, ctx.now_ms)

    def on_unloaded(self, shard: ShareStateShard) -> None:
        """Its timers are cancelled by the runtime; nothing else outlives the shard."""

    def _schedule_prune(self, shard: ShareStateShard, now_ms: int) -> None:
        shard.timers.schedule(("share-prune",), now_ms + shard.settings.prune_interval_ms, self._prune_tick)

    def _prune_tick(self, ctx: ShareContext) -> None:
        because("share.coordinator.state.topic.prune.interval.ms passed (the coordinator's periodic pruning)")
        forget_deleted_topics(ctx)
        below = ctx.shard.offsets.last_redundant_offset()
        if below is not None and self.prune is not None:
            self.prune(ctx.shard.partition, below)
        self._schedule_prune(ctx.shard, ctx.now_ms)


def _schedule_cold(shard: ShareStateShard, now_ms: int) -> None:
    shard.timers.schedule(("share-cold",), now_ms + shard.settings.cold_partition_snapshot_interval_ms, _cold_tick)


def _cold_tick(ctx: ShareContext) -> None:
    because("share.coordinator.cold.partition.snapshot.interval.ms passed (re-snapshotting quiet states)")
    snapshot_cold_partitions(ctx)
    _schedule_cold(ctx.shard, ctx.now_ms)


def share_state_log_config(config: Any) -> LogConfig:
    base = internal_topic_log_config(config, config.get("share.coordinator.state.topic.segment.bytes"))
    return dataclasses.replace(base, cleanup_policy="delete", retention_ms=-1, retention_bytes=-1)


def share_state_runtime(
    config: Any, clock: TimerClock, logs: LogManager, topics: TopicSource | None = None
) -> CoordinatorRuntime[ShareStateShard]:
    """__share_group_state in the data dir's LogManager, its writer, and its shards' runtime;
    `topics` is the broker's topic registry (the metadata image the shards check topic ids in)."""
    writer = PartitionWriter(
        SHARE_STATE_TOPIC,
        logs,
        config.get("share.coordinator.state.topic.num.partitions"),
        share_state_log_config(config),
        clock,
        encode_record,
    )
    kind = ShareStateShards(ShareStateSettings.from_config(config), TopicsImage(topics, clock), SegmentPruner(writer))
    return CoordinatorRuntime(kind, writer, clock, load_delay_ms=config.coordinator_load_delay_ms)
