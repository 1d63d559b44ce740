"""A coordinator partition moved away while it loads (cluster.processes: its log may already be
another broker process's) is not served afterwards: neither the finished load nor a failed one
(no reload) leaves a shard. Time is trio's MockClock."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from coordinator.groups.placement import partition_for
from coordinator.runtime.clock import FakeClock
from coordinator.runtime.coordinator_runtime import PartitionState
from protocol.errors import ErrorCode
from tests.coordinator.runtime.test_loading import commit, make_runtime, write_ops


async def gated_runtime(tmp_path, load_fails: bool = False):
    """A runtime over a log holding group g1's commit, g1's partition, and a load that waits for
    `gate` (then fails if `load_fails`): (runtime, partition, gate, the real load, the gated one)."""
    clock = FakeClock(0)
    await write_ops(tmp_path, clock, [[commit("g1")]])
    runtime = make_runtime(tmp_path, clock)
    gate = trio.Event()
    real_load = runtime.load

    async def slow_load(partition: int):
        await gate.wait()
        if load_fails:
            raise OSError("the log was closed under the load")
        return await real_load(partition)

    return runtime, partition_for("g1"), gate, real_load, slow_load


@pytest.mark.parametrize("load_fails", [False, True])
async def test_a_partition_moved_away_while_it_loads_is_not_served_after(tmp_path, autojump_clock, load_fails):
    runtime, p, gate, real_load, slow_load = await gated_runtime(tmp_path, load_fails)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await runtime.loaded.wait()
        assert runtime.state(p) is PartitionState.ACTIVE
        runtime.load = slow_load
        runtime.relocate(p, led=True)  # moved here again: loading
        await trio.testing.wait_all_tasks_blocked()
        assert runtime.state(p) is PartitionState.LOADING
        runtime.relocate(p, led=False)  # ... and away before the load ends
        gate.set()
        await trio.sleep(120)  # long enough for any reload with backoff
        assert runtime.state(p) is PartitionState.UNLOADED and runtime.shard(p) is None
        runtime.load = real_load
        runtime.relocate(p, led=True)  # back: it loads and serves
        await trio.sleep(1)
        assert runtime.state(p) is PartitionState.ACTIVE and runtime.shard(p) is not None
        nursery.cancel_scope.cancel()


async def test_a_held_partition_answers_load_in_progress_and_loads_once_released(tmp_path, autojump_clock):
    """cluster.processes: led here while another process may still hold the log (`hold`): no
    shard, COORDINATOR_LOAD_IN_PROGRESS, a load already in flight dropped; `relocate(led=True)`
    (the other process let go) loads and serves it."""
    runtime, p, gate, real_load, slow_load = await gated_runtime(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await runtime.loaded.wait()
        runtime.load = slow_load
        runtime.relocate(p, led=True)  # a load starts ...
        await trio.testing.wait_all_tasks_blocked()
        runtime.hold(p)  # ... and the partition is held before it ends
        gate.set()
        await trio.sleep(120)
        assert runtime.state(p) is PartitionState.LOADING and runtime.shard(p) is None
        assert runtime.unavailable(p).error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        runtime.load = real_load
        runtime.relocate(p, led=True)  # released
        await trio.sleep(1)
        assert runtime.state(p) is PartitionState.ACTIVE and runtime.shard(p) is not None
        nursery.cancel_scope.cancel()
