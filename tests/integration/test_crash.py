"""Crash test with real processes: SIGKILL a committer at random moments, restart, compare.

A child process (this file run as a script) opens __consumer_offsets with the real writer and
loader, prints what it loaded, then runs several tasks that commit continuously: each op commits
the same sequence number to 3 partitions of the task's group, and "ack" is printed only after
`wait_durable` returned. The parent SIGKILLs it at random moments (10 cycles), restarts it and
checks: every acknowledged commit is there, nothing unacknowledged is invented (at most the one
in-flight op per task), each op is atomic (its 3 offsets agree), and the final segments decode
with kafka-python's independent RecordBatch reader and pass `storage.dump.check`. (The server does not serve OffsetCommit yet,
so this drives the writer directly rather than through `python -m coordinator serve`.)
"""

from __future__ import annotations

import glob
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

TASKS = 6
PARTITIONS_PER_OP = 3
CYCLES = 10
TOPIC = "crash-topic"


def group_of(task: int) -> str:
    return f"crash-group-{task}"


# -- the child ---------------------------------------------------------------------------------

async def _child(data_dir: str) -> None:
    import trio

    from coordinator.clock import SystemClock
    from coordinator.config import Config
    from coordinator.groups.records import OffsetCommitRecord
    from coordinator.loader import open_offsets

    writer, loaded = await open_offsets(Config({"data.dir": data_dir}), SystemClock())
    state = {g: {f"{t}:{p}": r.offset for (t, p), r in offs.items()}
             for g, offs in loaded.offsets.groups.items()}
    print("loaded " + json.dumps(state), flush=True)

    async def committer(task: int) -> None:
        group = group_of(task)
        seq = max(state.get(group, {}).values(), default=0) + 1
        while True:
            op = [OffsetCommitRecord(group, TOPIC, p, seq, -1, f"seq-{seq}", seq, None)
                  for p in range(PARTITIONS_PER_OP)]
            await writer.wait_durable(writer.append(op))
            print(f"ack {group} {seq}", flush=True)
            seq += 1

    async with trio.open_nursery() as nursery:
        for task in range(TASKS):
            nursery.start_soon(committer, task)


# -- the parent --------------------------------------------------------------------------------

class Child:
    def __init__(self, data_dir: str) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, data_dir], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=_repo_root())
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.proc.poll() is not None:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"child exited ({self.proc.returncode}) waiting for {what}: {err[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.01)  # polling interval of a real-time wait, not synchronisation

    def acks(self) -> list[tuple[str, int]]:
        out = []
        for line in list(self.lines):
            if line.startswith("ack "):
                _, group, seq = line.split()
                out.append((group, int(seq)))
        return out

    def loaded(self) -> dict[str, dict[str, int]]:
        return json.loads(self.lines[0][len("loaded "):])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def _repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check_state(state: dict[str, dict[str, int]], acked: dict[str, int]) -> None:
    for task in range(TASKS):
        group = group_of(task)
        offsets = state.get(group, {})
        if group not in acked:
            # Never acknowledged: at most the one op that was in flight may have landed.
            assert set(offsets.values()) <= {1}, (group, offsets)
            continue
        assert len(offsets) == PARTITIONS_PER_OP, (group, offsets)
        values = set(offsets.values())
        assert len(values) == 1, f"op not atomic for {group}: {offsets}"
        (value,) = values
        assert value >= acked[group], f"acknowledged commit {acked[group]} of {group} lost (found {value})"
        assert value <= acked[group] + 1, f"{group} has {value}, never attempted after ack {acked[group]}"


def test_sigkill_never_loses_an_acknowledged_commit(tmp_path):
    data_dir = str(tmp_path / "data")
    rng = random.Random(20261126)
    acked: dict[str, int] = {}
    for cycle in range(CYCLES):
        child = Child(data_dir)
        child.wait_for(lambda: child.lines, 30, "the loaded state")
        check_state(child.loaded(), acked)
        need = rng.randint(1, 40)
        child.wait_for(lambda: len(child.acks()) >= need, 30, f"{need} acks")
        time.sleep(rng.uniform(0, 0.05))  # a random kill moment, not a synchronisation
        child.kill()
        for group, seq in child.acks():
            # A child resumes from what it loaded: its first ack is at most one past the last
            # ack we saw (the in-flight op may have landed), then they are consecutive.
            assert acked.get(group, 0) < seq <= acked.get(group, 0) + 2, (group, seq, acked.get(group))
            acked[group] = seq

    # Final check in this process: recovery + replay, then an independent batch reader.
    import trio

    from coordinator.clock import SystemClock
    from coordinator.config import Config
    from coordinator.loader import open_offsets

    async def final() -> dict[str, dict[str, int]]:
        writer, loaded = await open_offsets(Config({"data.dir": data_dir}), SystemClock())
        out = {g: {f"{t}:{p}": r.offset for (t, p), r in offs.items()}
               for g, offs in loaded.offsets.groups.items()}
        writer.close()
        return out

    check_state(trio.run(final), acked)
    from storage.dump import check

    assert check(data_dir) == []  # recovered and closed cleanly: CRCs, offsets, names, indexes
    _check_segments_with_kafka_python(data_dir)


def _check_segments_with_kafka_python(data_dir: str) -> None:
    from kafka.record import MemoryRecords

    from coordinator.groups.records import OffsetCommitRecord, decode_record

    files = glob.glob(os.path.join(data_dir, "__consumer_offsets-*", "*.log"))
    assert files
    total = 0
    for path in files:
        with open(path, "rb") as f:
            records = MemoryRecords(f.read())
        last_offset = -1
        while records.has_next():
            batch = records.next_batch()
            assert batch.validate_crc()
            items = list(batch)
            assert len(items) == PARTITIONS_PER_OP
            assert len({decode_record(r.key, r.value).offset for r in items}) == 1  # one op, one seq
            for r in items:
                assert r.offset > last_offset
                last_offset = r.offset
                assert isinstance(decode_record(r.key, r.value), OffsetCommitRecord)
                total += 1
    assert total > 0


if __name__ == "__main__":
    import trio

    trio.run(_child, sys.argv[1])
