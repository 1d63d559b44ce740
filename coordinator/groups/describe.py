"""DescribeGroups (15), ListGroups (16) and DeleteGroups (42): the admin view of groups.

Kafka GroupMetadataManager.describeGroups / listGroups / deleteGroups. Member metadata and the
protocol name are shown only for Stable groups; each member's assignment always (describeNoMetadata),
so a rebalance that started from Stable still shows the last one (it is cleared only when a
rebalance starts from CompletingRebalance). An unknown group is described as Dead with no members:
error NONE before v6, GROUP_ID_NOT_FOUND from v6 (KIP-1043); so is a KIP-848 consumer group or a
KIP-932 share group, which is not a classic group (Kafka describes them with ConsumerGroupDescribe
and ShareGroupDescribe). ListGroups lists every type, each with its own state names, and filters
on type (v5+) and state (v4+). Deleting writes a tombstone per committed offset and the group's
tombstones (one for a classic group, a consumer or share group's records in Kafka's order),
applied through replay like every record; a share group's share-partition state was deleted in
the share coordinator before (GroupService.delete_groups).
"""

from __future__ import annotations

from coordinator.groups.consumer import describe as consumer_describe
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import GROUP_TYPE as CONSUMER_GROUP_TYPE
from coordinator.groups.consumer.group import ConsumerGroup
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
from coordinator.groups.share import describe as share_describe
from coordinator.groups.share.group import GROUP_TYPE as SHARE_GROUP_TYPE
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode

CLASSIC_GROUP_TYPE = "classic"


def describe_groups(ctx: GroupContext, p: DescribeGroupsParams) -> list[DescribedGroup]:
    described = []
    for group_id in p.group_ids:
        modern = ctx.shard.groups.get(group_id)
        if isinstance(modern, (ConsumerGroup, ShareGroup)):
            entry = consumer_describe if isinstance(modern, ConsumerGroup) else share_describe
            error, message, state = entry.describe_groups_entry(group_id, p.request_version)
            if error:
                explain(error, message or "")
            described.append(DescribedGroup(group_id, ErrorCode(error), state, "", "", error_message=message))
            continue
        group = ctx.shard.group(group_id)
        if group is None:
            # Kafka GroupMetadataManager.describeGroups: GroupIdNotFoundException's message from
            # v6 (KIP-1043); before, an unknown group is described as Dead without an error.
            if p.request_version >= 6:
                message = f"Group {group_id} not found."
                explain(ErrorCode.GROUP_ID_NOT_FOUND, message)
                described.append(
                    DescribedGroup(
                        group_id, ErrorCode.GROUP_ID_NOT_FOUND, str(GroupState.DEAD), "", "", error_message=message
                    )
                )
            else:
                described.append(DescribedGroup(group_id, ErrorCode.NONE, str(GroupState.DEAD), "", ""))
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
        described.append(
            DescribedGroup(
                group_id=group_id,
                error=ErrorCode.NONE,
                state=str(group.state),
                protocol_type=group.protocol_type or "",
                protocol_data=(group.protocol_name or "") if stable else "",
                members=members,
            )
        )
    return described


def list_groups(ctx: GroupContext, p: ListGroupsParams) -> list[ListedGroup]:
    """Kafka GroupMetadataManager.listGroups: filters compared lower-case (states trimmed)."""
    states = {s.lower().strip() for s in p.states_filter}
    types = {t.lower() for t in p.types_filter}
    listed = []
    for group in ctx.shard.groups.values():
        if isinstance(group, ConsumerGroup):
            if types and CONSUMER_GROUP_TYPE not in types:
                continue
            if states and not consumer_describe.in_states(group, states):
                continue
            entry = consumer_describe.listed_group(group)
            listed.append(ListedGroup(entry.group_id, entry.protocol_type, entry.group_state, entry.group_type))
        elif isinstance(group, ShareGroup):
            if (types and SHARE_GROUP_TYPE not in types) or (states and str(group.state).lower() not in states):
                continue
            listed.append(ListedGroup(*share_describe.listed(group)))
        elif (not types or CLASSIC_GROUP_TYPE in types) and (not states or str(group.state).lower() in states):
            listed.append(ListedGroup(group.group_id, group.protocol_type or "", str(group.state)))
    return listed


def delete_groups(ctx: GroupContext, p: DeleteGroupsParams) -> list[DeletedGroup]:
    results = []
    for group_id in p.group_ids:
        consumer = ctx.shard.consumer_group(group_id)
        if consumer is not None:
            results.append(DeletedGroup(group_id, _delete_consumer_group(ctx, consumer)))
            continue
        share = ctx.shard.share_group(group_id)
        if share is not None:
            results.append(DeletedGroup(group_id, _delete_share_group(ctx, share)))
            continue
        group = ctx.shard.group(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            error = ErrorCode.GROUP_ID_NOT_FOUND
            explain(error, f"group {group_id!r} does not exist")
        elif not group.is_in(GroupState.EMPTY):
            error = ErrorCode.NON_EMPTY_GROUP
            explain(
                error,
                f"group {group_id!r} is {group.state} with {len(group.members)} member(s); "
                "only an Empty group can be deleted",
            )
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


def _delete_consumer_group(ctx: GroupContext, group: ConsumerGroup) -> ErrorCode:
    """ConsumerGroup.validateDeleteGroup (NON_EMPTY_GROUP unless Empty), then the offsets' and the
    group's tombstones (GroupCoordinatorShard.deleteGroups)."""
    try:
        consumer_describe.validate_delete_group(group)
    except ConsumerGroupError as exc:
        explain(
            exc.code,
            f"consumer group {group.group_id!r} is {group.state} with {group.num_members()} "
            "member(s); only an Empty group can be deleted",
        )
        return exc.code
    delete_all_offsets(ctx, group.group_id)
    for record in consumer_describe.group_tombstones(group):
        ctx.apply(record)
    return ErrorCode.NONE


def _delete_share_group(ctx: GroupContext, group: ShareGroup) -> ErrorCode:
    """ShareGroup.validateDeleteGroup (NON_EMPTY_GROUP unless Empty), then the group's tombstones
    in Kafka's order (a share group has no committed offsets)."""
    if not group.is_empty():
        explain(
            ErrorCode.NON_EMPTY_GROUP,
            f"share group {group.group_id!r} has {group.num_members()} member(s); only an Empty group can be deleted",
        )
        return ErrorCode.NON_EMPTY_GROUP
    delete_all_offsets(ctx, group.group_id)
    for record in share_describe.group_tombstones(group):
        ctx.apply(record)
    return ErrorCode.NONE
