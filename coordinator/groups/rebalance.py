"""The join and sync phases: starting rebalances, completing them, and the timers behind them.

Everything that moves a group between PreparingRebalance, CompletingRebalance and Stable (or
Empty) lives here, copied from Kafka's GroupMetadataManager (prepareRebalance,
maybeCompleteJoinPhase, completeClassicGroupJoin, tryCompleteInitialRebalanceElseSchedule,
expirePendingSync, expireClassicGroupMemberHeartbeat). Timer actions capture the group id, never
the group object, so a deleted-and-recreated group is never touched by an old timer.
"""

from __future__ import annotations

from coordinator.groups.group import ClassicGroup
from coordinator.groups.member import ClassicMember
from coordinator.groups.requests import UNKNOWN_MEMBER_ID, JoinGroupResult, SyncGroupResult
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import because, cause, explain_parked
from coordinator.runtime.operation import ParkedReply
from protocol.errors import ErrorCode

# -- timer keys (functions, never inline literals) -------------------------------------------


def heartbeat_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("heartbeat", group_id, member_id)


def join_key(group_id: str) -> tuple[str, str]:
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("sync", group_id)


# -- heartbeats ------------------------------------------------------------------------------


def schedule_heartbeat(ctx: GroupContext, group: ClassicGroup, member_id: str, timeout_ms: int) -> None:
    group_id = group.group_id
    ctx.shard.timers.schedule(
        heartbeat_key(group_id, member_id),
        ctx.now_ms + timeout_ms,
        lambda c: expire_member_heartbeat(c, group_id, member_id),
    )


def reschedule_member_heartbeat(ctx: GroupContext, group: ClassicGroup, member: ClassicMember) -> None:
    schedule_heartbeat(ctx, group, member.member_id, member.session_timeout_ms)


def cancel_heartbeat(ctx: GroupContext, group: ClassicGroup, member_id: str) -> None:
    ctx.shard.timers.cancel(heartbeat_key(group.group_id, member_id))


