"""DescribeGroups (15), ListGroups (16) and DeleteGroups (42): the admin view of groups.

Kafka GroupMetadataManager.describeGroups / listGroups / deleteGroups. Member metadata and the
protocol name are shown only for Stable groups; each member's assignment always (describeNoMetadata),
so a rebalance that started from Stable still shows the last one (it is cleared only when a
rebalance starts from CompletingRebalance). An unknown group is described as Dead with no members:
error NONE before v6, GROUP_ID_NOT_FOUND from v6 (KIP-1043). Deleting writes a tombstone per
committed offset and one for the group, applied through replay like every record.
"""

from __future__ import annotations

from coordinator.groups.offsets import delete_all_offsets
from coordinator.groups.rebalance import join_key, sync_key
from coordinator.groups.record_types import GroupTombstone
from coordinator.groups.requests import (
    DeletedGroup,
    DeleteGroupsParams,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsParams,
    ListedGroup,
    ListGroupsParams,
)
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode

CLASSIC_GROUP_TYPE = "classic"


def describe_groups(ctx: GroupContext, p: DescribeGroupsParams) -> list[DescribedGroup]:
    described = []
    for group_id in p.group_ids:
        group = ctx.shard.group(group_id)
        if group is None:
            error = ErrorCode.GROUP_ID_NOT_FOUND if p.request_version >= 6 else ErrorCode.NONE
            if error:
                explain(error, f"group {group_id!r} does not exist")
            described.append(DescribedGroup(group_id, error, str(GroupState.DEAD), "", ""))
            continue
        stable = group.is_in(GroupState.STABLE)
        members = [
            DescribedMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                metadata=m.metadata(group.protocol_name) if stable else b"",
                assignment=m.assignment,
            )
            for m in group.members.values()
        ]
        described.append(DescribedGroup(
            group_id=group_id,
            error=ErrorCode.NONE,
            state=str(group.state),
            protocol_type=group.protocol_type or "",
            protocol_data=(group.protocol_name or "") if stable else "",
            members=members,
        ))
    return described


def list_groups(ctx: GroupContext, p: ListGroupsParams) -> list[ListedGroup]:
    states = {s.lower() for s in p.states_filter}
    types = {t.lower() for t in p.types_filter}
    if types and CLASSIC_GROUP_TYPE not in types:
        return []
    return [
        ListedGroup(group.group_id, group.protocol_type or "", str(group.state))
        for group in ctx.shard.groups.values()
        if not states or str(group.state).lower() in states
    ]


def delete_groups(ctx: GroupContext, p: DeleteGroupsParams) -> list[DeletedGroup]:
    results = []
    for group_id in p.group_ids:
        group = ctx.shard.group(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            error = ErrorCode.GROUP_ID_NOT_FOUND
            explain(error, f"group {group_id!r} does not exist")
        elif not group.is_in(GroupState.EMPTY):
            error = ErrorCode.NON_EMPTY_GROUP
            explain(error, f"group {group_id!r} is {group.state} with {len(group.members)} member(s); "
                           "only an Empty group can be deleted")
        else:
            error = ErrorCode.NONE
            # Kafka GroupCoordinatorShard.deleteGroups: offset tombstones, then the group's.
            delete_all_offsets(ctx, group_id)
            group.transition_to(GroupState.DEAD, ctx.now_ms)
            ctx.apply(GroupTombstone(group_id))
            ctx.shard.timers.cancel(join_key(group_id))
            ctx.shard.timers.cancel(sync_key(group_id))
        results.append(DeletedGroup(group_id, error))
    return results
