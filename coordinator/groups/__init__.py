"""Classic consumer groups: Kafka's group state machine, in memory, driven by one writer.

Public API (what handlers call). Build a request dataclass from the decoded protocol message,
submit it to the runtime, turn the result into the response of your version:

    from coordinator.groups import GroupCoordinator, GroupConfig, JoinGroupParams
    from coordinator.runtime import Runtime, InMemoryWriter
    runtime = Runtime(GroupCoordinator(GroupConfig()), clock, writer)   # run runtime.run() in a nursery
    result = await runtime.submit(JoinGroupParams(...))                 # -> JoinGroupResult

Operations (request -> result; `coordinator.groups.coordinator.execute` dispatches them):
    JoinGroupParams      -> JoinGroupResult         (join.py; may park until the join phase ends)
    SyncGroupParams      -> SyncGroupResult         (sync.py; followers park until the leader syncs)
    HeartbeatParams      -> HeartbeatResult         (heartbeat.py)
    LeaveGroupParams     -> LeaveGroupResult        (leave.py; `.single()` / `.legacy_error()` for v0-2)
    DescribeGroupsParams -> list[DescribedGroup]    (describe.py)
    ListGroupsParams     -> list[ListedGroup]       (describe.py)
    DeleteGroupsParams   -> list[DeletedGroup]      (describe.py)
Errors are `Error` (IntEnum of Kafka's codes). Records produced are `GroupMetadataRecord` and
`GroupTombstone` (changes.py); `records.py` encodes them. `GroupCoordinator` holds all groups,
their timers and `GroupConfig`. `testing.GroupTestContext` drives everything with a FakeClock.
Handler-side duties: JoinGroup v<7 encodes protocol_name None as ""; LeaveGroup v0-2 uses
`legacy_error()`; DescribeGroups passes request_version (unknown group: NONE <v6, 69 >=v6).
"""

from .changes import GroupMetadataRecord, GroupRecord, GroupTombstone, MemberSnapshot
from .config import GroupConfig
from .context import OpContext, ParkedReply
from .coordinator import GroupCoordinator, execute
from .errors import Error
from .group import ClassicGroup
from .member import ClassicMember
from .messages import (
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
from .state import GroupState, IllegalStateTransition

__all__ = [
    "ClassicGroup", "ClassicMember", "DeletedGroup", "DeleteGroupsParams", "DescribedGroup",
    "DescribedMember", "DescribeGroupsParams", "Error", "GroupConfig", "GroupCoordinator",
    "GroupMetadataRecord", "GroupRecord", "GroupState", "GroupTombstone", "HeartbeatParams",
    "HeartbeatResult", "IllegalStateTransition", "JoinGroupParams", "JoinGroupResult",
    "LeaveGroupParams", "LeaveGroupResult", "LeavingMember", "LeftMember", "ListedGroup",
    "ListGroupsParams", "MemberSnapshot", "OpContext", "ParkedReply", "SyncGroupParams",
    "SyncGroupResult", "UNKNOWN_MEMBER_ID", "execute",
]
