"""Replay: apply one consumer-group record to the groups (Kafka GroupMetadataManager.replay).

The only code that changes a ConsumerGroup; used live (ctx.emit) and at load. A record creates
its group when missing; a tombstone for a missing group or member is ignored; a tombstone that
contradicts the group (a member deleted before its assignment, a group deleted with members)
raises IllegalStateError, as Kafka's replay throws IllegalStateException. A classic "simple"
group (offsets only) under the same id is replaced; any other foreign group is an error.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import replace
from typing import Any

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.context import NO_CLASSIC, ClassicBridge
from coordinator.groups.consumer.group import ConsumerGroup, IllegalStateError, ResolvedRegularExpression
from coordinator.groups.consumer.member import LEAVE_GROUP_MEMBER_EPOCH, ConsumerGroupMember, from_topic_partitions


def _group(
    groups: MutableMapping[str, Any], group_id: str, create: bool, classic: ClassicBridge
) -> ConsumerGroup | None:
    """Kafka getOrMaybeCreatePersistedConsumerGroup (None where Kafka throws GroupIdNotFound)."""
    group = groups.get(group_id)
    if isinstance(group, ConsumerGroup):
        return group
    if group is None and not create:
        return None
    if group is None or classic.replaceable_on_replay(group):
        new = ConsumerGroup(group_id)
        groups[group_id] = new
        return new
    raise IllegalStateError(f"Group {group_id} is not a consumer group")


def replay_consumer_record(groups: MutableMapping[str, Any], record: Any, classic: ClassicBridge = NO_CLASSIC) -> None:
    """Apply `record` (any class of records.py) to `groups`."""
    tombstone = isinstance(record, r.TOMBSTONES)
    group = _group(groups, record.group_id, not tombstone, classic)
    if group is None:
        return
    if isinstance(record, r.ConsumerGroupMemberMetadataRecord):
        old = group.members.get(record.member_id) or ConsumerGroupMember(record.member_id)
        group.update_member(old.updated_with_metadata(record))
    elif isinstance(record, r.ConsumerGroupMemberMetadataTombstone):
        _remove_member(group, record.member_id)
    elif isinstance(record, r.ConsumerGroupCurrentMemberAssignmentRecord):
        old = group.members.get(record.member_id) or ConsumerGroupMember(record.member_id)
        group.update_member(old.updated_with_assignment(record))
    elif isinstance(record, r.ConsumerGroupCurrentMemberAssignmentTombstone):
        member = group.members.get(record.member_id)
        if member is not None:
            group.update_member(
                replace(
                    member,
                    member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    assigned_partitions={},
                    partitions_pending_revocation={},
                    assignment_epochs={},
                )
            )
    elif isinstance(record, r.ConsumerGroupMetadataRecord):
        group.group_epoch = record.epoch
        group.metadata_hash = record.metadata_hash
    elif isinstance(record, r.ConsumerGroupMetadataTombstone):
        _remove_group(groups, group)
    elif isinstance(record, r.ConsumerGroupPartitionMetadataRecord):
        group.has_subscription_metadata_record = True
    elif isinstance(record, r.ConsumerGroupPartitionMetadataTombstone):
        group.has_subscription_metadata_record = False
    elif isinstance(record, r.ConsumerGroupTargetAssignmentMemberRecord):
        group.update_target_assignment(record.member_id, from_topic_partitions(record.topic_partitions))
    elif isinstance(record, r.ConsumerGroupTargetAssignmentMemberTombstone):
        group.remove_target_assignment(record.member_id)
    elif isinstance(record, r.ConsumerGroupTargetAssignmentMetadataRecord):
        group.assignment_epoch = record.assignment_epoch
    elif isinstance(record, r.ConsumerGroupTargetAssignmentMetadataTombstone):
        if group.target_assignment:
            raise IllegalStateError(
                f"Received a tombstone record to delete target assignment of {group.group_id} but the "
                f"assignment still has {len(group.target_assignment)} members."
            )
        group.assignment_epoch = -1
    elif isinstance(record, r.ConsumerGroupRegularExpressionRecord):
        group.update_resolved_regex(
            record.regular_expression,
            ResolvedRegularExpression(frozenset(record.topics), record.version, record.timestamp),
        )
    elif isinstance(record, r.ConsumerGroupRegularExpressionTombstone):
        group.remove_resolved_regex(record.regular_expression)
    else:
        raise TypeError(f"not a consumer-group record: {type(record).__name__}")


def _remove_member(group: ConsumerGroup, member_id: str) -> None:
    member = group.members.get(member_id)
    if member is None:
        return
    if member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
        raise IllegalStateError(
            f"Received a tombstone record to delete member {member_id} but did not "
            "receive ConsumerGroupCurrentMemberAssignmentValue tombstone."
        )
    if member_id in group.target_assignment:
        raise IllegalStateError(
            f"Received a tombstone record to delete member {member_id} but did not "
            "receive ConsumerGroupTargetAssignmentMetadataValue tombstone."
        )
    group.remove_member(member_id)


def _remove_group(groups: MutableMapping[str, Any], group: ConsumerGroup) -> None:
    gid = group.group_id
    if group.members:
        raise IllegalStateError(
            f"Received a tombstone record to delete group {gid} but the group still has {len(group.members)} members."
        )
    if group.target_assignment:
        raise IllegalStateError(
            f"Received a tombstone record to delete group {gid} but the target assignment "
            f"still has {len(group.target_assignment)} members."
        )
    if group.assignment_epoch != -1:
        raise IllegalStateError(
            f"Received a tombstone record to delete group {gid} but did not receive "
            "ConsumerGroupTargetAssignmentMetadataValue tombstone."
        )
    del groups[gid]
