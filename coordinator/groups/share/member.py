"""A share-group member (Kafka ShareGroupMember) and its reconciliation (ShareGroupAssignmentBuilder).

Members are immutable values: a change builds a new member with `dataclasses.replace`, and only
replay puts one into a group. Defaults are Kafka's ShareGroupMember.Builder defaults (epoch 0,
previous epoch -1, STABLE). A share member owns nothing exclusively (partitions are shared), so
reconciliation has no revocation step: on a new target epoch the member jumps to its target,
keeping only partitions of topics it still subscribes to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.member import Assignment, MemberState, from_topic_partitions, to_topic_partitions
from coordinator.groups.share.records import ShareGroupCurrentMemberAssignmentRecord, ShareGroupMemberMetadataRecord

LEAVE_GROUP_MEMBER_EPOCH = -1  # ShareGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH


@dataclass(frozen=True, slots=True)
class ShareGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    assigned_partitions: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """Kafka ModernGroupMember.isReconciledTo."""
        return self.state == MemberState.STABLE and self.member_epoch == target_assignment_epoch

    # -- records (GroupCoordinatorRecordHelpers) -------------------------------------------

    def metadata_record(self, group_id: str) -> ShareGroupMemberMetadataRecord:
        return ShareGroupMemberMetadataRecord(
            group_id=group_id,
            member_id=self.member_id,
            rack_id=self.rack_id,
            client_id=self.client_id,
            client_host=self.client_host,
            subscribed_topic_names=tuple(sorted(self.subscribed_topic_names)),
        )

    def assignment_record(self, group_id: str) -> ShareGroupCurrentMemberAssignmentRecord:
        return ShareGroupCurrentMemberAssignmentRecord(
            group_id=group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            previous_member_epoch=self.previous_member_epoch,
            state=int(self.state),
            assigned_partitions=to_topic_partitions(self.assigned_partitions),
        )

    def updated_with_metadata(self, rec: ShareGroupMemberMetadataRecord) -> ShareGroupMember:
        """Kafka Builder.updateWith(ShareGroupMemberMetadataValue)."""
        return replace(
            self,
            rack_id=rec.rack_id,
            client_id=rec.client_id,
            client_host=rec.client_host,
            subscribed_topic_names=frozenset(rec.subscribed_topic_names),
        )

    def updated_with_assignment(self, rec: ShareGroupCurrentMemberAssignmentRecord) -> ShareGroupMember:
        """Kafka Builder.updateWith(ShareGroupCurrentMemberAssignmentValue)."""
        return replace(
            self,
            member_epoch=rec.member_epoch,
            previous_member_epoch=rec.previous_member_epoch,
            state=MemberState.from_value(rec.state),
            assigned_partitions=from_topic_partitions(rec.assigned_partitions),
        )


def reconcile(
    member: ShareGroupMember, target_epoch: int, target: Assignment, has_subscription_changed: bool, topics: TopicsView
) -> ShareGroupMember:
    """Kafka ShareGroupAssignmentBuilder.build: a new target epoch moves the member to it (STABLE,
    its target assignment, the epoch bump remembered as the previous epoch); a subscription
    change re-filters the assignment at the same epoch; otherwise the member is unchanged."""
    if target_epoch != member.member_epoch:
        return replace(
            member,
            state=MemberState.STABLE,
            assigned_partitions=_subscribed_only(target, member, topics),
            member_epoch=target_epoch,
            previous_member_epoch=member.member_epoch,
        )
    if has_subscription_changed:
        return replace(member, assigned_partitions=_subscribed_only(target, member, topics))
    return member


def _subscribed_only(partitions: Assignment, member: ShareGroupMember, topics: TopicsView) -> Mapping:
    """Kafka filterAssignedPartitions: drop topics the member no longer subscribes to (the same
    mapping when nothing is dropped)."""
    subscribed = {t.topic_id for t in map(topics.by_name, member.subscribed_topic_names) if t is not None}
    if all(topic_id in subscribed for topic_id in partitions):
        return partitions
    return {topic_id: parts for topic_id, parts in partitions.items() if topic_id in subscribed}
