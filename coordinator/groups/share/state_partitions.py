"""Which share-partitions of a group have state in the share coordinator: the
ShareGroupStatePartitionMetadata bookkeeping (Kafka 4.1+ GroupMetadataManager: subscribedTopicsChangeMap,
addInitializingTopicsRecords, initialize/uninitializeShareGroupState, combineInitMaps,
initializedAssignmentPending, shareGroupBuildPartitionDeleteRequest,
sharePartitionsEligibleForOffsetDeletion, completeDeleteShareGroupOffsets, maybeCleanupShareGroupState).

Pure functions of a group's `StatePartitions` and the topics: each returns the record to write (or
None) and what to ask the share coordinator; operations emit the records. A partition is only
assigned to members once initialized. An initialization that never completed (no initialized or
uninitialized record followed it) is retried after INITIALIZE_RETRY_INTERVAL_MS. Records list
topics in Kafka's Uuid order and partitions ascending (Kafka iterates hash maps here).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from coordinator.groups.assignors.ordering import sorted_topic_ids
from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.share.group import InitValue, ShareGroup, StatePartitions
from coordinator.groups.share.records import ShareGroupStatePartitionMetadataRecord, TopicInfo, TopicPartitionsInfo
from protocol.errors import ErrorCode

INITIALIZE_RETRY_INTERVAL_MS = 30_000  # group.share.initialize.retry.interval.ms (internal in Kafka)
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."  # Errors.UNKNOWN_TOPIC_OR_PARTITION
NO_OFFSETS_MESSAGE = "There is no offset information to delete."
TopicPartitionMap = dict[uuid.UUID, frozenset[int]]


@dataclass(frozen=True)
class StateInit:
    """What to initialize in the share coordinator: partition -> start offset (-1: the share
    partition applies share.auto.offset.reset), at state epoch `state_epoch` (Kafka passes the
    group epoch, for heartbeats and AlterShareGroupOffsets alike)."""

    group_id: str
    state_epoch: int
    offsets: Mapping[uuid.UUID, Mapping[int, int]]

    def partitions(self) -> TopicPartitionMap:
        return {t: frozenset(p) for t, p in self.offsets.items()}


def combine(base: Mapping[uuid.UUID, InitValue], extra: Mapping[uuid.UUID, InitValue]) -> dict[uuid.UUID, InitValue]:
    """Kafka combineInitMaps: the union per topic; name and timestamp from `extra` when it has
    the topic."""
    out: dict[uuid.UUID, InitValue] = {}
    for topic_id in set(base) | set(extra):
        b, e = base.get(topic_id), extra.get(topic_id)
        parts = set() if b is None else set(b.partitions)
        name, timestamp = ("UNKNOWN", -1) if b is None else (b.name, b.timestamp)
        if e is not None:
            parts |= e.partitions
            name, timestamp = e.name, e.timestamp
        out[topic_id] = InitValue(name, frozenset(parts), timestamp)
    return out


def state_record(
    group_id: str,
    initializing: Mapping[uuid.UUID, InitValue],
    initialized: Mapping[uuid.UUID, InitValue],
    deleting: Mapping[uuid.UUID, str],
) -> ShareGroupStatePartitionMetadataRecord:
    """GroupCoordinatorRecordHelpers.newShareGroupStatePartitionMetadataRecord."""

    def infos(entries: Mapping[uuid.UUID, InitValue]) -> tuple[TopicPartitionsInfo, ...]:
        return tuple(
            TopicPartitionsInfo(t, entries[t].name, tuple(sorted(entries[t].partitions)))
            for t in sorted_topic_ids(entries)
        )

    return ShareGroupStatePartitionMetadataRecord(
        group_id,
        infos(initializing),
        infos(initialized),
        tuple(TopicInfo(t, deleting[t]) for t in sorted_topic_ids(deleting)),
    )


def _names(topic_ids: Iterable[uuid.UUID], topics: TopicsView) -> dict[uuid.UUID, str]:
    """Kafka attachTopicName: the topic's name now, or <UNKNOWN>."""
    return {t: (meta.name if (meta := topics.by_id(t)) is not None else "<UNKNOWN>") for t in topic_ids}


