"""Who is a member: finding, admitting, replacing, fencing and timing out consumer-group members
(Kafka GroupMetadataManager: getOrMaybeSubscribe*ConsumerGroupMember, throwIf*, replaceMember,
consumerGroupFenceMembers, the session and rebalance timeouts, onLoaded).

Functions that produce records append them to the operation's `records` list; the operation
emits the list at the end. Timer actions are operations of their own and emit directly. Timer
keys are Kafka's, so a timer set twice replaces the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from coordinator.groups.consumer.context import ConsumerOpContext
from coordinator.groups.consumer.errors import ConsumerGroupError, group_id_not_found, unknown_member
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupMember,
    MemberState,
    to_topic_partitions,
)
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupCurrentMemberAssignmentTombstone,
    ConsumerGroupMemberMetadataTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupRegularExpressionTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    TopicPartitions,
)
from protocol.errors import ErrorCode


def session_timeout_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"


def rebalance_timeout_key(group_id: str, member_id: str) -> str:
    return f"rebalance-timeout-{group_id}-{member_id}"


def join_timeout_key(group_id: str, member_id: str) -> str:
    """A classic member's join deadline inside a consumer group (set by the migration code)."""
    return f"join-{group_id}-{member_id}"


def sync_timeout_key(group_id: str, member_id: str) -> str:
    return f"sync-{group_id}-{member_id}"


def consumer_group(ctx: ConsumerOpContext, group_id: str) -> ConsumerGroup:
    """Kafka GroupMetadataManager.consumerGroup(groupId)."""
    group = ctx.groups.get(group_id)
    if group is None:
        raise group_id_not_found(f"Group {group_id} not found.")
    if not isinstance(group, ConsumerGroup):
        raise group_id_not_found(f"Group {group_id} is not a consumer group.")
    return group


def get_member(group: ConsumerGroup, member_id: str) -> ConsumerGroupMember:
    member = group.members.get(member_id)
    if member is None:
        raise unknown_member(member_id, group.group_id)
    return member


# -- admission checks ------------------------------------------------------------------------


def _is_subset(owned: Sequence[TopicPartitions] | None, assigned: Any) -> bool:
    if owned is None:
        return False
    for tp in owned:
        parts = assigned.get(tp.topic_id)
        if parts is None or any(p not in parts for p in tp.partitions):
            return False
    return True


def check_member_epoch(member: ConsumerGroupMember, received: int, owned: Sequence[TopicPartitions] | None) -> None:
    """Kafka throwIfConsumerGroupMemberEpochIsInvalid (with KAFKA-19233: epoch 0 rejoins)."""
    if received == 0:
        return
    if received > member.member_epoch:
        raise ConsumerGroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            (
                f"The consumer group member has a greater member epoch ({received}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin."
            ),
        )
    if received < member.member_epoch:
        # The previous epoch with a subset of the assignment is accepted: the response that
        # bumped the epoch may have been lost.
        if received != member.previous_member_epoch or not _is_subset(owned, member.assigned_partitions):
            raise ConsumerGroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                (
                    f"The consumer group member has a smaller member epoch ({received}) than the one known by the "
                    f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and "
                    "rejoin."
                ),
            )


def check_not_full(ctx: ConsumerOpContext, group: ConsumerGroup, member_id: str) -> None:
    """Kafka throwIfConsumerGroupIsFull (checked with the member id as sent)."""
    limit = ctx.settings.max_size
    if group.num_members() >= limit and (not member_id or not group.has_member(member_id)):
        raise ConsumerGroupError(
            ErrorCode.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum capacity of {limit} members."
        )


def check_static_known(member: ConsumerGroupMember | None, instance_id: str) -> ConsumerGroupMember:
    if member is None:
        raise ConsumerGroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    return member


def check_not_fenced(member: ConsumerGroupMember, member_id: str, instance_id: str) -> None:
    if member.member_id != member_id:
        raise ConsumerGroupError(
            ErrorCode.FENCED_INSTANCE_ID,
            (f"Static member {member_id} with instance id {instance_id} was fenced by member {member.member_id}."),
        )


def dynamic_member(
    group: ConsumerGroup, member_id: str, member_epoch: int, owned: Sequence[TopicPartitions] | None, create: bool
) -> ConsumerGroupMember:
    member = group.members.get(member_id)
    if member is None:
        if not create:
            raise unknown_member(member_id, group.group_id)
        member = ConsumerGroupMember(member_id)
    check_member_epoch(member, member_epoch, owned)
    return member


def static_member(
    group: ConsumerGroup,
    member_id: str,
    member_epoch: int,
    instance_id: str,
    owned: Sequence[TopicPartitions] | None,
    create: bool,
    records: list[Any],
    classic: bool = False,
) -> ConsumerGroupMember:
    """Kafka getOrMaybeSubscribeStaticConsumerGroupMember. A classic-protocol member (`classic`,
    JoinGroup in a consumer group) replaces the instance's previous member whatever its epoch and
    has no member epoch to check."""
    existing = group.static_member(instance_id)
    if create:
        if existing is None:
            return group.members.get(member_id) or ConsumerGroupMember(member_id)
        if (
            not classic
            and not existing.use_classic_protocol
            and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH
        ):
            raise ConsumerGroupError(
                ErrorCode.UNRELEASED_INSTANCE_ID,
                (
                    f"Static member {member_id} with instance id {instance_id} cannot join the group because the "
                    f"instance id is owned by {existing.member_id} member."
                ),
            )
        # The new incarnation takes over the previous one's subscription and assignment.
        new = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        replace_member(records, group, existing, new)
        return new
    existing = check_static_known(existing, instance_id)
    check_not_fenced(existing, member_id, instance_id)
    if not classic:
        check_member_epoch(existing, member_epoch, owned)
    return existing


