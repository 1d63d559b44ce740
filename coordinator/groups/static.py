"""Static membership (KIP-345): a known group.instance.id rejoining with a new member id.

Copied from Kafka's updateStaticMemberThenRebalanceOrCompleteJoin and
ClassicGroup.replaceStaticMember. The old member id is fenced at once (its parked requests get
FENCED_INSTANCE_ID). In Stable with an unchanged selected protocol the member is replaced
without a rebalance and the group is written; in CompletingRebalance it always rebalances
(KAFKA-9801: the leader may be assigning to the old member id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordinator.groups.group import ClassicGroup
from coordinator.groups.rebalance import (
    cancel_heartbeat,
    complete_join_reply,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    prepare_rebalance,
    reschedule_member_heartbeat,
    set_awaiting_join,
)
from coordinator.groups.requests import JoinGroupResult, SyncGroupResult
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain_parked
from coordinator.runtime.operation import ParkedReply
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from coordinator.groups.requests import JoinGroupParams


def update_static_member_then_rebalance_or_complete_join(
    ctx: GroupContext, group: ClassicGroup, p: JoinGroupParams, old_member_id: str, new_member_id: str
) -> ParkedReply[JoinGroupResult]:
    assert p.group_instance_id is not None
    current_leader = group.leader_id
    old = group.members[old_member_id]
    why = f"group.instance.id {p.group_instance_id!r} rejoined as a new member: {old_member_id!r} is fenced"
    explain_parked(old.awaiting_join, ErrorCode.FENCED_INSTANCE_ID, why)
    explain_parked(old.awaiting_sync, ErrorCode.FENCED_INSTANCE_ID, why)
    ctx.complete(old.awaiting_join, JoinGroupResult(ErrorCode.FENCED_INSTANCE_ID, old_member_id))
    ctx.complete(old.awaiting_sync, SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID))
    old.awaiting_join = old.awaiting_sync = None
    cancel_heartbeat(ctx, group, old_member_id)

    member = group.replace_static_member_id(p.group_instance_id, old_member_id, new_member_id)
    reschedule_member_heartbeat(ctx, group, member)
    reply: ParkedReply[JoinGroupResult] = ParkedReply()
    group.update_protocols(member, p.protocols, p.rebalance_timeout_ms, p.session_timeout_ms)
    set_awaiting_join(ctx, member, reply)

    if group.is_in(GroupState.STABLE):
        if group.select_protocol() == group.protocol_name:
            # Nothing the assignment depends on changed: persist the new member id and hand
            # back the current generation. From JoinGroup v9 a replaced leader gets the member
            # list with skip_assignment (KIP-814); older clients get the *old* leader id, so
            # they act as followers and keep the current assignment.
            ctx.persist(group.snapshot())
            if p.request_version >= 9:
                skip = group.is_leader(new_member_id)
                leader, members = group.leader_id, group.leader_view() if skip else []
            else:
                leader, skip, members = current_leader, False, []
            complete_join_reply(
                ctx,
                member,
                JoinGroupResult(
                    error=ErrorCode.NONE,
                    member_id=new_member_id,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=leader or "",
                    skip_assignment=skip,
                    members=members,
                ),
            )
        else:
            maybe_prepare_rebalance_or_complete_join(ctx, group)
    elif group.is_in(GroupState.COMPLETING_REBALANCE):
        prepare_rebalance(ctx, group)
    else:  # PreparingRebalance: the member simply takes part in this rebalance.
        maybe_complete_join_phase(ctx, group)
    return reply
