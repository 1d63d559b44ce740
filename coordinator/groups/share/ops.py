"""The share-group operations on a group shard, as GroupService runs them through the runtime
(Kafka GroupCoordinatorShard's share methods).

Each takes the runtime's GroupContext and typed params and returns a typed answer; records go
through ShareContext.emit (the shard's one replay). The share coordinator is never called from
here: operations that need it return what to ask (a StateInit, partitions to delete), and the
service asks between two operations, as Kafka's GroupCoordinatorService does.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.shard import GroupContext
from coordinator.groups.share.context import ShareContext
from coordinator.groups.share.describe import DescribedShareGroup, describe_share_groups
from coordinator.groups.share.group import InitValue
from coordinator.groups.share.heartbeat import HeartbeatAnswer, ShareHeartbeatParams, share_group_heartbeat
from coordinator.groups.share.membership import fence_by_timer, share_group
from coordinator.groups.share.state_partitions import (
    UNKNOWN_TOPIC_MESSAGE,
    StateInit,
    TopicError,
    TopicPartitionMap,
    deleted_record,
    group_delete_request,
    initialized_record,
    initializing_record,
    offsets_delete_request,
    uninitialized_record,
)
from coordinator.observe.reasons import because, explain
from protocol.errors import ErrorCode


def heartbeat(op: GroupContext, p: ShareHeartbeatParams) -> HeartbeatAnswer:
    """ShareGroupHeartbeat; the service validated `p` first."""
    return share_group_heartbeat(ShareContext.of(op), p)


def describe(op: GroupContext, group_ids: list[str]) -> list[DescribedShareGroup]:
    """ShareGroupDescribe for the ids of one partition; an empty id is INVALID_GROUP_ID."""
    ctx = ShareContext.of(op)
    out = []
    for group_id in group_ids:
        if not group_id:
            explain(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
            out.append(DescribedShareGroup("", ErrorCode.INVALID_GROUP_ID))
            continue
        (described,) = describe_share_groups(ctx.groups, ctx.topics, [group_id])
        if described.error_code:
            explain(described.error_code, described.error_message or "")
        out.append(described)
    return out


def fence_member(op: GroupContext, group_id: str, member_id: str, reason: str) -> ErrorCode:
    """Fence one member as its session timeout would (the control plane's "expire member")."""
    group = op.shard.share_group(group_id)
    if group is None or member_id not in group.members:
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"no member {member_id!r} in share group {group_id!r}")
        return ErrorCode.UNKNOWN_MEMBER_ID
    because(reason)
    fence_by_timer(ShareContext.of(op), group_id, member_id, f"left: {reason}")
    return ErrorCode.NONE


# -- share-partition state ---------------------------------------------------------------------


@dataclass(frozen=True)
class StateChange:
    group_id: str
    partitions: TopicPartitionMap


def mark_initialized(op: GroupContext, p: StateChange) -> None:
    """Kafka initializeShareGroupState: the share coordinator initialized these partitions."""
    ctx = ShareContext.of(op)
    group = op.shard.share_group(p.group_id)
    if group is None:
        return
    record = initialized_record(p.group_id, group.state_partitions, p.partitions, ctx.topics, ctx.now_ms)
    if record is not None:
        ctx.emit(record)


def mark_uninitialized(op: GroupContext, p: StateChange) -> None:
    """Kafka uninitializeShareGroupState: the share coordinator failed to initialize them."""
    ctx = ShareContext.of(op)
    group = op.shard.share_group(p.group_id)
    if group is None:
        return
    record = uninitialized_record(p.group_id, group.state_partitions, p.partitions, ctx.topics)
    if record is not None:
        ctx.emit(record)


def initialized_partitions(op: GroupContext, group_id: str) -> TopicPartitionMap:
    """Kafka initializedShareGroupPartitions (DescribeShareGroupOffsets for every topic)."""
    group = op.shard.share_group(group_id)
    return {} if group is None else {t: v.partitions for t, v in group.partitions().initialized.items()}


# -- DeleteGroups, first phase -------------------------------------------------------------------


