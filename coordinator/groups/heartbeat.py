"""Heartbeat (API 12): keeps a member's session alive and tells it when to rejoin.

Kafka GroupMetadataManager.classicGroupHeartbeat. Per state: Dead -> COORDINATOR_NOT_AVAILABLE;
then member and generation checks (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION);
Empty -> UNKNOWN_MEMBER_ID; PreparingRebalance -> REBALANCE_IN_PROGRESS, session timer reset;
CompletingRebalance / Stable -> NONE, session timer reset. Heartbeats write no records.
"""

from __future__ import annotations

from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.group import ClassicGroup
from coordinator.groups.migration.classic_members import heartbeat_consumer_group
from coordinator.groups.rebalance import reschedule_member_heartbeat
from coordinator.groups.requests import HeartbeatParams, HeartbeatResult
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode


def heartbeat(ctx: GroupContext, p: HeartbeatParams) -> HeartbeatResult:
    found = ctx.shard.groups.get(p.group_id)  # (one lookup: shard.consumer_group, then shard.group)
    if isinstance(found, ConsumerGroup):
        return heartbeat_consumer_group(ctx, found, p)  # Kafka classicGroupHeartbeatToConsumerGroup
    group = found if isinstance(found, ClassicGroup) else None
    if group is None:
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"group {p.group_id!r} does not exist")
        return HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID)
    error = group.validate_generation_member(p.member_id, p.group_instance_id, p.generation_id)
    if error is not None:
        return HeartbeatResult(ErrorCode(error))
    if group.is_in(GroupState.EMPTY):
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"group {p.group_id!r} is Empty")
        return HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID)
    reschedule_member_heartbeat(ctx, group, group.members[p.member_id])
    if group.is_in(GroupState.PREPARING_REBALANCE):
        explain(
            ErrorCode.REBALANCE_IN_PROGRESS,
            f"group {p.group_id!r} is PreparingRebalance: generation {group.generation_id} is ending, rejoin",
        )
        return HeartbeatResult(ErrorCode.REBALANCE_IN_PROGRESS)
    return HeartbeatResult(ErrorCode.NONE)
