"""Telling a shard's modern groups that topics changed (Kafka GroupMetadataManager.onNewMetadataImage).

The shard's topics image follows the broker's registry; whenever an operation starts, the names
created, deleted or resized since the shard last looked are delivered: every consumer or share
group subscribed to one of them recomputes its metadata hash on its next heartbeat (and bumps its
epoch when the hash changed). Created topics also make consumer-group regexes stale, through the
image's version. When the shard is too far behind to know what changed, every subscribed topic
counts as changed.
"""

from __future__ import annotations

from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.shard import GroupShard
from coordinator.groups.share.group import ShareGroup


def deliver_topic_changes(shard: GroupShard) -> frozenset[str]:
    """Refresh the image and mark the groups subscribed to what changed; returns the names."""
    image = shard.topics
    image.refresh()
    if shard.topics_seen == image.version:
        return frozenset()
    changed = image.changed_since(shard.topics_seen)
    if changed is None:
        changed = frozenset(
            name
            for g in shard.groups.values()
            if isinstance(g, (ConsumerGroup, ShareGroup))
            for name in g.subscribed_topic_names
        )
    for group in shard.groups.values():
        if isinstance(group, (ConsumerGroup, ShareGroup)) and not changed.isdisjoint(group.subscribed_topic_names):
            group.request_metadata_refresh()
    shard.topics_seen = image.version
    return changed