def replace_member(
    records: list[Any], group: ConsumerGroup, old: ConsumerGroupMember, new: ConsumerGroupMember
) -> None:
    """Kafka replaceMember. The old member's timers are left running: they find no member."""
    gid = group.group_id
    remove_member_records(records, gid, old.member_id)
    records.append(new.metadata_record(gid))
    records.append(
        ConsumerGroupTargetAssignmentMemberRecord(
            gid, new.member_id, to_topic_partitions(group.target_assignment_of(old.member_id))
        )
    )
    records.append(new.assignment_record(gid))


def remove_member_records(records: list[Any], group_id: str, member_id: str) -> None:
    """The member's tombstones, in the order replay needs them."""
    records.append(ConsumerGroupCurrentMemberAssignmentTombstone(group_id, member_id))
    records.append(ConsumerGroupTargetAssignmentMemberTombstone(group_id, member_id))
    records.append(ConsumerGroupMemberMetadataTombstone(group_id, member_id))


# -- leaving and fencing --------------------------------------------------------------------


def static_leave_records(group: ConsumerGroup, member: ConsumerGroupMember) -> list[Any]:
    """Kafka consumerGroupStaticMemberGroupLeave: epoch -2, assignment kept for the session, every
    kept partition's assignment epoch reset to 0 (KIP-1251: the instance's next incarnation joins
    at epoch 0 and may commit them)."""
    leaving = replace(
        member,
        member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
        partitions_pending_revocation={},
        assignment_epochs={t: dict.fromkeys(ps, 0) for t, ps in member.assigned_partitions.items()},
    )
    return [leaving.assignment_record(group.group_id)]


def fence_members(
    ctx: ConsumerOpContext,
    group: ConsumerGroup,
    members: Sequence[ConsumerGroupMember],
    records: list[Any],
    reason: str,
) -> None:
    """Kafka consumerGroupFenceMembers: remove the members, drop regexes nobody else uses, bump
    the group epoch (with the metadata hash of what remains) and cancel the members' timers."""
    if not members:
        return
    if ctx.classic.downgrade_on_leave(ctx, group, members, records):
        return
    gid = group.group_id
    for member in members:
        remove_member_records(records, gid, member.member_id)
    regex_users: dict[str, int] = {}
    for member in members:
        if member.regex is not None:
            regex_users[member.regex] = regex_users.get(member.regex, 0) + 1
    deleted = [regex for regex, n in regex_users.items() if group.num_subscribed_members(regex) == n]
    records.extend(ConsumerGroupRegularExpressionTombstone(gid, regex) for regex in deleted)
    names = group.compute_subscribed_topic_names_without(members, deleted)
    epoch = group.group_epoch + 1
    records.append(ConsumerGroupMetadataRecord(gid, epoch, metadata_hash(names, ctx.topics)))
    ctx.explain(
        ErrorCode.NONE, f"group {gid} epoch bumped to {epoch}: {', '.join(m.member_id for m in members)} {reason}"
    )
    for member in members:
        cancel_timers(ctx, gid, member.member_id)


def fence_by_timer(
    ctx: ConsumerOpContext, group_id: str, member_id: str, reason: str, only_at_epoch: int | None = None
) -> None:
    """Kafka consumerGroupFenceMemberOperation: nothing if the group or member is gone."""
    group = ctx.groups.get(group_id)
    if not isinstance(group, ConsumerGroup):
        return
    member = group.members.get(member_id)
    if member is None or (only_at_epoch is not None and member.member_epoch != only_at_epoch):
        return
    records: list[Any] = []
    fence_members(ctx, group, [member], records, reason)
    for record in records:
        ctx.emit(record)


# -- timers ----------------------------------------------------------------------------------


def schedule_session_timeout(
    ctx: ConsumerOpContext, group_id: str, member_id: str, timeout_ms: int | None = None
) -> None:
    timeout = ctx.settings.session_timeout_for(group_id) if timeout_ms is None else timeout_ms
    ctx.timers.schedule(
        session_timeout_key(group_id, member_id),
        ctx.now_ms + timeout,
        lambda c: fence_by_timer(c, group_id, member_id, "left: its session expired"),
    )


def schedule_rebalance_timeout(
    ctx: ConsumerOpContext, group_id: str, member_id: str, member_epoch: int, rebalance_timeout_ms: int
) -> None:
    """The revocation deadline: still at `member_epoch` when it fires, the member is fenced."""
    reason = f"left: it failed to revoke its partitions from epoch {member_epoch} within {rebalance_timeout_ms}ms"
    ctx.timers.schedule(
        rebalance_timeout_key(group_id, member_id),
        ctx.now_ms + rebalance_timeout_ms,
        lambda c: fence_by_timer(c, group_id, member_id, reason, member_epoch),
    )


def cancel_timers(ctx: ConsumerOpContext, group_id: str, member_id: str) -> None:
    for key in (session_timeout_key, rebalance_timeout_key, join_timeout_key, sync_timeout_key):
        ctx.timers.cancel(key(group_id, member_id))


def on_loaded(ctx: ConsumerOpContext) -> None:
    """Kafka onLoaded: after a load, every member gets a session timeout and every member still
    revoking gets its rebalance timeout."""
    for group in list(ctx.groups.values()):
        if not isinstance(group, ConsumerGroup):
            continue
        for member in group.members.values():
            schedule_session_timeout(ctx, group.group_id, member.member_id)
            if member.state == MemberState.UNREVOKED_PARTITIONS:
                schedule_rebalance_timeout(
                    ctx, group.group_id, member.member_id, member.member_epoch, member.rebalance_timeout_ms
                )
