"""Offsets through the real runtime under trio's MockClock: a commit's answer waits for
durability, retention fires from the runtime's timer loop and writes its tombstones, and a
timer whose append fails does not stop the loop."""

import errno

import trio

from coordinator.groups.offset_requests import OffsetCommitResult
from coordinator.groups.placement import partition_for
from coordinator.groups.record_types import GroupTombstone, OffsetCommitRecord, OffsetTombstone
from coordinator.groups.retention import retention_key
from coordinator.runtime.coordinator_runtime import PartitionState
from protocol.errors import ErrorCode
from storage import fsutil
from tests.support.runtime import GroupHarness

from .offset_helpers import commit

RETENTION = dict(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=10_000)


async def test_commit_answers_only_once_durable(tmp_path, autojump_clock):
    h = GroupHarness(tmp_path, **RETENTION)
    h.writer.hold()
    answers = []

    async def committer() -> None:
        answers.append(await h.service.commit_offsets(commit(offsets={0: 7})))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(committer)
        await trio.sleep(1)
        assert answers == [] and h.writer.records == [OffsetCommitRecord("g", "t", 0, 7, -1, "", 0, None)]
        h.writer.release()
    assert answers == [OffsetCommitResult(ErrorCode.NONE, [("t", [(0, ErrorCode.NONE)])])]


async def test_retention_runs_from_the_timer_loop(tmp_path, autojump_clock):
    h = GroupHarness(tmp_path, **RETENTION)
    async with trio.open_nursery() as nursery:
        await nursery.start(h.runtime.run)
        await h.service.commit_offsets(commit(offsets={0: 7}))  # t=0
        await trio.sleep(59)
        assert h.writer.records[1:] == []  # checks at 10..50 s found nothing expired
        await trio.sleep(2)  # the check at t=60 s
        assert h.writer.records[1:] == [OffsetTombstone("g", "t", 0), GroupTombstone("g")]
        nursery.cancel_scope.cancel()
    assert h.group("g") is None


async def test_a_failed_timer_append_does_not_stop_the_runtime(tmp_path, monkeypatch, autojump_clock):
    h = GroupHarness(tmp_path, offsets_retention_ms=1_000, offsets_retention_check_interval_ms=1_000)
    p = partition_for("g")

    def enospc(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    async with trio.open_nursery() as nursery:
        await nursery.start(h.runtime.run)
        await h.service.commit_offsets(commit(offsets={0: 7}))  # t=0
        monkeypatch.setattr(fsutil, "write_all", enospc)
        await trio.sleep(1.5)  # the check at 1 s expires the offset; its append fails
        assert h.writer.records[1:] == []  # nothing was written while the disk was full...
        assert p in h.runtime.stats  # ...the partition failed and was reloaded from its log
        monkeypatch.undo()
        while h.runtime.state(p) is not PartitionState.ACTIVE:
            await trio.sleep(0.1)
        # The reloaded shard holds what the log holds, and its retention timer runs again.
        assert h.shard("g").offsets.get("g", "t", 0) is not None
        assert h.shard("g").timers.deadline(retention_key()) is not None
        await trio.sleep(2)
        assert h.shard("g").group("g") is None and h.writer.records[-1] == GroupTombstone("g")
        nursery.cancel_scope.cancel()
