"""Offset retention: expire committed offsets and delete empty groups that have none left.

Copies Kafka's GroupCoordinatorShard.cleanupGroupMetadata, OffsetMetadataManager
.cleanupExpiredOffsets and ClassicGroup / ConsumerGroup.offsetExpirationCondition (a KIP-848
consumer group's offsets expire from their commit, unless a member subscribes to the topic; an
Empty consumer group without offsets is deleted with its tombstones; share groups never expire,
Kafka's ShareGroup.shouldExpire). A timer fires every
`offsets_retention_check_interval_ms` on each shard through the normal op path, so its
tombstones are written and applied like any other records; it reschedules itself. A shard that
is loading or failed has no timers running, so nothing is expired behind its back.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.groups.consumer.describe import group_tombstones
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.group import ClassicGroup
from coordinator.groups.rebalance import join_key, sync_key
from coordinator.groups.record_types import GroupTombstone
from coordinator.groups.records import OffsetCommitRecord, OffsetTombstone
from coordinator.groups.shard import GroupContext, GroupShard
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.state import GroupState

BaseTimestamp = Callable[[OffsetCommitRecord], int]


def retention_key() -> tuple[str]:
    return ("offsets-retention",)


def schedule_offset_expiration(shard: GroupShard, now_ms: int) -> None:
    """Kafka scheduleGroupMetadataExpiration: first check one interval after load."""
    shard.timers.schedule(retention_key(), now_ms + shard.config.offsets_retention_check_interval_ms, _on_timer)


def _on_timer(ctx: GroupContext) -> None:
    cleanup_group_metadata(ctx)
    schedule_offset_expiration(ctx.shard, ctx.now_ms)


def cleanup_group_metadata(ctx: GroupContext) -> None:
    for group_id, group in list(ctx.shard.groups.items()):
        if isinstance(group, ShareGroup):
            continue  # ShareGroup.shouldExpire is false: share groups have no offsets to expire
        if cleanup_expired_offsets(ctx, group_id):
            _maybe_delete_group(ctx, group_id)


def expiration_base(group: ClassicGroup | ConsumerGroup) -> BaseTimestamp | None:
    """ClassicGroup/ConsumerGroup.offsetExpirationCondition: from when an offset's retention
    counts, or None when the group's offsets do not expire now."""
    if isinstance(group, ConsumerGroup) or group.protocol_type is None:
        # A consumer group, or a simple group (commits without membership): from each commit.
        return lambda rec: rec.commit_timestamp_ms
    if group.is_in(GroupState.EMPTY):
        # From when the group became Empty (records older than GroupMetadataValue v2 have no
        # state timestamp: then from each commit).
        since = group.state_timestamp_ms
        return lambda rec: rec.commit_timestamp_ms if since is None else since
    if group.uses_consumer_protocol and group.subscribed_topics is not None and group.is_in(GroupState.STABLE):
        # Members exist: offsets of topics nobody subscribes to expire from their commit.
        return lambda rec: rec.commit_timestamp_ms
    return None


def is_expired(rec: OffsetCommitRecord, base: BaseTimestamp, now_ms: int, retention_ms: int) -> bool:
    """OffsetExpirationConditionImpl.isOffsetExpired: a client-set expire timestamp wins."""
    if rec.expire_timestamp_ms is not None:
        return now_ms >= rec.expire_timestamp_ms
    return now_ms - base(rec) >= retention_ms


def cleanup_expired_offsets(ctx: GroupContext, group_id: str) -> bool:
    """Tombstone the group's expired offsets; True if it has none left (or had none)."""
    store = ctx.shard.offsets
    offsets = store.groups.get(group_id)
    if not offsets:
        return not ctx.shard.txn_offsets.has_open_transactions(group_id)
    group = ctx.shard.groups.get(group_id)
    base = None if group is None or isinstance(group, ShareGroup) else expiration_base(group)
    if group is None or base is None:
        return False
    retention_ms = ctx.shard.config.offsets_retention_ms
    txn = ctx.shard.txn_offsets
    all_expired = True
    for (topic, partition), rec in list(offsets.items()):
        if (
            group.is_subscribed_to_topic(topic)
            or not is_expired(rec, base, ctx.now_ms, retention_ms)
            or txn.has_pending(group_id, topic, partition)
        ):  # not while a transaction holds it
            all_expired = False
            continue
        ctx.apply(OffsetTombstone(group_id, topic, partition))
    return all_expired and not txn.has_open_transactions(group_id)


def _maybe_delete_group(ctx: GroupContext, group_id: str) -> None:
    """GroupMetadataManager.maybeDeleteGroup: only an Empty group goes (with its tombstones)."""
    consumer = ctx.shard.consumer_group(group_id)
    if consumer is not None:
        if consumer.is_empty():
            for record in group_tombstones(consumer):
                ctx.apply(record)
        return
    group = ctx.shard.group(group_id)
    if group is None or not group.is_in(GroupState.EMPTY):
        return
    group.transition_to(GroupState.DEAD, ctx.now_ms)
    ctx.apply(GroupTombstone(group_id))
    ctx.shard.timers.cancel(join_key(group_id))
    ctx.shard.timers.cancel(sync_key(group_id))