# -- initialization --------------------------------------------------------------------------


def uninitialized_subscribed(
    state: StatePartitions | None, topic_names: Iterable[str], topics: TopicsView, now_ms: int
) -> dict[uuid.UUID, InitValue]:
    """Kafka subscribedTopicsChangeMap: the subscribed partitions neither initialized nor being
    initialized (an initialization older than the retry interval counts as not started)."""
    already: dict[uuid.UUID, InitValue] = {}
    if state is not None:
        fresh = {t: v for t, v in state.initializing.items() if now_ms - v.timestamp < INITIALIZE_RETRY_INTERVAL_MS}
        already = combine(state.initialized, fresh)
    out: dict[uuid.UUID, InitValue] = {}
    for name in topic_names:
        meta = topics.by_name(name)
        if meta is None:
            continue
        have = already[meta.topic_id].partitions if meta.topic_id in already else frozenset()
        if not have or len(have) < meta.num_partitions:
            out.setdefault(meta.topic_id, InitValue(meta.name, frozenset(range(meta.num_partitions)) - have, now_ms))
    return out


def initializing_record(
    group_id: str, state: StatePartitions | None, new: Mapping[uuid.UUID, InitValue], topics: TopicsView
) -> ShareGroupStatePartitionMetadataRecord | None:
    """Kafka addInitializingTopicsRecords: `new` joins the initializing partitions (and leaves
    the deleting topics, where a previous deletion left it)."""
    if not new:
        return None
    if state is None:
        return state_record(group_id, new, {}, {})
    initializing = combine(state.initializing, new)
    deleting = set(state.deleting) - set(initializing)
    return state_record(group_id, initializing, state.initialized, _names(deleting, topics))


def initialized_record(
    group_id: str, state: StatePartitions | None, done: TopicPartitionMap, topics: TopicsView, now_ms: int
) -> ShareGroupStatePartitionMetadataRecord | None:
    """Kafka initializeShareGroupState: the share coordinator initialized `done`."""
    if not done:
        return None
    enriched = {t: InitValue(_names((t,), topics)[t], parts, now_ms) for t, parts in done.items()}
    if state is None:
        return state_record(group_id, {}, enriched, {})
    initializing = _without(state.initializing, done)
    return state_record(group_id, initializing, combine(state.initialized, enriched), _names(state.deleting, topics))


def uninitialized_record(
    group_id: str, state: StatePartitions | None, failed: TopicPartitionMap, topics: TopicsView
) -> ShareGroupStatePartitionMetadataRecord | None:
    """Kafka uninitializeShareGroupState: the share coordinator failed to initialize `failed`;
    they leave the initializing partitions, so the next heartbeat tries again."""
    if state is None or not state.initializing or not failed:
        return None
    initializing = _without(state.initializing, failed)
    return state_record(group_id, initializing, state.initialized, _names(state.deleting, topics))


def _without(entries: Mapping[uuid.UUID, InitValue], gone: TopicPartitionMap) -> dict[uuid.UUID, InitValue]:
    out: dict[uuid.UUID, InitValue] = {}
    for topic_id, value in entries.items():
        parts = value.partitions - gone.get(topic_id, frozenset())
        if parts:
            out[topic_id] = InitValue(value.name, parts, value.timestamp)
    return out


def assignable_partitions(group: ShareGroup) -> TopicPartitionMap:
    """Kafka stripInitValue(initializedTopics): what the assignor may hand out."""
    return {t: v.partitions for t, v in group.partitions().initialized.items()}


def initialized_assignment_pending(group: ShareGroup) -> bool:
    """Kafka initializedAssignmentPending: a subscribed topic's initialized partitions differ from
    what the target assignment covers, so the next heartbeat must bump the epoch and reassign."""
    if group.is_empty() or not group.partitions().initialized or not group.subscribed_topic_names:
        return False
    covered: dict[uuid.UUID, set[int]] = {}
    for assignment in group.target_assignment.values():
        for topic_id, parts in assignment.items():
            covered.setdefault(topic_id, set()).update(parts)
    for topic_id, value in group.partitions().initialized.items():
        if value.name in group.subscribed_topic_names and covered.get(topic_id) != set(value.partitions):
            return True
    return False


