"""Replay: apply one share-group record to the groups (Kafka GroupMetadataManager.replay).

The only code that changes a ShareGroup; used live (ctx.emit) and at load. A record creates its
group when missing; a tombstone for a missing group or member is ignored; a tombstone that
contradicts the group (a member deleted before its assignment, a group deleted with members)
raises IllegalStateError, as Kafka's replay throws IllegalStateException. A group of another type
under the same id is an error too: Kafka converts nothing to or from share groups, not even a
classic "simple" group (getOrMaybeCreatePersistedShareGroup).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import replace
from typing import Any

from coordinator.groups.consumer.group import IllegalStateError
from coordinator.groups.consumer.member import from_topic_partitions
from coordinator.groups.share import records as r
from coordinator.groups.share.group import InitValue, ShareGroup, StatePartitions
from coordinator.groups.share.member import LEAVE_GROUP_MEMBER_EPOCH, ShareGroupMember


def _group(groups: MutableMapping[str, Any], group_id: str, create: bool) -> ShareGroup | None:
    group = groups.get(group_id)
    if isinstance(group, ShareGroup):
        return group
    if group is not None:
        raise IllegalStateError(f"Group {group_id} is not a share group.")
    if not create:
        return None
    new = groups[group_id] = ShareGroup(group_id)
    return new


def replay_share_record(groups: MutableMapping[str, Any], record: Any, now_ms: int) -> None:
    """Apply `record` (any class of records.py) to `groups`; `now_ms` stamps share-partition
    entries (Kafka's replay reads the clock there too)."""
    tombstone = isinstance(record, r.TOMBSTONES)
    group = _group(groups, record.group_id, not tombstone)
    if group is None:
        return
    group.replayed += 1  # invalidates the group's SteadyAnswers, whatever the record changes
    if isinstance(record, r.ShareGroupMemberMetadataRecord):
        old = group.members.get(record.member_id) or ShareGroupMember(record.member_id)
        group.update_member(old.updated_with_metadata(record))
    elif isinstance(record, r.ShareGroupMemberMetadataTombstone):
        _remove_member(group, record.member_id)
    elif isinstance(record, r.ShareGroupCurrentMemberAssignmentRecord):
        old = group.members.get(record.member_id) or ShareGroupMember(record.member_id)
        group.update_member(old.updated_with_assignment(record))
    elif isinstance(record, r.ShareGroupCurrentMemberAssignmentTombstone):
        member = group.members.get(record.member_id)
        if member is not None:
            group.update_member(
                replace(
                    member,
                    member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    assigned_partitions={},
                )
            )
    elif isinstance(record, r.ShareGroupMetadataRecord):
        group.group_epoch = record.epoch
        group.metadata_hash = record.metadata_hash
    elif isinstance(record, r.ShareGroupMetadataTombstone):
        _remove_group(groups, group)
    elif isinstance(record, r.ShareGroupTargetAssignmentMemberRecord):
        group.update_target_assignment(record.member_id, from_topic_partitions(record.topic_partitions))
    elif isinstance(record, r.ShareGroupTargetAssignmentMemberTombstone):
        group.remove_target_assignment(record.member_id)
    elif isinstance(record, r.ShareGroupTargetAssignmentMetadataRecord):
        group.assignment_epoch = record.assignment_epoch
    elif isinstance(record, r.ShareGroupTargetAssignmentMetadataTombstone):
        if group.target_assignment:
            raise IllegalStateError(
                f"Received a tombstone record to delete target assignment of {group.group_id} but the "
                f"assignment still has {len(group.target_assignment)} members."
            )
        group.assignment_epoch = -1
    elif isinstance(record, r.ShareGroupStatePartitionMetadataRecord):
        group.state_partitions = StatePartitions(
            initializing=_init_map(record.initializing_topics, now_ms),
            initialized=_init_map(record.initialized_topics, now_ms),
            deleting=frozenset(t.topic_id for t in record.deleting_topics),
        )
    elif isinstance(record, r.ShareGroupStatePartitionMetadataTombstone):
        group.state_partitions = None
    else:
        raise TypeError(f"not a share-group record: {type(record).__name__}")


def _init_map(topics: Iterable[r.TopicPartitionsInfo], now_ms: int) -> dict[Any, InitValue]:
    return {t.topic_id: InitValue(t.topic_name, frozenset(t.partitions), now_ms) for t in topics}


def _remove_member(group: ShareGroup, member_id: str) -> None:
    member = group.members.get(member_id)
    if member is None:
        return
    if member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
        raise IllegalStateError(
            f"Received a tombstone record to delete member {member_id} with invalid leave group epoch."
        )
    if member_id in group.target_assignment:
        raise IllegalStateError(
            f"Received a tombstone record to delete member {member_id} but member exists in target assignment."
        )
    group.remove_member(member_id)


def _remove_group(groups: MutableMapping[str, Any], group: ShareGroup) -> None:
    gid = group.group_id
    if group.members:
        raise IllegalStateError(
            f"Received a tombstone record to delete group {gid} but the group still has {len(group.members)} members."
        )
    if group.target_assignment:
        raise IllegalStateError(
            f"Received a tombstone record to delete group {gid} but the target assignment still has "
            f"{len(group.target_assignment)} members."
        )
    if group.assignment_epoch != -1:
        raise IllegalStateError(
            f"Received a tombstone record to delete group {gid} but target assignment epoch in invalid."
        )
    del groups[gid]
