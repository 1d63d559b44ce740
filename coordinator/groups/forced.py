"""Changes the control plane forces on a classic group, through the normal op path.

"Expire member X now" runs what its session timeout would run (the member is removed, the group
rebalances or completes its join phase); "rebalance group G now" starts a rebalance as a leader's
rejoin would, from any state a rebalance can start from. Both write what those events write.
A KIP-848 consumer group's or a KIP-932 share group's member is expired as its session timeout
would (fenced, the group epoch bumped); neither has a rebalance to start (GROUP_ID_NOT_FOUND: not
a classic group).
"""

from __future__ import annotations

from coordinator.groups.consumer_ops import fence_member
from coordinator.groups.rebalance import prepare_rebalance, remove_member_and_update_group
from coordinator.groups.shard import GroupContext
from coordinator.groups.share import ops as share_ops
from coordinator.observe.reasons import because, explain
from protocol.errors import ErrorCode


def expire_member(ctx: GroupContext, target: tuple[str, str]) -> ErrorCode:
    group_id, member_id = target
    if ctx.shard.consumer_group(group_id) is not None:
        return fence_member(ctx, group_id, member_id, "control: expired on request")
    if ctx.shard.share_group(group_id) is not None:
        return share_ops.fence_member(ctx, group_id, member_id, "control: expired on request")
    group = ctx.shard.group(group_id)
    member = None if group is None else group.members.get(member_id)
    if group is None or member is None:
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"no member {member_id!r} in group {group_id!r}")
        return ErrorCode.UNKNOWN_MEMBER_ID
    because(f"control: member {member_id!r} expired on request")
    remove_member_and_update_group(ctx, group, member)
    return ErrorCode.NONE


def rebalance(ctx: GroupContext, group_id: str) -> ErrorCode:
    group = ctx.shard.group(group_id)
    if group is None:
        explain(ErrorCode.GROUP_ID_NOT_FOUND, f"group {group_id!r} does not exist")
        return ErrorCode.GROUP_ID_NOT_FOUND
    if not group.members or not group.state.can_rebalance:
        explain(
            ErrorCode.REBALANCE_IN_PROGRESS if group.members else ErrorCode.NONE,
            f"group {group_id!r} is {group.state}: nothing to start",
        )
        return ErrorCode.REBALANCE_IN_PROGRESS if group.members else ErrorCode.NONE
    because(f"control: group {group_id!r} rebalanced on request")
    prepare_rebalance(ctx, group)
    return ErrorCode.NONE
