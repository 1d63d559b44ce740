"""The share-partition checks every ShareGroupHeartbeat makes, answered from the group's
SteadyAnswers while nothing they derive from changed (a steady heartbeat: the member re-heartbeats
at its epoch and Kafka answers with assignment null).

Kafka 4.2 shareGroupHeartbeat runs these on every heartbeat; their answers are functions of the
group's replayed state (the `replayed` count keys them), of the topics image (its version) and,
for initialization, of the time an unfinished initialization is retried. Only the settled answers
are kept: an unsettled one writes a record, which bumps `replayed`. The answers are those of the
pure functions in state_partitions.py; nothing here decides anything of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from coordinator.groups.share.group import InitValue, ShareGroup
from coordinator.groups.share.records import ShareGroupStatePartitionMetadataRecord
from coordinator.groups.share.state_partitions import (
    INITIALIZE_RETRY_INTERVAL_MS,
    initialized_assignment_pending,
    uninitialized_subscribed,
    without_deleted_topics,
)
from coordinator.groups.topics_image import TopicsImage

_FOREVER = 2**63 - 1


def assignment_pending(group: ShareGroup) -> bool:
    """Kafka initializedAssignmentPending; a function of the group's replayed state alone."""
    steady = group.steady
    if steady.pending_at != group.replayed:
        steady.pending = initialized_assignment_pending(group)
        steady.pending_at = group.replayed
    return steady.pending


def deleted_topics_record(group: ShareGroup, topics: TopicsImage) -> ShareGroupStatePartitionMetadataRecord | None:
    """Kafka maybeCleanupShareGroupState for this group (state_partitions.without_deleted_topics)."""
    key = (group.replayed, topics.version)
    if group.steady.no_deleted_at == key:
        return None
    record = without_deleted_topics(group, topics)
    if record is None:
        group.steady.no_deleted_at = key
    return record


def to_initialize(
    group: ShareGroup, names: Mapping[str, object], topics: TopicsImage, now_ms: int
) -> dict[uuid.UUID, InitValue]:
    """Kafka subscribedTopicsChangeMap (state_partitions.uninitialized_subscribed) for `names`;
    cached when `names` are the group's own subscriptions (a heartbeat that recomputed them asks
    afresh). "Nothing" stays true until the group or the topics change or the oldest initializing
    entry reaches its retry time."""
    if names is not group.subscribed_topic_names:
        return uninitialized_subscribed(group.state_partitions, names, topics, now_ms)
    steady, key = group.steady, (group.replayed, topics.version)
    if steady.no_init_at == key and now_ms < steady.no_init_until_ms:
        return {}
    new = uninitialized_subscribed(group.state_partitions, names, topics, now_ms)
    if not new:
        initializing = group.partitions().initializing.values()
        steady.no_init_at = key
        steady.no_init_until_ms = min(
            (v.timestamp + INITIALIZE_RETRY_INTERVAL_MS for v in initializing), default=_FOREVER
        )
    return new
