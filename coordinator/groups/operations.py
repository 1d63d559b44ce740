"""The table from request dataclass to the operation that serves it (used by `execute`)."""

from __future__ import annotations

from typing import Any, Callable

from .describe import delete_groups, describe_groups, list_groups
from .heartbeat import heartbeat
from .join import join_group
from .leave import leave_group
from .messages import (
    DeleteGroupsParams,
    DescribeGroupsParams,
    HeartbeatParams,
    JoinGroupParams,
    LeaveGroupParams,
    ListGroupsParams,
    SyncGroupParams,
)
from .offset_messages import OffsetCommitParams, OffsetDeleteParams, OffsetFetchParams
from .offsets import commit_offsets, delete_offsets, fetch_offsets
from .sync import sync_group

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
