"""The table from request dataclass to the operation that serves it (used by `execute`)."""

from __future__ import annotations

from typing import Any, Callable

from coordinator.groups.describe import delete_groups, describe_groups, list_groups
from coordinator.groups.heartbeat import heartbeat
from coordinator.groups.join import join_group
from coordinator.groups.leave import leave_group
from coordinator.groups.requests import (
    DeleteGroupsParams,
    DescribeGroupsParams,
    HeartbeatParams,
    JoinGroupParams,
    LeaveGroupParams,
    ListGroupsParams,
    SyncGroupParams,
)
from coordinator.groups.offset_requests import OffsetCommitParams, OffsetDeleteParams, OffsetFetchParams
from coordinator.groups.offsets import commit_offsets, delete_offsets, fetch_offsets
from coordinator.groups.sync import sync_group

OPERATIONS: dict[type, Callable[..., Any]] = {
    JoinGroupParams: join_group,
    SyncGroupParams: sync_group,
    HeartbeatParams: heartbeat,
    LeaveGroupParams: leave_group,
    DescribeGroupsParams: describe_groups,
    ListGroupsParams: list_groups,
    DeleteGroupsParams: delete_groups,
    OffsetCommitParams: commit_offsets,
    OffsetFetchParams: fetch_offsets,
    OffsetDeleteParams: delete_offsets,
}
