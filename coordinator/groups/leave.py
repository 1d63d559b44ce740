"""LeaveGroup (API 13): members leave, alone (v0-2) or in a batch (v3+, per-member errors).

Kafka GroupMetadataManager.classicGroupLeave. A member is named by member id, or (admin
removal, KIP-345) by group.instance.id with the member id left unknown (""). Pending KIP-394
ids may leave too. Removing anyone from a Stable or CompletingRebalance group starts a
rebalance; in PreparingRebalance the join phase may now be complete.
"""

from __future__ import annotations

from coordinator.groups.migration.classic_members import leave_consumer_group
from coordinator.groups.rebalance import (
    cancel_heartbeat,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    remove_member,
)
from coordinator.groups.requests import UNKNOWN_MEMBER_ID, LeaveGroupParams, LeaveGroupResult, LeftMember
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode


def leave_group(ctx: GroupContext, p: LeaveGroupParams) -> LeaveGroupResult:
    consumer = ctx.shard.consumer_group(p.group_id)
    if consumer is not None:
        return leave_consumer_group(ctx, consumer, p)  # Kafka classicGroupLeaveToConsumerGroup
    group = ctx.shard.group(p.group_id)
    if group is None:
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"group {p.group_id!r} does not exist")
        return LeaveGroupResult(
            ErrorCode.NONE,
            [LeftMember(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID) for m in p.members],
        )
    if group.is_in(GroupState.DEAD):
        explain(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {p.group_id!r} is Dead (being deleted)")
        return LeaveGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)

    answers: list[LeftMember] = []
    removed_any = False
    for leaving in p.members:
        member_id, instance_id = leaving.member_id, leaving.group_instance_id
        if member_id == UNKNOWN_MEMBER_ID:
            current_id = group.static_members.get(instance_id) if instance_id is not None else None
            if current_id is None:
                explain(ErrorCode.UNKNOWN_MEMBER_ID, f"no static member with group.instance.id {instance_id!r}")
                answers.append(LeftMember(member_id, instance_id, ErrorCode.UNKNOWN_MEMBER_ID))
                continue
            remove_member(ctx, group, group.members[current_id])
            removed_any = True
            answers.append(LeftMember(member_id, instance_id, ErrorCode.NONE))
        elif group.is_pending_member(member_id):
            group.remove(member_id)
            cancel_heartbeat(ctx, group, member_id)
            answers.append(LeftMember(member_id, instance_id, ErrorCode.NONE))
        else:
            error = group.validate_existing_member(member_id, instance_id)
            if error is not None:
                answers.append(LeftMember(member_id, instance_id, ErrorCode(error)))
                continue
            remove_member(ctx, group, group.members[member_id])
            removed_any = True
            answers.append(LeftMember(member_id, instance_id, ErrorCode.NONE))

    if removed_any:
        if group.is_in(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            maybe_prepare_rebalance_or_complete_join(ctx, group)
        elif group.is_in(GroupState.PREPARING_REBALANCE):
            maybe_complete_join_phase(ctx, group)
    return LeaveGroupResult(ErrorCode.NONE, answers)
