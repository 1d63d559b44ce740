"""Offsets through the real runtime under trio's MockClock: a commit's answer waits for
durability, and retention fires from the runtime's timer loop and writes its tombstones."""
from protocol.errors import ErrorCode

import trio

from coordinator.runtime.clock import TrioClock
from coordinator.groups import GroupConfig, GroupCoordinator, GroupTombstone
from coordinator.groups.offset_requests import OffsetCommitResult
from coordinator.groups.records import OffsetCommitRecord, OffsetTombstone
from coordinator.groups.retention import retention_key, schedule_offset_expiration
from coordinator.runtime.partition_writer import CoordinatorUnavailableError, PartitionState
from coordinator.runtime.single_writer import InMemoryWriter, Runtime

from .offset_helpers import commit


def make_runtime() -> tuple[Runtime, InMemoryWriter]:
    groups = GroupCoordinator(GroupConfig(offsets_retention_ms=60_000,
                                          offsets_retention_check_interval_ms=10_000))
    writer = InMemoryWriter()
    return Runtime(groups, TrioClock(epoch_ms=0), writer), writer


async def test_commit_answers_only_once_durable(autojump_clock):
    runtime, writer = make_runtime()
    writer.hold()
    answers = []

    async def committer() -> None:
        answers.append(await runtime.submit(commit(offsets={0: 7})))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(committer)
        await trio.sleep(1)
        assert answers == [] and writer.records == [OffsetCommitRecord("g", "t", 0, 7, -1, "", 0, None)]
        writer.release()
    assert answers == [OffsetCommitResult(ErrorCode.NONE, [("t", [(0, ErrorCode.NONE)])])]


async def test_retention_runs_from_the_timer_loop(autojump_clock):
    runtime, writer = make_runtime()
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        schedule_offset_expiration(runtime.groups, runtime.clock.time_ms())
        await runtime.submit(commit(offsets={0: 7}))  # t=0
        await trio.sleep(59)
        assert writer.records[1:] == []  # checks at 10..50 s found nothing expired
        await trio.sleep(2)  # the check at t=60 s
        assert writer.records[1:] == [OffsetTombstone("g", "t", 0), GroupTombstone("g")]
        nursery.cancel_scope.cancel()
    assert runtime.groups.group("g") is None


class FailingWriter(InMemoryWriter):
    """Every append fails as a failed __consumer_offsets partition does."""

    def append(self, records):
        if records:
            raise CoordinatorUnavailableError(0, PartitionState.FAILED, "test")
        return super().append(records)


async def test_a_failed_timer_append_does_not_stop_the_runtime(autojump_clock):
    groups = GroupCoordinator(GroupConfig(offsets_retention_ms=1_000,
                                          offsets_retention_check_interval_ms=1_000))
    writer = FailingWriter()
    runtime = Runtime(groups, TrioClock(epoch_ms=0), writer)
    groups.create_group("g", 0)  # Empty, no offsets: the first check deletes it (and fails)
    schedule_offset_expiration(groups, 0)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await trio.sleep(3.5)  # three checks, each append fails; the loop keeps going
        assert groups.timers.deadline(retention_key()) == 4_000
        nursery.cancel_scope.cancel()
