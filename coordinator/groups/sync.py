"""SyncGroup (API 14): the leader hands in the assignment, every member gets its share.

Kafka GroupMetadataManager.classicGroupSync. Followers that sync before the leader are parked;
the leader's SyncGroup writes the group (its GroupMetadata record carries every assignment),
answers the parked followers and makes the group Stable. In Stable a SyncGroup returns the
stored assignment. v5+ requests carry protocol type/name, checked against the group.
"""

from __future__ import annotations

from coordinator.groups.migration.classic_members import sync_consumer_group
from coordinator.groups.rebalance import propagate_assignment, remove_pending_sync_member
from coordinator.groups.requests import SyncGroupParams, SyncGroupResult
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain, explain_parked
from coordinator.runtime.operation import ParkedReply
from protocol.errors import ErrorCode

SyncAnswer = SyncGroupResult | ParkedReply[SyncGroupResult]


def _inconsistent(requested: str | None, actual: str | None) -> bool:
    return requested is not None and actual is not None and requested != actual


def sync_group(ctx: GroupContext, p: SyncGroupParams) -> SyncAnswer:
    consumer = ctx.shard.consumer_group(p.group_id)
    if consumer is not None:
        if consumer.is_empty():
            explain(ErrorCode.UNKNOWN_MEMBER_ID, f"consumer group {p.group_id!r} is Empty")
            return SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID)
        return sync_consumer_group(ctx, consumer, p)  # Kafka classicGroupSyncToConsumerGroup
    group = ctx.shard.group(p.group_id)
    if group is None:
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"group {p.group_id!r} does not exist")
        return SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID)
    error = group.validate_generation_member(p.member_id, p.group_instance_id, p.generation_id)
    if error is not None:
        return SyncGroupResult(ErrorCode(error))
    if _inconsistent(p.protocol_type, group.protocol_type) or _inconsistent(p.protocol_name, group.protocol_name):
        explain(
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
            f"request protocol {p.protocol_type}/{p.protocol_name}, "
            f"group protocol {group.protocol_type}/{group.protocol_name}",
        )
        return SyncGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    if group.is_in(GroupState.PREPARING_REBALANCE):
        explain(
            ErrorCode.REBALANCE_IN_PROGRESS, f"group {p.group_id!r} is PreparingRebalance: join again before syncing"
        )
        return SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS)

    member = group.members[p.member_id]
    if group.is_in(GroupState.STABLE):
        remove_pending_sync_member(ctx, group, p.member_id)
        return SyncGroupResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment)

    # CompletingRebalance: park until the leader's assignment is written.
    reply: ParkedReply[SyncGroupResult] = ParkedReply()
    if member.awaiting_sync is not None:
        # A repeated SyncGroup replaces the parked one; Kafka drops the old silently, we answer
        # it so no request hangs.
        explain_parked(
            member.awaiting_sync,
            ErrorCode.REBALANCE_IN_PROGRESS,
            f"a newer SyncGroup from member {p.member_id!r} replaced this one",
        )
        ctx.complete(member.awaiting_sync, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
    member.awaiting_sync = reply
    remove_pending_sync_member(ctx, group, p.member_id)
    if group.is_leader(p.member_id):
        assignments = dict(p.assignments)
        for each in group.members.values():
            # Members the leader left out get an empty assignment.
            each.assignment = assignments.get(each.member_id, b"")
        ctx.persist(group.snapshot())
        # Our runtime delivers these answers only once the record is durable, and a failed
        # append stops the shard, so moving to Stable now is what Kafka does after the append.
        propagate_assignment(ctx, group, ErrorCode.NONE)
        group.transition_to(GroupState.STABLE, ctx.now_ms)
    return reply
