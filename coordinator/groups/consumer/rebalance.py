"""The three steps of a consumer-group heartbeat after the member is known (Kafka
GroupMetadataManager.consumerGroupHeartbeat, Kafka 4.2):

1. the member's new metadata (a record when it changed) and, when its subscription changed or the
   subscribed topics' metadata may have, a group epoch bump carrying the KIP-1101 metadata hash;
2. a new target assignment when the group epoch is ahead of the assignment epoch;
3. reconciliation of the member towards its target, with the revocation deadline timer.
Each step appends records to the operation's list; nothing is applied until the operation emits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coordinator.groups.assignors.spec import AssignorError, SubscriptionType
from coordinator.groups.consumer.context import ConsumerOpContext
from coordinator.groups.consumer.current_assignment import CurrentAssignmentBuilder
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import EMPTY_ASSIGNMENT, Assignment, ConsumerGroupMember, MemberState
from coordinator.groups.consumer.membership import rebalance_timeout_key, schedule_rebalance_timeout
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupMetadataRecord,
    ConsumerGroupPartitionMetadataTombstone,
    TopicPartitions,
)
from coordinator.groups.consumer.subscriptions import subscription_type
from coordinator.groups.consumer.target_assignment import TargetAssignmentBuilder
from protocol.errors import ErrorCode


def member_metadata_changed(
    group_id: str, member: ConsumerGroupMember, updated: ConsumerGroupMember, records: list[Any]
) -> bool:
    """Kafka hasMemberSubscriptionChanged: a metadata record when anything changed; True when
    the subscribed topic names did."""
    if updated == member:
        return False
    records.append(updated.metadata_record(group_id))
    return updated.subscribed_topic_names != member.subscribed_topic_names


def update_subscription_metadata(
    ctx: ConsumerOpContext,
    group: ConsumerGroup,
    bump: bool,
    member: ConsumerGroupMember,
    updated: ConsumerGroupMember,
    records: list[Any],
) -> tuple[int, SubscriptionType, bool]:
    """Kafka updateSubscriptionMetadata: the subscription as it will be, its metadata hash, a bump
    when asked or when the hash changed. Returns (group epoch, subscription type, bumped)."""
    regexes = group.compute_subscribed_regexes(member, updated)
    names = group.compute_subscribed_topic_names(member, updated)
    new_hash = metadata_hash(names, ctx.topics)
    num_members = group.num_members()
    if not group.has_member(updated.member_id) and not group.has_static_member(updated.instance_id):
        num_members += 1
    sub_type = subscription_type(regexes, names, num_members)
    bump = bump or new_hash != group.metadata_hash
    epoch = group.group_epoch
    if bump:
        epoch += 1
        records.append(ConsumerGroupMetadataRecord(group.group_id, epoch, new_hash))
    # Kafka 4.1 replaced the subscription metadata record by the hash: delete any left.
    if group.has_subscription_metadata_record:
        records.append(ConsumerGroupPartitionMetadataTombstone(group.group_id))
    return epoch, sub_type, bump


def update_target_assignment(
    ctx: ConsumerOpContext,
    group: ConsumerGroup,
    group_epoch: int,
    member: ConsumerGroupMember,
    updated: ConsumerGroupMember,
    sub_type: SubscriptionType,
    records: list[Any],
) -> Assignment:
    """Kafka updateTargetAssignment: the group's preferred assignor computes the target for
    `group_epoch`; returns the updated member's new target."""
    configured = ctx.settings.assignors
    name = group.compute_preferred_server_assignor(member, updated, configured) or ctx.settings.default_assignor
    builder = TargetAssignmentBuilder(
        group_id=group.group_id,
        group_epoch=group_epoch,
        assignor=ctx.assignors[name],
        topics=ctx.topics,
        members=group.members,
        static_members=group.static_members,
        subscription_type=sub_type,
        target_assignment=group.target_assignment,
        resolved_regexes=group.resolved_regexes,
    )
    builder.add_or_update_member(updated)
    previous = group.static_member_id(updated.instance_id)
    if previous is not None and previous != updated.member_id:
        builder.remove_member(previous)
    try:
        result = builder.build()
    except AssignorError as exc:
        raise ConsumerGroupError(
            ErrorCode.UNKNOWN_SERVER_ERROR, f"Failed to compute a new target assignment for epoch {group_epoch}: {exc}"
        ) from None
    records.extend(result.records)
    return result.target.get(updated.member_id, EMPTY_ASSIGNMENT)


def maybe_reconcile(
    ctx: ConsumerOpContext,
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Assignment,
    has_subscription_changed: bool,
    owned: Sequence[TopicPartitions] | None,
    records: list[Any],
) -> ConsumerGroupMember:
    """Kafka maybeReconcile: a current-assignment record when the member moved, and the
    revocation deadline set while it must revoke (cancelled otherwise)."""
    if not has_subscription_changed and member.is_reconciled_to(target_epoch):
        return member
    updated = CurrentAssignmentBuilder(
        member,
        target_epoch=target_epoch,
        target=target,
        current_partition_epoch=group.current_partition_epoch,
        topics=ctx.topics,
        resolved_regexes=group.resolved_regexes,
        has_subscription_changed=has_subscription_changed,
        owned=owned,
    ).build()
    if updated != member:
        records.append(updated.assignment_record(group.group_id))
        if not updated.use_classic_protocol:
            if updated.state == MemberState.UNREVOKED_PARTITIONS:
                schedule_rebalance_timeout(
                    ctx, group.group_id, updated.member_id, updated.member_epoch, updated.rebalance_timeout_ms
                )
            else:
                ctx.timers.cancel(rebalance_timeout_key(group.group_id, updated.member_id))
    return updated
