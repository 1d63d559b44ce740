"""A KIP-932 share group as the control plane shows it (GroupView, type "share").

Members carry their subscribed topics, their member epoch and their current assignment (topics by
name when the broker still has them, else by Kafka's topic-id text); a share member has no
rebalance timeout, and its session timeout is the group's share.session.timeout.ms, which the
plane does not hold here (-1).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from coordinator.control.plane_api import GroupView, MemberView, TopicPartitions
from coordinator.groups.consumer.record_json import kafka_uuid
from coordinator.groups.share.group import ASSIGNOR_NAME, PROTOCOL_TYPE, ShareGroup


def share_group_view(group: ShareGroup, coordinator: int, topic_name: Callable[[uuid.UUID], str | None]) -> GroupView:
    members = [
        MemberView(
            m.member_id,
            None,
            m.client_id,
            m.client_host,
            -1,
            -1,
            sorted(m.subscribed_topic_names),
            sorted(
                (TopicPartitions(topic_name(t) or kafka_uuid(t), sorted(p)) for t, p in m.assigned_partitions.items()),
                key=lambda tp: tp.topic,
            ),
            m.member_epoch,
        )
        for m in group.members.values()
    ]
    return GroupView(
        group.group_id,
        "share",
        str(group.state),
        group.group_epoch,
        coordinator,
        PROTOCOL_TYPE,
        ASSIGNOR_NAME,
        None,
        members,
    )
