"""GroupService: the one place where a group whose __consumer_offsets partition is loading
(COORDINATOR_LOAD_IN_PROGRESS) or failed (COORDINATOR_NOT_AVAILABLE) is answered, for every group
request type; multi-group requests split by partition keep request order; a failed append
becomes an error answer."""

import errno

import pytest

from coordinator.groups.offset_requests import (
    FetchedGroup,
    FetchGroup,
    OffsetCommitResult,
    OffsetDeleteParams,
    OffsetDeleteResult,
    OffsetFetchParams,
)
from coordinator.groups.placement import partition_for
from coordinator.groups.record_types import OffsetCommitRecord
from coordinator.groups.requests import (
    DeletedGroup,
    DeleteGroupsParams,
    HeartbeatParams,
    HeartbeatResult,
    JoinGroupParams,
    JoinGroupResult,
    LeaveGroupParams,
    LeaveGroupResult,
    ListGroupsParams,
    SyncGroupParams,
    SyncGroupResult,
)
from protocol.errors import ErrorCode
from storage import fsutil
from tests.support.runtime import GroupHarness

from .offset_helpers import commit

JOIN = JoinGroupParams("g", "m1", 10_000, "consumer", [("range", b"")])
A, B, C = "a", "b", "c"
assert len({partition_for(A), partition_for(B), partition_for(C)}) == 3


async def harness(tmp_path, loading=(), failed=()) -> GroupHarness:
    """Partitions of the `loading` groups have a log and are not loaded yet; those of the
    `failed` groups are failed (nothing reloads them: the runtime's tasks are not running)."""
    if loading:
        writer = GroupHarness(tmp_path).writer
        for group_id in loading:
            writer.append(partition_for(group_id), [OffsetCommitRecord(group_id, "t", 0, 1, -1, "", 0, None)])
        writer.close()
    h = GroupHarness(tmp_path)
    for group_id in failed:
        h.runtime.fail(partition_for(group_id), "test")
    return h


@pytest.mark.parametrize(
    "state,error",
    [("loading", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS), ("failed", ErrorCode.COORDINATOR_NOT_AVAILABLE)],
)
@pytest.mark.parametrize(
    "method,request_,answer",
    [
        ("join_group", JOIN, lambda e: JoinGroupResult(e, "m1")),
        ("sync_group", SyncGroupParams("g", 1, "m1"), lambda e: SyncGroupResult(e)),
        ("heartbeat", HeartbeatParams("g", 1, "m1"), lambda e: HeartbeatResult(e)),
        ("leave_group", LeaveGroupParams.single("g", "m1"), lambda e: LeaveGroupResult(e)),
        ("commit_offsets", commit(offsets={0: 1, 1: 2}), lambda e: OffsetCommitResult(e, [("t", [(0, e), (1, e)])])),
        ("delete_offsets", OffsetDeleteParams("g", [("t", [0])]), lambda e: OffsetDeleteResult(e)),
    ],
)
async def test_single_group_requests(tmp_path, state, error, method, request_, answer):
    h = await harness(tmp_path, **{state: ["g"]})
    before = len(h.writer.records)
    assert await getattr(h.service, method)(request_) == answer(error)
    assert len(h.writer.records) == before


async def test_multi_group_requests_keep_request_order(tmp_path):
    h = await harness(tmp_path, loading=[A], failed=[B])
    assert await h.service.delete_groups(DeleteGroupsParams([A, C, B])) == [
        DeletedGroup(A, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        DeletedGroup(C, ErrorCode.GROUP_ID_NOT_FOUND),
        DeletedGroup(B, ErrorCode.COORDINATOR_NOT_AVAILABLE),
    ]
    assert await h.service.fetch_offsets(OffsetFetchParams([FetchGroup(B, None), FetchGroup(C, None)])) == [
        FetchedGroup(B, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        FetchedGroup(C, ErrorCode.NONE),
    ]
    assert await h.service.list_groups(ListGroupsParams()) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [])
    assert await GroupHarness(tmp_path / "other").service.list_groups(ListGroupsParams()) == (ErrorCode.NONE, [])


async def test_a_failed_append_is_answered_coordinator_not_available(tmp_path, monkeypatch):
    h = GroupHarness(tmp_path)

    def enospc(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsutil, "write_all", enospc)
    assert await h.service.commit_offsets(commit(offsets={0: 1})) == OffsetCommitResult(
        ErrorCode.COORDINATOR_NOT_AVAILABLE, [("t", [(0, ErrorCode.COORDINATOR_NOT_AVAILABLE)])]
    )


@pytest.mark.parametrize(
    "method,request_,answer",
    [
        (
            "join_group",
            JoinGroupParams("", "m1", 10_000, "consumer", [("range", b"")]),
            JoinGroupResult(ErrorCode.INVALID_GROUP_ID, "m1"),
        ),
        ("sync_group", SyncGroupParams("", 1, "m1"), SyncGroupResult(ErrorCode.INVALID_GROUP_ID)),
        ("heartbeat", HeartbeatParams("", 1, "m1"), HeartbeatResult(ErrorCode.INVALID_GROUP_ID)),
        ("leave_group", LeaveGroupParams.single("", "m1"), LeaveGroupResult(ErrorCode.INVALID_GROUP_ID)),
        ("delete_offsets", OffsetDeleteParams("", [("t", [0])]), OffsetDeleteResult(ErrorCode.INVALID_GROUP_ID)),
    ],
)
async def test_empty_group_id_is_invalid_before_the_partition_is_looked_at(tmp_path, method, request_, answer):
    """GroupCoordinatorService.isGroupIdNotEmpty comes first: even while the partition of ""
    loads, the answer is INVALID_GROUP_ID (OffsetCommit and OffsetFetch accept "")."""
    h = await harness(tmp_path, loading=[""])
    assert await getattr(h.service, method)(request_) == answer
    commit_empty = await h.service.commit_offsets(commit(group_id=""))
    assert commit_empty.error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS  # served like any group


async def test_forced_expiry_and_rebalance(tmp_path, autojump_clock):
    """The control plane's "expire member now" and "rebalance now" run through the op path."""
    import trio

    h = GroupHarness(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(h.runtime.run)
        first = await h.service.join_group(JOIN_NEW)
        joined = await h.service.join_group(JoinGroupParams("g", first.member_id, 10_000, "consumer", [("range", b"")]))
        await h.service.sync_group(SyncGroupParams("g", 1, joined.member_id, assignments=[(joined.member_id, b"A")]))
        assert str(h.group().state) == "Stable"
        assert await h.service.rebalance("g") == ErrorCode.NONE
        assert str(h.group().state) == "PreparingRebalance"
        assert await h.service.expire_member("g", "nobody") == ErrorCode.UNKNOWN_MEMBER_ID
        assert await h.service.expire_member("g", joined.member_id) == ErrorCode.NONE
        assert str(h.group().state) == "Empty" and h.writer.records[-1].members == ()
        nursery.cancel_scope.cancel()


JOIN_NEW = JoinGroupParams("g", "", 10_000, "consumer", [("range", b"")], request_version=9)