# -- deletion --------------------------------------------------------------------------------


def group_delete_request(
    group: ShareGroup, topics: TopicsView
) -> tuple[ShareGroupStatePartitionMetadataRecord, TopicPartitionMap] | None:
    """Kafka shareGroupBuildPartitionDeleteRequest (DeleteGroups): every initialized or
    initializing partition, and again every partition of a topic a previous deletion left
    deleting (if the topic still exists), moves to deleting; returns the record and what to
    delete in the share coordinator (None when the group never had share-partition state)."""
    state = group.state_partitions
    if state is None:
        return None
    candidates = combine(state.initialized, state.initializing)
    retry = {}
    for topic_id in state.deleting:
        meta = topics.by_id(topic_id)
        if meta is not None:
            retry[topic_id] = InitValue(meta.name, frozenset(range(meta.num_partitions)), -1)
    if retry:
        candidates = combine(candidates, retry)
    record = state_record(group.group_id, {}, {}, {t: v.name for t, v in candidates.items()})
    return record, {t: v.partitions for t, v in candidates.items()}


@dataclass(frozen=True)
class TopicError:
    topic_name: str
    error_code: int
    error_message: str


def offsets_delete_request(
    group: ShareGroup, topic_names: Iterable[str], topics: TopicsView
) -> tuple[ShareGroupStatePartitionMetadataRecord | None, TopicPartitionMap, list[TopicError]]:
    """Kafka sharePartitionsEligibleForOffsetDeletion (DeleteShareGroupOffsets): each named topic's
    initialized partitions (or, for a topic already deleting, all its partitions) are to be deleted
    and the topic moves to deleting; other topics are UNKNOWN_TOPIC_OR_PARTITION. A group that never
    had share-partition state answers nothing at all, as Kafka's does."""
    state = group.state_partitions
    if state is None:
        return None, {}, []
    initialized = dict(state.initialized)
    deleting = set(state.deleting)
    delete: TopicPartitionMap = {}
    errors: list[TopicError] = []
    for name in topic_names:
        meta = topics.by_name(name)
        if meta is None:
            errors.append(TopicError(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE))
        elif meta.topic_id in initialized:
            delete[meta.topic_id] = initialized.pop(meta.topic_id).partitions
            deleting.add(meta.topic_id)
        elif meta.topic_id in deleting:
            delete[meta.topic_id] = frozenset(range(meta.num_partitions))
        else:
            errors.append(TopicError(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_MESSAGE))
    record = state_record(group.group_id, state.initializing, initialized, _names(deleting, topics))
    return record, delete, errors


def deleted_record(
    group: ShareGroup, deleted: Iterable[uuid.UUID], topics: TopicsView
) -> ShareGroupStatePartitionMetadataRecord | None:
    """Kafka completeDeleteShareGroupOffsets: the share coordinator deleted these topics' state."""
    state = group.state_partitions
    if state is None:
        return None
    deleting = set(state.deleting) - set(deleted)
    return state_record(group.group_id, state.initializing, state.initialized, _names(deleting, topics))


def without_deleted_topics(group: ShareGroup, topics: TopicsView) -> ShareGroupStatePartitionMetadataRecord | None:
    """Kafka maybeCleanupShareGroupState, for one group: topics that no longer exist leave every
    list (the share coordinator's state of a deleted topic goes with the topic)."""
    state = group.state_partitions
    if state is None:
        return None
    gone = {t for t in (*state.initializing, *state.initialized, *state.deleting) if topics.by_id(t) is None}
    if not gone:
        return None
    return state_record(
        group.group_id,
        {t: v for t, v in state.initializing.items() if t not in gone},
        {t: v for t, v in state.initialized.items() if t not in gone},
        _names(set(state.deleting) - gone, topics),
    )
