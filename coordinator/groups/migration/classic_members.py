"""Classic-protocol members inside a consumer group: JoinGroup (classic_join.py), SyncGroup,
Heartbeat and LeaveGroup answered from the consumer group (Kafka 4.2
GroupMetadataManager.classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
classicGroupHeartbeatToConsumerGroup, classicGroupLeaveToConsumerGroup).

A JoinGroup is a consumer-group heartbeat in disguise: the member's subscription comes from its
embedded ConsumerProtocol metadata, the group epoch is bumped when it changed, the target is
recomputed, and the member is reconciled; the answer is immediate, with the member epoch as the
generation, no leader, so the member is a follower and its SyncGroup returns its current
partitions. A Heartbeat asks it to rejoin (REBALANCE_IN_PROGRESS) while its epoch is behind the
group's or it has partitions to revoke or to receive. A static member replacing the last
consumer-protocol member downgrades the group. Errors are Kafka's codes, each explained.
"""

from __future__ import annotations

from typing import Any

from coordinator.groups.consumer.errors import ConsumerGroupError, unknown_member
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import ConsumerGroupMember, MemberState
from coordinator.groups.consumer.membership import (
    check_not_fenced,
    fence_by_timer,
    fence_members,
    join_timeout_key,
    schedule_session_timeout,
    sync_timeout_key,
)
from coordinator.groups.consumer.records import ClassicMemberMetadata
from coordinator.groups.consumer_context import ShardConsumerContext
from coordinator.groups.group import CONSUMER_PROTOCOL_TYPE
from coordinator.groups.migration.bridge import CLASSIC_BRIDGE
from coordinator.groups.migration.convert import assignment_bytes
from coordinator.groups.requests import (
    UNKNOWN_MEMBER_ID,
    HeartbeatParams,
    HeartbeatResult,
    LeaveGroupParams,
    LeaveGroupResult,
    LeftMember,
    SyncGroupParams,
    SyncGroupResult,
)
from coordinator.groups.shard import GroupContext
from protocol.errors import ErrorCode


def classic_context(op: GroupContext) -> ShardConsumerContext:
    return ShardConsumerContext.of(op, CLASSIC_BRIDGE)


