"""What the other group APIs ask of a consumer group (Kafka 4.2 GroupMetadataManager and
ConsumerGroup): ConsumerGroupDescribe (API 69), ListGroups and DescribeGroups entries,
DeleteGroups (NON_EMPTY_GROUP, the group's tombstones in Kafka's
order), OffsetDelete (GROUP_SUBSCRIBED_TO_TOPIC), and the records deleting an empty consumer
group that a classic JoinGroup replaces (the offset checks are in commit_validation.py). Pure
reads: nothing here emits.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.groups.consumer.context import TopicsView
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import GROUP_TYPE, PROTOCOL_TYPE, ConsumerGroup, ConsumerGroupState
from coordinator.groups.consumer.member import Assignment, ConsumerGroupMember
from coordinator.groups.consumer.records import (
    ConsumerGroupCurrentMemberAssignmentTombstone,
    ConsumerGroupMemberMetadataTombstone,
    ConsumerGroupMetadataTombstone,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupRegularExpressionTombstone,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataTombstone,
)
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from protocol.errors import ErrorCode

MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1


@dataclass(frozen=True)
class DescribedTopicPartitions:
    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: tuple[DescribedTopicPartitions, ...]
    target_assignment: tuple[DescribedTopicPartitions, ...]
    member_type: int  # ConsumerGroupDescribe v1+: 0 classic, 1 consumer


@dataclass(frozen=True)
class DescribedConsumerGroup:
    group_id: str
    error_code: int = 0
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedConsumerMember, ...] = ()


@dataclass(frozen=True)
class ListedConsumerGroup:
    group_id: str
    protocol_type: str
    group_state: str
    group_type: str


def _partitions(assignment: Assignment, topics: TopicsView) -> tuple[DescribedTopicPartitions, ...]:
    """Topics that no longer exist are left out, as Kafka does."""
    out = []
    for topic_id, parts in assignment.items():
        topic = topics.by_id(topic_id)
        if topic is not None:
            out.append(DescribedTopicPartitions(topic_id, topic.name, tuple(sorted(parts))))
    return tuple(sorted(out, key=lambda d: d.topic_name))


def _member(member: ConsumerGroupMember, target: Assignment, topics: TopicsView) -> DescribedConsumerMember:
    return DescribedConsumerMember(
        member_id=member.member_id,
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        member_epoch=member.member_epoch,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=tuple(sorted(member.subscribed_topic_names)),
        subscribed_topic_regex=member.subscribed_topic_regex,
        assignment=_partitions(member.assigned_partitions, topics),
        target_assignment=_partitions(target, topics),
        member_type=MEMBER_TYPE_CLASSIC if member.use_classic_protocol else MEMBER_TYPE_CONSUMER,
    )


def describe_consumer_groups(
    groups: Mapping[str, Any], topics: TopicsView, settings: ConsumerGroupSettings, group_ids: Iterable[str]
) -> list[DescribedConsumerGroup]:
    """Kafka consumerGroupDescribe: one entry per id, GROUP_ID_NOT_FOUND for missing or
    non-consumer groups. The assignor named is the most used one, else the default."""
    out = []
    for gid in group_ids:
        group = groups.get(gid)
        if not isinstance(group, ConsumerGroup):
            message = f"Group {gid} not found." if group is None else f"Group {gid} is not a consumer group."
            out.append(DescribedConsumerGroup(gid, ErrorCode.GROUP_ID_NOT_FOUND, message))
            continue
        out.append(
            DescribedConsumerGroup(
                group_id=gid,
                group_state=str(group.state),
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                assignor_name=group.preferred_server_assignor(settings.assignors) or settings.default_assignor,
                members=tuple(
                    _member(m, group.target_assignment.get(mid, {}), topics) for mid, m in group.members.items()
                ),
            )
        )
    return out


def listed_group(group: ConsumerGroup) -> ListedConsumerGroup:
    """Kafka ModernGroup.asListedGroup."""
    return ListedConsumerGroup(group.group_id, PROTOCOL_TYPE, str(group.state), GROUP_TYPE)


def in_states(group: ConsumerGroup, states_lower: Iterable[str]) -> bool:
    """ListGroups StatesFilter (compared lower-case, as Kafka's isInStates)."""
    return str(group.state).lower() in set(states_lower)


def describe_groups_entry(group_id: str, request_version: int) -> tuple[int, str | None, str]:
    """DescribeGroups (the classic API) on a consumer group, as Kafka 4.2 answers it: the group
    is not a classic group, so it is described as Dead, with GROUP_ID_NOT_FOUND from v6 on.
    Returns (error code, error message, state)."""
    if request_version >= 6:
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a classic group.", str(ConsumerGroupState.DEAD)
    return ErrorCode.NONE, None, str(ConsumerGroupState.DEAD)


def validate_delete_group(group: ConsumerGroup) -> None:
    if group.state != ConsumerGroupState.EMPTY:
        raise ConsumerGroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")


def is_subscribed_to_topic(group: ConsumerGroup, topic: str) -> bool:
    """OffsetDelete answers GROUP_SUBSCRIBED_TO_TOPIC for these topics."""
    return group.is_subscribed_to_topic(topic)


def group_tombstones(group: ConsumerGroup) -> list[Any]:
    """Kafka ConsumerGroup.createGroupTombstoneRecords, in its order (replay accepts no other)."""
    gid = group.group_id
    out: list[Any] = [ConsumerGroupCurrentMemberAssignmentTombstone(gid, m) for m in group.members]
    out += [ConsumerGroupTargetAssignmentMemberTombstone(gid, m) for m in group.members]
    out.append(ConsumerGroupTargetAssignmentMetadataTombstone(gid))
    out += [ConsumerGroupMemberMetadataTombstone(gid, m) for m in group.members]
    out += [ConsumerGroupRegularExpressionTombstone(gid, regex) for regex in group.resolved_regexes]
    out.append(ConsumerGroupPartitionMetadataTombstone(gid))
    out.append(ConsumerGroupMetadataTombstone(gid))
    return out


def empty_group_tombstones(group: Any) -> list[Any] | None:
    """Kafka maybeDeleteEmptyConsumerGroup: a classic JoinGroup to an Empty consumer group deletes
    it (these records) and creates a classic group; None when `group` is not an empty consumer
    group. Always allowed, whatever group.consumer.migration.policy says."""
    if isinstance(group, ConsumerGroup) and group.is_empty():
        return group_tombstones(group)
    return None
