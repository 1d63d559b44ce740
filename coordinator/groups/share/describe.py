"""What the other group APIs ask of a share group (Kafka 4.2 ShareGroup / ShareGroupMember and
GroupMetadataManager): ShareGroupDescribe (API 77), ListGroups and DescribeGroups entries, the
DeleteGroups check (NON_EMPTY_GROUP) and the group's tombstones in Kafka's order. Pure reads:
nothing here emits.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.member import Assignment
from coordinator.groups.share.group import ASSIGNOR_NAME, GROUP_TYPE, PROTOCOL_TYPE, ShareGroup, ShareGroupState
from coordinator.groups.share.member import ShareGroupMember
from coordinator.groups.share.records import (
    ShareGroupCurrentMemberAssignmentTombstone,
    ShareGroupMemberMetadataTombstone,
    ShareGroupMetadataTombstone,
    ShareGroupStatePartitionMetadataTombstone,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupTargetAssignmentMetadataTombstone,
)
from protocol.errors import ErrorCode


@dataclass(frozen=True)
class DescribedShareTopic:
    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedShareMember:
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    assignment: tuple[DescribedShareTopic, ...]


@dataclass(frozen=True)
class DescribedShareGroup:
    group_id: str
    error_code: int = 0
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedShareMember, ...] = ()


def described_topics(assignment: Assignment, topics: TopicsView) -> tuple[DescribedShareTopic, ...]:
    """Kafka topicPartitionsFromMap: topics that no longer exist are left out."""
    out = []
    for topic_id, parts in assignment.items():
        meta = topics.by_id(topic_id)
        if meta is not None:
            out.append(DescribedShareTopic(topic_id, meta.name, tuple(sorted(parts))))
    return tuple(sorted(out, key=lambda d: d.topic_name))


def _member(m: ShareGroupMember, topics: TopicsView) -> DescribedShareMember:
    """Kafka ShareGroupMember.asShareGroupDescribeMember."""
    return DescribedShareMember(
        member_id=m.member_id,
        rack_id=m.rack_id,
        member_epoch=m.member_epoch,
        client_id=m.client_id,
        client_host=m.client_host,
        subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
        assignment=described_topics(m.assigned_partitions, topics),
    )


def describe_share_groups(
    groups: Mapping[str, Any], topics: TopicsView, group_ids: Iterable[str]
) -> list[DescribedShareGroup]:
    """Kafka shareGroupDescribe: GROUP_ID_NOT_FOUND for missing groups and groups of another type."""
    out = []
    for gid in group_ids:
        group = groups.get(gid)
        if not isinstance(group, ShareGroup):
            message = f"Group {gid} not found." if group is None else f"Group {gid} is not a share group."
            out.append(DescribedShareGroup(gid, ErrorCode.GROUP_ID_NOT_FOUND, message))
            continue
        out.append(
            DescribedShareGroup(
                group_id=gid,
                group_state=str(group.state),
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                assignor_name=ASSIGNOR_NAME,
                members=tuple(_member(m, topics) for m in group.members.values()),
            )
        )
    return out


def listed(group: ShareGroup) -> tuple[str, str, str, str]:
    """Kafka ModernGroup.asListedGroup: (group id, protocol type, state, group type)."""
    return group.group_id, PROTOCOL_TYPE, str(group.state), GROUP_TYPE


def describe_groups_entry(group_id: str, request_version: int) -> tuple[int, str | None, str]:
    """DescribeGroups (the classic API) on a share group, as Kafka 4.2 answers it (classicGroup
    throws GroupIdNotFoundException): Dead, with GROUP_ID_NOT_FOUND from v6 on."""
    if request_version >= 6:
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a classic group.", str(ShareGroupState.DEAD)
    return ErrorCode.NONE, None, str(ShareGroupState.DEAD)


def group_tombstones(group: ShareGroup) -> list[Any]:
    """Kafka ShareGroup.createGroupTombstoneRecords, in its order (replay accepts no other)."""
    gid = group.group_id
    out: list[Any] = [ShareGroupCurrentMemberAssignmentTombstone(gid, m) for m in group.members]
    out += [ShareGroupTargetAssignmentMemberTombstone(gid, m) for m in group.members]
    out.append(ShareGroupTargetAssignmentMetadataTombstone(gid))
    out += [ShareGroupMemberMetadataTombstone(gid, m) for m in group.members]
    out.append(ShareGroupStatePartitionMetadataTombstone(gid))
    out.append(ShareGroupMetadataTombstone(gid))
    return out
