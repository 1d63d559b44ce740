"""How the runtime creates, loads and unloads group shards (Kafka's GroupCoordinatorShard
builder, onLoaded and onUnloaded, for __consumer_offsets).

`GroupShards` is what coordinator/runtime needs to run group shards without knowing groups: a
new empty shard per partition, the record codec, and the two lifecycle hooks; `group_runtime`
builds the whole __consumer_offsets runtime from the settings (and the broker's topics, which
consumer and share groups read through one shared TopicsImage; the share settings and the dynamic
group configs, which every shard reads at use time). After a load every member's session timer
starts from the load time (so members that never come back expire; consumer-group members still
revoking get their rebalance timeout too) and offset retention is scheduled; on unload every
parked JoinGroup/SyncGroup is answered NOT_COORDINATOR, so its client looks the coordinator up
again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from coordinator.groups.consumer.membership import on_loaded as consumer_on_loaded
from coordinator.groups.consumer_context import ShardConsumerContext
from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.migration.bridge import CLASSIC_BRIDGE
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.rebalance import schedule_heartbeat
from coordinator.groups.records import decode_record, encode_record, encode_records
from coordinator.groups.requests import UNKNOWN_MEMBER_ID, JoinGroupResult, SyncGroupResult
from coordinator.groups.retention import schedule_offset_expiration
from coordinator.groups.shard import GroupContext, GroupShard
from coordinator.groups.share.context import ShareContext
from coordinator.groups.share.membership import on_loaded as share_on_loaded
from coordinator.groups.topics_image import TopicsImage, TopicSource
from coordinator.runtime.clock import TimerClock
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime
from coordinator.runtime.partition_writer import PartitionWriter, WriterObserver, internal_topic_log_config
from coordinator.runtime.timers import ShardTimers
from coordinator.share.settings import GroupOverrides, ShareSettings
from protocol.errors import ErrorCode
from storage.log import LogConfig
from storage.log_manager import LogManager

# __consumer_offsets has no partition.metadata file (the runtime owns its dirs): a fixed id.
OFFSETS_TOPIC_ID = uuid.uuid5(uuid.NAMESPACE_URL, "kgc:" + OFFSETS_TOPIC)


class GroupShards:
    topic = OFFSETS_TOPIC

    def __init__(
        self,
        config: GroupConfig,
        uuid_source: Callable[[], str] | None = None,
        topics: TopicsImage | None = None,
        share: ShareSettings | None = None,
        group_configs: GroupOverrides | None = None,
    ) -> None:
        self.config = config
        self._uuid_source = uuid_source
        self.topics = topics if topics is not None else TopicsImage()
        self.share = share if share is not None else ShareSettings()
        self.group_configs = group_configs

    def new_shard(self, partition: int, timers: ShardTimers) -> GroupShard:
        return GroupShard(
            partition, self.config, timers, self._uuid_source, self.topics, self.share, self.group_configs
        )

    def encode(self, record: Any) -> tuple[bytes, bytes | None]:
        return encode_record(record)

    def decode(self, key: bytes, value: bytes | None) -> Any:
        return decode_record(key, value)

    def on_loaded(self, ctx: GroupContext) -> None:
        """GroupMetadataManager.onLoaded + scheduleGroupMetadataExpiration."""
        shard = ctx.shard
        for group in shard.groups.values():
            if isinstance(group, ClassicGroup):
                for member in group.members.values():
                    schedule_heartbeat(ctx, group, member.member_id, member.session_timeout_ms)
        consumer_on_loaded(ShardConsumerContext.of(ctx, CLASSIC_BRIDGE))
        share_on_loaded(ShareContext.of(ctx))
        schedule_offset_expiration(shard, ctx.now_ms)

    def on_unloaded(self, shard: GroupShard) -> None:
        """GroupMetadataManager.onUnloaded: parked requests learn the coordinator moved."""
        for group in shard.groups.values():
            if not isinstance(group, ClassicGroup):
                continue  # consumer groups park nothing
            for member in group.members.values():
                for reply, value in (
                    (member.awaiting_join, JoinGroupResult(ErrorCode.NOT_COORDINATOR, UNKNOWN_MEMBER_ID)),
                    (member.awaiting_sync, SyncGroupResult(ErrorCode.NOT_COORDINATOR)),
                ):
                    if reply is not None and not reply.done:
                        reply.resolve(value)
                member.awaiting_join = member.awaiting_sync = None


def offsets_log_config(config: Any) -> LogConfig:
    """LogConfig for __consumer_offsets (GroupCoordinatorService.groupMetadataTopicConfigs:
    cleanup.policy=compact, segment.bytes=offsets.topic.segment.bytes)."""
    return internal_topic_log_config(config, config.offsets_topic_segment_bytes)


def group_runtime(
    config: Any,
    clock: TimerClock,
    logs: LogManager,
    observer: WriterObserver | None = None,
    topics: TopicSource | None = None,
    share: ShareSettings | None = None,
    group_configs: GroupOverrides | None = None,
) -> CoordinatorRuntime[GroupShard]:
    """__consumer_offsets in the data dir's LogManager, with its writer and its shards' runtime;
    `topics` is the broker's topic registry (consumer and share groups follow it, read-only);
    `share` the server's share-group settings, `group_configs` its dynamic GROUP configs
    (GroupConfigManager)."""
    writer = PartitionWriter(
        OFFSETS_TOPIC,
        logs,
        config.offsets_topic_num_partitions,
        offsets_log_config(config),
        clock,
        encode_record,
        observer,
        encode_all=encode_records,
    )
    return CoordinatorRuntime(
        GroupShards(
            GroupConfig.from_config(config, group_configs.value if group_configs is not None else None),
            topics=TopicsImage(topics, clock),
            share=share if share is not None else ShareSettings.from_config(config),
            group_configs=group_configs,
        ),
        writer,
        clock,
        load_delay_ms=config.coordinator_load_delay_ms,
    )
