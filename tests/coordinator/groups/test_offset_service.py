"""GroupService.submit: the one place where a group whose __consumer_offsets partition is
loading (COORDINATOR_LOAD_IN_PROGRESS) or failed (COORDINATOR_NOT_AVAILABLE) is answered, for
every group request type, and where a failed append becomes an error answer."""
from protocol.errors import ErrorCode

import pytest

from coordinator.runtime.clock import TrioClock
from coordinator.runtime.group_service import GroupService
from coordinator.groups import (
    DeletedGroup, DeleteGroupsParams, GroupCoordinator, HeartbeatParams, HeartbeatResult,
    JoinGroupParams, JoinGroupResult, LeaveGroupParams, LeaveGroupResult, ListGroupsParams,
    SyncGroupParams, SyncGroupResult,
)
from coordinator.groups.offset_requests import (
    FetchedGroup, FetchGroup, OffsetCommitResult, OffsetDeleteParams, OffsetDeleteResult,
    OffsetFetchParams,
)
from coordinator.runtime.partition_writer import CoordinatorUnavailableError, PartitionState
from coordinator.runtime.single_writer import InMemoryWriter, Runtime

from .offset_helpers import commit


class StatesWriter(InMemoryWriter):
    """An in-memory writer with per-group partition states, as OffsetsLog reports them."""

    num_partitions = 1

    def __init__(self, states: dict[str, PartitionState], fail_appends: bool = False) -> None:
        super().__init__()
        self.states = states
        self.fail_appends = fail_appends

    def is_loaded(self, group_id: str) -> bool:
        return self.states.get(group_id) is not PartitionState.LOADING

    def is_available(self, group_id: str) -> bool:
        return self.states.get(group_id, PartitionState.ACTIVE) is PartitionState.ACTIVE

    def state(self, partition: int) -> PartitionState:
        return next(iter(self.states.values()), PartitionState.ACTIVE)

    def append(self, records):
        if self.fail_appends and records:
            raise CoordinatorUnavailableError(0, PartitionState.FAILED, "test")
        return super().append(records)


def service(states, fail_appends=False) -> GroupService:
    writer = StatesWriter(states, fail_appends)
    return GroupService(Runtime(GroupCoordinator(), TrioClock(epoch_ms=0), writer), writer, None)


LOADING, FAILED = PartitionState.LOADING, PartitionState.FAILED
JOIN = JoinGroupParams("g", "m1", 10_000, "consumer", [("range", b"")])


@pytest.mark.parametrize("state,error", [(LOADING, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
                                         (FAILED, ErrorCode.COORDINATOR_NOT_AVAILABLE)])
@pytest.mark.parametrize("request_,answer", [
    (JOIN, lambda e: JoinGroupResult(e, "m1")),
    (SyncGroupParams("g", 1, "m1"), lambda e: SyncGroupResult(e)),
    (HeartbeatParams("g", 1, "m1"), lambda e: HeartbeatResult(e)),
    (LeaveGroupParams.single("g", "m1"), lambda e: LeaveGroupResult(e)),
    (commit(offsets={0: 1, 1: 2}), lambda e: OffsetCommitResult(e, [("t", [(0, e), (1, e)])])),
    (OffsetDeleteParams("g", [("t", [0])]), lambda e: OffsetDeleteResult(e)),
])
async def test_single_group_requests(state, error, request_, answer):
    svc = service({"g": state})
    assert await svc.submit(request_) == answer(error)
    assert svc.writer.records == []


async def test_multi_group_requests_keep_request_order():
    svc = service({"a": LOADING, "b": FAILED})
    assert await svc.submit(DeleteGroupsParams(["a", "c", "b"])) == [
        DeletedGroup("a", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        DeletedGroup("c", ErrorCode.GROUP_ID_NOT_FOUND),
        DeletedGroup("b", ErrorCode.COORDINATOR_NOT_AVAILABLE)]
    assert await svc.submit(OffsetFetchParams([FetchGroup("b", None), FetchGroup("c", None)])) == [
        FetchedGroup("b", ErrorCode.COORDINATOR_NOT_AVAILABLE), FetchedGroup("c", ErrorCode.NONE)]
    assert svc.list_error() == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert service({}).list_error() is None
    assert await service({}).submit(ListGroupsParams()) == []


async def test_a_failed_append_is_answered_coordinator_not_available():
    svc = service({}, fail_appends=True)
    assert await svc.submit(commit(offsets={0: 1})) == OffsetCommitResult(
        ErrorCode.COORDINATOR_NOT_AVAILABLE, [("t", [(0, ErrorCode.COORDINATOR_NOT_AVAILABLE)])])