def expire_member_heartbeat(ctx: GroupContext, group_id: str, member_id: str) -> None:
    """Session (or new-member join, or pending-member) timeout fired."""
    because(f"timer: no heartbeat from member {member_id!r} within its session timeout")
    group = ctx.shard.group(group_id)
    if group is None or group.is_in(GroupState.DEAD):
        return
    if group.is_pending_member(member_id):
        # KIP-394: the id handed out with MEMBER_ID_REQUIRED was never used.
        group.remove(member_id)
        if group.is_in(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined():
            complete_join(ctx, group)
        return
    member = group.members.get(member_id)
    if member is not None and not member.has_satisfied_heartbeat():
        remove_member_and_update_group(ctx, group, member)


# -- removing members ------------------------------------------------------------------------


def remove_member(ctx: GroupContext, group: ClassicGroup, member: ClassicMember) -> None:
    """Drop a member, answering anything it has parked.

    Kafka answers a parked JoinGroup with UNKNOWN_MEMBER_ID so a live client rejoins. It leaves a
    parked SyncGroup unanswered; we answer it too so no request hangs forever.
    """
    cancel_heartbeat(ctx, group, member.member_id)
    why = f"member {member.member_id!r} was removed from group {group.group_id!r} ({cause() or 'unknown cause'})"
    explain_parked(member.awaiting_join, ErrorCode.UNKNOWN_MEMBER_ID, why)
    explain_parked(member.awaiting_sync, ErrorCode.UNKNOWN_MEMBER_ID, why)
    ctx.complete(member.awaiting_join, JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
    ctx.complete(member.awaiting_sync, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
    member.awaiting_join = member.awaiting_sync = None
    group.remove(member.member_id)


def remove_member_and_update_group(ctx: GroupContext, group: ClassicGroup, member: ClassicMember) -> None:
    remove_member(ctx, group, member)
    if group.is_in(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
        maybe_prepare_rebalance_or_complete_join(ctx, group)
    elif group.is_in(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined():
        # As Kafka's removeMemberAndUpdateClassicGroup: completes even an initial (delayed) one.
        complete_join(ctx, group)


# -- join phase ------------------------------------------------------------------------------


def maybe_prepare_rebalance_or_complete_join(ctx: GroupContext, group: ClassicGroup) -> None:
    if group.state.can_rebalance:
        prepare_rebalance(ctx, group)
    else:
        maybe_complete_join_phase(ctx, group)


def prepare_rebalance(ctx: GroupContext, group: ClassicGroup) -> None:
    if group.is_in(GroupState.COMPLETING_REBALANCE):
        # Members parked in SyncGroup must rejoin: their generation is over.
        reset_and_propagate_assignment_with_error(ctx, group, ErrorCode.REBALANCE_IN_PROGRESS)
    # Kafka removeSyncExpiration: the pending-sync bookkeeping belongs to the old generation.
    group.pending_sync_members.clear()
    ctx.shard.timers.cancel(sync_key(group.group_id))
    is_initial = group.is_in(GroupState.EMPTY)
    group.transition_to(GroupState.PREPARING_REBALANCE, ctx.now_ms)
    delay_ms = ctx.shard.config.initial_rebalance_delay_ms
    group_id = group.group_id
    if is_initial and delay_ms > 0:
        # group.initial.rebalance.delay.ms: give the other members of a new group time to join.
        remaining_ms = max(group.rebalance_timeout_ms() - delay_ms, 0)
        _schedule_initial_delay(ctx, group_id, delay_ms, remaining_ms)
        return
    ctx.shard.timers.schedule(
        join_key(group_id), ctx.now_ms + group.rebalance_timeout_ms(), lambda c: _complete_join_by_id(c, group_id)
    )
    maybe_complete_join_phase(ctx, group)


def _schedule_initial_delay(ctx: GroupContext, group_id: str, delay_ms: int, remaining_ms: int) -> None:
    ctx.shard.timers.schedule(
        join_key(group_id), ctx.now_ms + delay_ms, lambda c: try_complete_initial_rebalance(c, group_id, remaining_ms)
    )


def try_complete_initial_rebalance(ctx: GroupContext, group_id: str, remaining_ms: int) -> None:
    """Kafka tryCompleteInitialRebalanceElseSchedule: extend the delay while new members keep
    arriving, never past the group's rebalance timeout."""
    because("timer: group.initial.rebalance.delay.ms elapsed")
    group = ctx.shard.group(group_id)
    if group is None or not group.is_in(GroupState.PREPARING_REBALANCE):
        return
    delay_ms = ctx.shard.config.initial_rebalance_delay_ms
    if group.new_member_added and remaining_ms != 0:
        group.new_member_added = False
        _schedule_initial_delay(ctx, group_id, min(delay_ms, remaining_ms), max(remaining_ms - delay_ms, 0))
    else:
        complete_join(ctx, group)


def maybe_complete_join_phase(ctx: GroupContext, group: ClassicGroup) -> None:
    """Complete the join phase as soon as nobody is missing (Kafka maybeCompleteJoinPhase).

    The initial rebalance of a new group waits for its delay timer instead, unless the delay is
    0: then there is nothing to wait for and we complete at once (Kafka would run a 0 ms timer).
    """
    if not group.is_in(GroupState.PREPARING_REBALANCE):
        return
    if group.previous_state is GroupState.EMPTY and ctx.shard.config.initial_rebalance_delay_ms > 0:
        return
    if group.has_all_members_joined():
        complete_join(ctx, group)


def _complete_join_by_id(ctx: GroupContext, group_id: str) -> None:
    because("timer: the rebalance timeout ended the join phase")
    group = ctx.shard.group(group_id)
    if group is not None:
        complete_join(ctx, group)


def complete_join(ctx: GroupContext, group: ClassicGroup) -> None:
    """Kafka completeClassicGroupJoin: drop dynamic members that did not rejoin, start the next
    generation and answer every parked JoinGroup."""
    timers = ctx.shard.timers
    timers.cancel(join_key(group.group_id))
    if group.is_in(GroupState.DEAD) or not group.is_in(GroupState.PREPARING_REBALANCE):
        return
    for member in group.not_yet_rejoined_members():
        # Static members keep their place; their session timeout decides their fate.
        if not member.is_static:
            cancel_heartbeat(ctx, group, member.member_id)
            group.remove(member.member_id)
    if not group.maybe_elect_new_joined_leader() and group.members:
        # Only static members that did not rejoin are left: wait another rebalance timeout.
        group_id = group.group_id
        timers.schedule(
            join_key(group_id), ctx.now_ms + group.rebalance_timeout_ms(), lambda c: _complete_join_by_id(c, group_id)
        )
        return
    group.init_next_generation(ctx.now_ms)
    if group.is_in(GroupState.EMPTY):
        ctx.persist(group.snapshot())
        return
    for member in group.members.values():
        answer = JoinGroupResult(
            error=ErrorCode.NONE,
            member_id=member.member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            skip_assignment=False,
            members=group.leader_view() if group.is_leader(member.member_id) else [],
        )
        complete_join_reply(ctx, member, answer)
        reschedule_member_heartbeat(ctx, group, member)
        member.is_new = False
        group.pending_sync_members[member.member_id] = None
    _schedule_pending_sync(ctx, group)


def complete_join_reply(ctx: GroupContext, member: ClassicMember, answer: JoinGroupResult) -> None:
    ctx.complete(member.awaiting_join, answer)
    member.awaiting_join = None


def set_awaiting_join(ctx: GroupContext, member: ClassicMember, reply: ParkedReply) -> None:
    """Park a JoinGroup. A JoinGroup already parked for the member is answered
    REBALANCE_IN_PROGRESS (Kafka silently drops it, leaving the client to time out)."""
    if member.awaiting_join is not None:
        explain_parked(
            member.awaiting_join,
            ErrorCode.REBALANCE_IN_PROGRESS,
            f"a newer JoinGroup from member {member.member_id!r} replaced this one",
        )
        ctx.complete(member.awaiting_join, JoinGroupResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
    member.awaiting_join = reply


# -- sync phase ------------------------------------------------------------------------------


def _schedule_pending_sync(ctx: GroupContext, group: ClassicGroup) -> None:
    group_id, generation = group.group_id, group.generation_id
    ctx.shard.timers.schedule(
        sync_key(group_id),
        ctx.now_ms + group.rebalance_timeout_ms(),
        lambda c: expire_pending_sync(c, group_id, generation),
    )


def expire_pending_sync(ctx: GroupContext, group_id: str, generation_id: int) -> None:
    """Members of this generation that never sent SyncGroup are removed (Kafka expirePendingSync)."""
    because(f"timer: members of generation {generation_id} did not send SyncGroup within the rebalance timeout")
    group = ctx.shard.group(group_id)
    if group is None or group.generation_id != generation_id:
        return
    if not group.is_in(GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
        return
    if group.has_received_sync_from_all_members():
        return
    for member_id in list(group.pending_sync_members):
        remove_member(ctx, group, group.members[member_id])
    prepare_rebalance(ctx, group)


def remove_pending_sync_member(ctx: GroupContext, group: ClassicGroup, member_id: str) -> None:
    group.pending_sync_members.pop(member_id, None)
    if (
        not group.is_in(GroupState.COMPLETING_REBALANCE, GroupState.STABLE)
        or group.has_received_sync_from_all_members()
    ):
        ctx.shard.timers.cancel(sync_key(group.group_id))


def propagate_assignment(ctx: GroupContext, group: ClassicGroup, error: ErrorCode) -> None:
    """Answer every parked SyncGroup; members that waited count as having heartbeated.
    Errors carry no protocol type/name (Kafka propagateAssignment)."""
    ok = error == ErrorCode.NONE
    for member in group.members.values():
        if member.awaiting_sync is not None:
            if not ok:
                explain_parked(
                    member.awaiting_sync,
                    error,
                    f"a new rebalance of group {group.group_id!r} "
                    f"started before the leader's assignment arrived ({cause() or 'unknown cause'})",
                )
            ctx.complete(
                member.awaiting_sync,
                SyncGroupResult(
                    error, group.protocol_type if ok else None, group.protocol_name if ok else None, member.assignment
                ),
            )
            member.awaiting_sync = None
            reschedule_member_heartbeat(ctx, group, member)


def reset_and_propagate_assignment_with_error(ctx: GroupContext, group: ClassicGroup, error: ErrorCode) -> None:
    for member in group.members.values():
        member.assignment = b""
    propagate_assignment(ctx, group, error)