def delete_requests(op: GroupContext, group_ids: list[str]) -> list[ErrorCode | TopicPartitionMap | None]:
    """Kafka sharePartitionDeleteRequests, one answer per id: NON_EMPTY_GROUP for a share group with
    members, else the share-partitions whose state the share coordinator must delete (their topics
    move to deleting; {} when none), None for ids that are not share groups or never had state
    (the ordinary deletion that follows answers for them)."""
    ctx = ShareContext.of(op)
    out: list[ErrorCode | TopicPartitionMap | None] = []
    for group_id in group_ids:
        group = op.shard.share_group(group_id)
        if group is None:
            out.append(None)
        elif not group.is_empty():
            explain(ErrorCode.NON_EMPTY_GROUP, f"share group {group_id!r} has {group.num_members()} member(s)")
            out.append(ErrorCode.NON_EMPTY_GROUP)
        elif (request := group_delete_request(group, ctx.topics)) is None:
            out.append(None)
        else:
            record, partitions = request
            ctx.emit(record)
            out.append(partitions)
    return out


# -- AlterShareGroupOffsets -------------------------------------------------------------------------


@dataclass(frozen=True)
class AlterParams:
    group_id: str
    topics: Mapping[str, Mapping[int, int]]  # topic name -> partition -> new start offset


@dataclass(frozen=True)
class AlteredTopic:
    topic_name: str
    topic_id: uuid.UUID | None
    partitions: dict[int, tuple[int, str | None]]  # partition -> (error code, message)


@dataclass(frozen=True)
class AlterAnswer:
    error_code: int = 0
    error_message: str | None = None
    topics: list[AlteredTopic] = field(default_factory=list)
    init: StateInit | None = None


def alter_offsets(op: GroupContext, p: AlterParams) -> AlterAnswer:
    """Kafka alterShareGroupOffsets + completeAlterShareGroupOffsets: the group must exist as a
    share group and be Empty; each existing partition is to be re-initialized at the new start
    offset (state epoch: the group epoch) and becomes initializing now."""
    ctx = ShareContext.of(op)
    try:
        group = share_group(ctx, p.group_id)
        if not group.is_empty():
            raise ConsumerGroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    except ConsumerGroupError as exc:
        explain(exc.code, exc.message)
        return AlterAnswer(exc.code, exc.message)
    topics: list[AlteredTopic] = []
    initializing: dict[uuid.UUID, InitValue] = {}
    offsets: dict[uuid.UUID, dict[int, int]] = {}
    for name, partitions in p.topics.items():
        meta = ctx.topics.by_name(name)
        if meta is None:
            unknown = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE)
            topics.append(AlteredTopic(name, None, dict.fromkeys(partitions, unknown)))
            continue
        answers: dict[int, tuple[int, str | None]] = {}
        for partition, start_offset in partitions.items():
            if partition < meta.num_partitions:
                answers[partition] = (ErrorCode.NONE, None)
                offsets.setdefault(meta.topic_id, {})[partition] = start_offset
            else:
                answers[partition] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE)
        valid = frozenset(q for q in partitions if q < meta.num_partitions)
        initializing[meta.topic_id] = InitValue(name, valid, ctx.now_ms)
        topics.append(AlteredTopic(name, meta.topic_id, answers))
    record = initializing_record(p.group_id, group.state_partitions, initializing, ctx.topics)
    if record is not None:
        ctx.emit(record)
    return AlterAnswer(topics=topics, init=StateInit(p.group_id, group.group_epoch, offsets))


# -- DeleteShareGroupOffsets --------------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetsDeleteAnswer:
    error_code: int = 0
    error_message: str | None = None
    errors: list[TopicError] = field(default_factory=list)
    delete: TopicPartitionMap = field(default_factory=dict)


def start_offsets_delete(op: GroupContext, p: tuple[str, list[str]]) -> OffsetsDeleteAnswer:
    """Kafka initiateDeleteShareGroupOffsets: GROUP_ID_NOT_FOUND unless a share group,
    NON_EMPTY_GROUP unless Empty; else the partitions to delete (their topics move to deleting)."""
    group_id, topic_names = p
    ctx = ShareContext.of(op)
    try:
        group = share_group(ctx, group_id)
        if not group.is_empty():
            raise ConsumerGroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    except ConsumerGroupError as exc:
        explain(exc.code, exc.message)
        return OffsetsDeleteAnswer(exc.code, exc.message)
    record, delete, errors = offsets_delete_request(group, topic_names, ctx.topics)
    if record is not None:
        ctx.emit(record)
    return OffsetsDeleteAnswer(errors=errors, delete=delete)


def finish_offsets_delete(op: GroupContext, p: tuple[str, list[uuid.UUID]]) -> None:
    """Kafka completeDeleteShareGroupOffsets: these topics' state is gone; they leave deleting."""
    group_id, deleted = p
    ctx = ShareContext.of(op)
    group = op.shard.share_group(group_id)
    if group is None:
        return
    record = deleted_record(group, deleted, ctx.topics)
    if record is not None:
        ctx.emit(record)
