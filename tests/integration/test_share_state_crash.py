"""Share state through kill -9: a process runs the share coordinator's runtime over a data dir
(real files, group-commit fsync, small segments, a snapshot every 5 updates, pruning and cold
snapshots every 100 ms) and acknowledges records one by one, printing each offset once its write
returned; it is SIGKILLed at a random moment. A new runtime on the same dir must hold every
printed acknowledgement (at most the one write in flight may also be there), `kgc check` must
find the files sound, and the next cycle continues on them.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import trio
import trio.testing

KEYS = 5
CYCLES = 3
SETTINGS = {
    "share_coordinator_state_topic_segment_bytes": 2048,
    "share_coordinator_snapshot_update_records_per_snapshot": 5,
    "share_coordinator_state_topic_prune_interval_ms": 100,
    "share_coordinator_cold_partition_snapshot_interval_ms": 100,
}
REPO = Path(__file__).resolve().parents[2]


async def _acknowledge_forever(data_dir: str, first: int) -> None:
    """The child: initialize the keys (once), then acknowledge offsets first, first+1, ..."""
    from protocol.errors import ErrorCode
    from tests.support.share_state import ShareStateHarness

    h = ShareStateHarness(data_dir, flush="group_commit", **SETTINGS)
    async with h.running():
        for i in range(KEYS):
            key = h.key(f"g{i}", i % 4)
            _, summary = await h.service.read_summary(key, 0)
            if summary is not None and summary.start_offset == -1:  # not initialized yet
                assert await h.service.initialize(key, 0, 0) == ErrorCode.NONE
        print("ready", flush=True)
        offset = first
        while True:
            assert await h.ack(h.key(f"g{offset % KEYS}", offset % KEYS % 4), offset) == ErrorCode.NONE
            print(f"ack {offset}", flush=True)
            offset += 1


def _run_until_killed(data_dir: str, first: int, kill_after: int) -> list[int]:
    """Start the child, SIGKILL it after `kill_after` acknowledgements; the offsets it printed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, __file__, data_dir, str(first)], stdout=subprocess.PIPE, text=True, cwd=REPO, env=env
    )
    acked: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("ack "):
                acked.append(int(line.split()[1]))
                if len(acked) >= kill_after:
                    break
        else:
            raise AssertionError(f"the child exited ({proc.wait()}) before {kill_after} acknowledgements")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.stdout is not None
    acked += [int(line.split()[1]) for line in proc.stdout.read().splitlines() if line.startswith("ack ")]
    return acked  # every line printed before the kill, read or still in the pipe


async def _read_back(data_dir: str) -> dict[int, set[int]]:
    from protocol.errors import ErrorCode
    from tests.support.share_state import ShareStateHarness, acknowledged

    h = ShareStateHarness(data_dir, **SETTINGS)
    found = {}
    async with h.running():
        for i in range(KEYS):
            code, state = await h.service.read(h.key(f"g{i}", i % 4), 0)
            assert code == ErrorCode.NONE and state is not None
            found[i] = acknowledged(state.batches)
    return found


async def test_acknowledged_state_survives_sigkill(tmp_path):
    from coordinator.runtime.clock import ManualClock
    from storage.log_check import check
    from tests.support.share_state import ShareStateHarness

    data_dir, rng = str(tmp_path / "data"), random.Random(932)
    acked: set[int] = set()
    first = 0
    for cycle in range(CYCLES):
        printed = await trio.to_thread.run_sync(_run_until_killed, data_dir, first, rng.randint(20, 120))
        acked.update(printed)
        in_flight = printed[-1] + 1
        assert check(data_dir) == [], f"cycle {cycle}"
        found = await _read_back(data_dir)
        everything = set().union(*found.values())
        assert acked <= everything, f"cycle {cycle}: lost {sorted(acked - everything)[:10]}"
        assert everything - acked <= {in_flight}, f"cycle {cycle}: invented {sorted(everything - acked)[:10]}"
        for i, offsets in found.items():
            assert all(o % KEYS == i for o in offsets)  # each acknowledgement in its own key's state
        acked = everything
        first = in_flight + 1
    assert len(acked) >= CYCLES * 20
    # A child may be killed before its first prune tick (100 ms of real time: a fast disk acknowledges
    # 120 records sooner), so the last pass loads the state on a manual clock and moves it to that tick.
    clock = ManualClock(start_ms=1_000_000)
    h = ShareStateHarness(data_dir, clock=clock, **SETTINGS)
    async with h.running():
        clock.set_time(clock.time_ms() + SETTINGS["share_coordinator_state_topic_prune_interval_ms"])
        await trio.testing.wait_all_tasks_blocked()
        assert _pruned(data_dir), "pruning never deleted a segment"
    assert check(data_dir) == []
    assert acked <= set().union(*(await _read_back(data_dir)).values())


def _pruned(data_dir: str) -> bool:
    """Whether some __share_group_state partition's first segment no longer starts at offset 0."""
    starts = [min(f.name for f in d.glob("*.log")) for d in Path(data_dir).glob("__share_group_state-*")]
    return any(int(name[:-4]) > 0 for name in starts)


if __name__ == "__main__":
    trio.run(_acknowledge_forever, sys.argv[1], int(sys.argv[2]))
