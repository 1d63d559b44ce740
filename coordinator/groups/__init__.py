"""Classic consumer groups: Kafka's group state machine, in memory, driven by one writer.

Handlers build a request dataclass from the decoded message, submit it, and encode the result:

    groups = GroupCoordinator(GroupConfig(...))            # all groups, their timers, settings
    runtime = Runtime(groups, clock, writer)               # coordinator/runtime.py
    nursery.start_soon(runtime.run)                        # the timer loop
    result = await runtime.submit(JoinGroupParams(...))    # final answer, after records are durable

`Runtime.submit(request) -> result` runs one operation (parked JoinGroup/SyncGroup answers are
awaited inside it). Operations (request -> result), dispatched by `execute(ctx, request)`:
    JoinGroupParams      -> JoinGroupResult       join.py (parks until the join phase ends)
    SyncGroupParams      -> SyncGroupResult       sync.py (followers park until the leader syncs)
    HeartbeatParams      -> HeartbeatResult       heartbeat.py
    LeaveGroupParams     -> LeaveGroupResult      leave.py (`.single()` / `.legacy_error()` for v0-2)
    DescribeGroupsParams -> list[DescribedGroup]  describe.py
    ListGroupsParams     -> list[ListedGroup]     describe.py
    DeleteGroupsParams   -> list[DeletedGroup]    describe.py (offset tombstones, then the group's)
    OffsetCommitParams   -> OffsetCommitResult    offsets.py (dataclasses in offset_messages.py)
    OffsetFetchParams    -> list[FetchedGroup]    offsets.py
    OffsetDeleteParams   -> OffsetDeleteResult    offsets.py
Offset retention is a timer (retention.py, `schedule_offset_expiration`); committed offsets live
in `GroupCoordinator.offsets` (offset_store.py).
Errors are `ErrorCode` (IntEnum, Kafka's numbers). Records: `GroupMetadataRecord`, `GroupTombstone`
(changes.py; records.py encodes them). Handler duties: JoinGroup v<7 writes protocol_name None as
""; LeaveGroup v0-2 answers `legacy_error()`; DescribeGroups passes request_version (unknown
group: NONE before v6, GROUP_ID_NOT_FOUND from v6); INVALID_GROUP_ID etc. come from the core.
Unit tests: `testing.GroupTestContext` (FakeClock, `send`, `sleep`, `records`, `timers`).
"""
from protocol.errors import ErrorCode

from coordinator.groups.record_types import GroupMetadataRecord, GroupRecord, GroupTombstone, MemberSnapshot
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.operation import OpContext, ParkedReply
from coordinator.groups.shard import GroupCoordinator, execute
from coordinator.groups.group import ClassicGroup
from coordinator.groups.member import ClassicMember
from coordinator.groups.requests import (
    UNKNOWN_MEMBER_ID,
    DeletedGroup,
    DeleteGroupsParams,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsParams,
    HeartbeatParams,
    HeartbeatResult,
    JoinGroupParams,
    JoinGroupResult,
    LeaveGroupParams,
    LeaveGroupResult,
    LeavingMember,
    LeftMember,
    ListedGroup,
    ListGroupsParams,
    SyncGroupParams,
    SyncGroupResult,
)
from coordinator.groups.state import GroupState, IllegalStateTransition

__all__ = [
    "ClassicGroup", "ClassicMember", "DeletedGroup", "DeleteGroupsParams", "DescribedGroup",
    "DescribedMember", "DescribeGroupsParams", "ErrorCode", "GroupConfig", "GroupCoordinator",
    "GroupMetadataRecord", "GroupRecord", "GroupState", "GroupTombstone", "HeartbeatParams",
    "HeartbeatResult", "IllegalStateTransition", "JoinGroupParams", "JoinGroupResult",
    "LeaveGroupParams", "LeaveGroupResult", "LeavingMember", "LeftMember", "ListedGroup",
    "ListGroupsParams", "MemberSnapshot", "OpContext", "ParkedReply", "SyncGroupParams",
    "SyncGroupResult", "UNKNOWN_MEMBER_ID", "execute",
]
