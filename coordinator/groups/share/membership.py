"""Who is a member of a share group: finding and admitting members, fencing them, and their session
timeouts (Kafka GroupMetadataManager: getOrMaybeCreateShareGroup, throwIfShareGroupIsFull,
throwIfShareGroupMemberEpochIsInvalid, shareGroupFenceMember(Operation), scheduleShareGroupSessionTimeout,
onLoaded).

Functions that produce records append them to the operation's `records` list; the operation
emits the list at the end. A fenced member's records go in Kafka's order (current assignment,
target assignment, subscription tombstones), then the group epoch bumps with the metadata hash of
what remains. Timer actions are operations of their own and emit directly.
"""

from __future__ import annotations

from typing import Any

from coordinator.groups.consumer.errors import ConsumerGroupError, group_id_not_found, unknown_member
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.share.context import ShareContext
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.share.member import ShareGroupMember
from coordinator.groups.share.records import (
    ShareGroupCurrentMemberAssignmentTombstone,
    ShareGroupMemberMetadataTombstone,
    ShareGroupMetadataRecord,
    ShareGroupTargetAssignmentMemberTombstone,
)
from protocol.errors import ErrorCode


def session_timeout_key(group_id: str, member_id: str) -> str:
    """Kafka groupSessionTimeoutKey (the same key as a consumer-group member's)."""
    return f"session-timeout-{group_id}-{member_id}"


def share_group(ctx: ShareContext, group_id: str) -> ShareGroup:
    """Kafka GroupMetadataManager.shareGroup(groupId)."""
    group = ctx.groups.get(group_id)
    if group is None:
        raise group_id_not_found(f"Group {group_id} not found.")
    if not isinstance(group, ShareGroup):
        raise group_id_not_found(f"Group {group_id} is not a share group.")
    return group


def group_for_heartbeat(ctx: ShareContext, group_id: str, create: bool) -> ShareGroup:
    """Kafka getOrMaybeCreateShareGroup: a new group is a fresh object that replay materializes;
    a group of another type is refused (no conversion to or from share groups)."""
    group = ctx.groups.get(group_id)
    if group is None:
        if not create:
            raise group_id_not_found(f"Share group {group_id} not found.")
        return ShareGroup(group_id)
    if not isinstance(group, ShareGroup):
        raise group_id_not_found(f"Group {group_id} is not a share group.")
    return group


def check_not_full(ctx: ShareContext, group: ShareGroup, member_id: str) -> None:
    """Kafka throwIfShareGroupIsFull (group.share.max.size, read now)."""
    limit = ctx.max_size
    if group.num_members() >= limit and (not member_id or not group.has_member(member_id)):
        raise ConsumerGroupError(
            ErrorCode.GROUP_MAX_SIZE_REACHED, f"The share group has reached its maximum capacity of {limit} members."
        )


def check_member_epoch(member: ShareGroupMember, received: int) -> None:
    """Kafka throwIfShareGroupMemberEpochIsInvalid: the previous epoch is accepted (the response
    that bumped the epoch may have been lost)."""
    if received > member.member_epoch:
        raise ConsumerGroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            (
                f"The share group member has a greater member epoch ({received}) than the one known by the group "
                f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin."
            ),
        )
    if received < member.member_epoch and received != member.previous_member_epoch:
        raise ConsumerGroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            (
                f"The share group member has a smaller member epoch ({received}) than the one known by the group "
                f"coordinator ({member.member_epoch}), and it does not match the previous member epoch "
                f"({member.previous_member_epoch}). The member must abandon all its partitions and rejoin."
            ),
        )


def get_or_create_member(group: ShareGroup, member_id: str, member_epoch: int, create: bool) -> ShareGroupMember:
    """Kafka getOrMaybeSubscribeShareGroupMember."""
    member = group.members.get(member_id)
    if member is None:
        if not create:
            raise unknown_member(member_id, group.group_id)
        member = ShareGroupMember(member_id)
    check_member_epoch(member, member_epoch)
    return member


def fence_member(
    ctx: ShareContext, group: ShareGroup, member: ShareGroupMember, records: list[Any], reason: str
) -> None:
    """Kafka shareGroupFenceMember: the member's tombstones, a group epoch bump carrying the
    metadata hash of the remaining subscriptions, and its session timer cancelled."""
    gid = group.group_id
    records.append(ShareGroupCurrentMemberAssignmentTombstone(gid, member.member_id))
    records.append(ShareGroupTargetAssignmentMemberTombstone(gid, member.member_id))
    records.append(ShareGroupMemberMetadataTombstone(gid, member.member_id))
    names = group.compute_subscribed_topic_names(member, None)
    epoch = group.group_epoch + 1
    records.append(ShareGroupMetadataRecord(gid, epoch, metadata_hash(names, ctx.topics)))
    ctx.explain(ErrorCode.NONE, f"share group {gid} epoch bumped to {epoch}: {member.member_id} {reason}")
    ctx.cancel(session_timeout_key(gid, member.member_id))


def fence_by_timer(ctx: ShareContext, group_id: str, member_id: str, reason: str) -> None:
    """Kafka shareGroupFenceMemberOperation: nothing if the group or the member is gone."""
    group = ctx.groups.get(group_id)
    if not isinstance(group, ShareGroup):
        return
    member = group.members.get(member_id)
    if member is None:
        return
    records: list[Any] = []
    fence_member(ctx, group, member, records, reason)
    ctx.emit_all(records)


def schedule_session_timeout(ctx: ShareContext, group_id: str, member_id: str, timeout_ms: int | None = None) -> None:
    """Kafka scheduleShareGroupSessionTimeout, with the group's share.session.timeout.ms (read
    now unless the caller read it already)."""
    if timeout_ms is None:
        timeout_ms = ctx.settings(group_id).session_timeout_ms
    ctx.schedule(
        session_timeout_key(group_id, member_id),
        ctx.now_ms + timeout_ms,
        lambda c: fence_by_timer(c, group_id, member_id, "left: its session expired"),
    )


def on_loaded(ctx: ShareContext) -> None:
    """Kafka onLoaded: after a load, every share-group member gets a session timeout."""
    for group in list(ctx.groups.values()):
        if isinstance(group, ShareGroup):
            for member_id in group.members:
                schedule_session_timeout(ctx, group.group_id, member_id)
