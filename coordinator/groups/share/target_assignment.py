"""A new target assignment for a share group's epoch (Kafka TargetAssignmentBuilder
.ShareTargetAssignmentBuilder with the share SimpleAssignor, GroupMetadataManager.updateTargetAssignment).

The assignor sees every member (the heartbeating one as it will be after this operation), each
member's current target, the topics, and only the partitions whose share state is initialized
(nothing else may be handed out). The records are one ShareGroupTargetAssignmentMember per
member whose target changed (or who had none), then the ShareGroupTargetAssignmentMetadata with
the new epoch. Members go to the assignor in the group's member order, a new member last.
"""

from __future__ import annotations

from typing import Any

from coordinator.groups.assignors.simple import SimpleAssignor
from coordinator.groups.assignors.spec import AssignorError, GroupSpec, MemberSubscription, SubscriptionType
from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.member import EMPTY_ASSIGNMENT, Assignment, normalize, to_topic_partitions
from coordinator.groups.consumer.target_assignment import TopicsDescriber
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.share.member import ShareGroupMember
from coordinator.groups.share.records import (
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupTargetAssignmentMetadataRecord,
)
from coordinator.groups.share.state_partitions import assignable_partitions
from protocol.errors import ErrorCode

ASSIGNOR = SimpleAssignor()


def _subscription(member: ShareGroupMember, topics: TopicsView) -> MemberSubscription:
    ids = frozenset(t.topic_id for t in map(topics.by_name, member.subscribed_topic_names) if t is not None)
    return MemberSubscription(rack_id=member.rack_id, instance_id=None, subscribed_topic_ids=ids)


def update_target_assignment(
    group: ShareGroup,
    group_epoch: int,
    updated: ShareGroupMember,
    subscription_type: SubscriptionType,
    topics: TopicsView,
    records: list[Any],
) -> Assignment:
    """Kafka updateTargetAssignment for share groups: appends the records, returns the updated
    member's new target. An assignor failure is UNKNOWN_SERVER_ERROR, as in Kafka."""
    members = {m: _subscription(member, topics) for m, member in group.members.items() if m != updated.member_id}
    members[updated.member_id] = _subscription(updated, topics)
    if updated.member_id in group.members:  # keep the group's member order
        members = {m: members[m] for m in group.members}
    current = {m: group.target_assignment.get(m, EMPTY_ASSIGNMENT) for m in members}
    spec = GroupSpec(members, subscription_type, current, assignable_partitions(group))
    try:
        new = ASSIGNOR.assign(spec, TopicsDescriber(topics))
    except AssignorError as exc:
        raise ConsumerGroupError(
            ErrorCode.UNKNOWN_SERVER_ERROR, f"Failed to compute a new target assignment for epoch {group_epoch}: {exc}"
        ) from None
    target: dict[str, Assignment] = {}
    for member_id in members:
        assignment = normalize(new.get(member_id, {}))
        target[member_id] = assignment
        old = group.target_assignment.get(member_id)
        if old is None or normalize(old) != assignment:
            records.append(
                ShareGroupTargetAssignmentMemberRecord(group.group_id, member_id, to_topic_partitions(assignment))
            )
    records.append(ShareGroupTargetAssignmentMetadataRecord(group.group_id, group_epoch))
    return target[updated.member_id]