def validate_member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerGroupMember:
    """Kafka validateConsumerGroupMember (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID)."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise unknown_member(member_id, group.group_id)
        return member
    member = group.static_member(instance_id)
    if member is None:
        raise ConsumerGroupError(
            ErrorCode.UNKNOWN_MEMBER_ID,
            f"Member with instance id {instance_id} is not a member of group {group.group_id}.",
        )
    check_not_fenced(member, member_id, instance_id)
    return member


def _classic_only(member: ConsumerGroupMember) -> ClassicMemberMetadata:
    """Kafka throwIfMemberDoesNotUseClassicProtocol."""
    if member.classic_member_metadata is None:
        raise ConsumerGroupError(
            ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member.member_id} does not use the classic protocol."
        )
    return member.classic_member_metadata


def _generation(member: ConsumerGroupMember, generation_id: int) -> None:
    if member.member_epoch != generation_id:
        raise ConsumerGroupError(
            ErrorCode.ILLEGAL_GENERATION,
            (
                f"The request generation id {generation_id} is not equal to the member epoch {member.member_epoch} "
                f"of member {member.member_id}."
            ),
        )


def schedule_join_timeout_if_absent(ctx: ShardConsumerContext, group_id: str, member_id: str, timeout_ms: int) -> None:
    key = join_timeout_key(group_id, member_id)
    if not ctx.timers.is_scheduled(key):
        ctx.timers.schedule(
            key,
            ctx.now_ms + timeout_ms,
            lambda c: fence_by_timer(
                c, group_id, member_id, "left: the classic member failed to join within the rebalance timeout"
            ),
        )


def answer_error(ctx: ShardConsumerContext, exc: ConsumerGroupError) -> ErrorCode:
    ctx.explain(exc.code, exc.message)
    return exc.code


# -- SyncGroup ----------------------------------------------------------------------------------


def sync_consumer_group(op: GroupContext, group: ConsumerGroup, p: SyncGroupParams) -> SyncGroupResult:
    ctx = classic_context(op)
    try:
        member = validate_member(group, p.member_id, p.group_instance_id)
        classic = _classic_only(member)
        _generation(member, p.generation_id)
        protocol_name = classic.supported_protocols[0].name
        if p.protocol_type is not None and p.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise ConsumerGroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                (
                    f"The protocol type {p.protocol_type} from member {member.member_id} request is not equal to the "
                    f"group protocol type {CONSUMER_PROTOCOL_TYPE}."
                ),
            )
        if p.protocol_name is not None and p.protocol_name != protocol_name:
            raise ConsumerGroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                (
                    f"The protocol name {p.protocol_name} from member {member.member_id} request is not equal to the "
                    f"protocol name {protocol_name} returned in the join response."
                ),
            )
        _raise_if_rebalancing(ctx, group, member)
    except ConsumerGroupError as exc:
        return SyncGroupResult(answer_error(ctx, exc))
    gid = group.group_id
    ctx.timers.cancel(sync_timeout_key(gid, member.member_id))
    schedule_session_timeout(ctx, gid, member.member_id, classic.session_timeout_ms)
    return SyncGroupResult(
        ErrorCode.NONE,
        p.protocol_type,
        p.protocol_name,
        assignment_bytes(member.assigned_partitions, classic.supported_protocols[0].metadata, ctx.topics),
    )


def _raise_if_rebalancing(ctx: ShardConsumerContext, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
    """Kafka throwIfRebalanceInProgress: a member behind the group epoch rejoins first (unless it
    is still revoking: it finishes that, then rejoins)."""
    if group.group_epoch > member.member_epoch and member.state != MemberState.UNREVOKED_PARTITIONS:
        schedule_join_timeout_if_absent(ctx, group.group_id, member.member_id, member.rebalance_timeout_ms)
        raise ConsumerGroupError(
            ErrorCode.REBALANCE_IN_PROGRESS,
            (
                f"A new rebalance is triggered in group {group.group_id} and member {member.member_id} should rejoin "
                "to catch up."
            ),
        )


# -- Heartbeat ----------------------------------------------------------------------------------


def heartbeat_consumer_group(op: GroupContext, group: ConsumerGroup, p: HeartbeatParams) -> HeartbeatResult:
    ctx = classic_context(op)
    try:
        member = validate_member(group, p.member_id, p.group_instance_id)
        classic = _classic_only(member)
        _generation(member, p.generation_id)
    except ConsumerGroupError as exc:
        return HeartbeatResult(answer_error(ctx, exc))
    gid = group.group_id
    schedule_session_timeout(ctx, gid, member.member_id, classic.session_timeout_ms)
    if (
        member.member_epoch < group.group_epoch
        or member.state == MemberState.UNREVOKED_PARTITIONS
        or (member.state == MemberState.UNRELEASED_PARTITIONS and not waiting_on_unreleased(group, member))
    ):
        schedule_join_timeout_if_absent(ctx, gid, member.member_id, member.rebalance_timeout_ms)
        ctx.explain(
            ErrorCode.REBALANCE_IN_PROGRESS,
            (
                f"member {member.member_id} (epoch {member.member_epoch}, {member.state.name}) must rejoin consumer "
                f"group {gid} (epoch {group.group_epoch}) to reconcile"
            ),
        )
        return HeartbeatResult(ErrorCode.REBALANCE_IN_PROGRESS)
    return HeartbeatResult(ErrorCode.NONE)


def waiting_on_unreleased(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Kafka ConsumerGroup.waitingOnUnreleasedPartition: a partition of its target that another
    member still owns."""
    if member.state != MemberState.UNRELEASED_PARTITIONS:
        return False
    for topic_id, parts in group.target_assignment.get(member.member_id, {}).items():
        assigned = member.assigned_partitions.get(topic_id, frozenset())
        for partition in parts:
            if partition not in assigned and group.current_partition_epoch(topic_id, partition) != -1:
                return True
    return False


# -- LeaveGroup ---------------------------------------------------------------------------------


def leave_consumer_group(op: GroupContext, group: ConsumerGroup, p: LeaveGroupParams) -> LeaveGroupResult:
    """Kafka 4.2 classicGroupLeaveToConsumerGroup: any member may be named (by id, or by instance
    id with an unknown member id for an admin removal); the valid ones are fenced together."""
    ctx = classic_context(op)
    answers: list[LeftMember] = []
    leaving: dict[str, ConsumerGroupMember] = {}
    for who in p.members:
        try:
            if who.group_instance_id is None:
                member = group.members.get(who.member_id)
                if member is None:
                    raise unknown_member(who.member_id, group.group_id)
            else:
                static = group.static_member(who.group_instance_id)
                if static is None:
                    raise ConsumerGroupError(
                        ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {who.group_instance_id} is unknown."
                    )
                if who.member_id != UNKNOWN_MEMBER_ID:
                    check_not_fenced(static, who.member_id, who.group_instance_id)
                member = static
        except ConsumerGroupError as exc:
            answers.append(LeftMember(who.member_id, who.group_instance_id, answer_error(ctx, exc)))
            continue
        answers.append(LeftMember(who.member_id, who.group_instance_id, ErrorCode.NONE))
        leaving[member.member_id] = member
    records: list[Any] = []
    fence_members(ctx, group, list(leaving.values()), records, "left the group (LeaveGroup)")
    for record in records:
        ctx.emit(record)
    return LeaveGroupResult(ErrorCode.NONE, answers)
