"""Crash test with real processes: SIGKILL a committer at random moments, restart, compare.

A child process (this file run as a script) opens __consumer_offsets with the real writer and
loader, prints what it loaded, then runs several tasks that commit continuously: each op commits
the same sequence number to 3 partitions of the task's group, and "ack" is printed only after
`wait_durable` returned. The parent SIGKILLs it at random moments (10 cycles), restarts it and
checks: every acknowledged commit is there, nothing unacknowledged is invented (at most the one
in-flight op per task), each op is atomic (its 3 offsets agree), and the final segments decode
with kafka-python's independent RecordBatch reader and pass `storage.dump.check`. This half
drives the writer directly, so every kill lands between an append and its fsync as often as
possible; the server half below does the same through `kgc serve` and real OffsetCommits.
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

TASKS = 6
PARTITIONS_PER_OP = 3
CYCLES = 5
SERVER_CYCLES = 6
TOPIC = "crash-topic"


def group_of(task: int) -> str:
    return f"crash-group-{task}"


# -- the child ---------------------------------------------------------------------------------


async def _child(data_dir: str) -> None:
    import trio

    from coordinator.config import Config
    from coordinator.groups.lifecycle import group_runtime
    from coordinator.groups.placement import partition_for
    from coordinator.groups.records import OffsetCommitRecord
    from coordinator.runtime.clock import SystemClock
    from storage.log_manager import LogManager

    runtime = group_runtime(Config({"data.dir": data_dir}), SystemClock(), LogManager(data_dir, SystemClock()))
    await runtime.load_all()
    writer = runtime.writer
    state = {
        g: {f"{t}:{p}": r.offset for (t, p), r in offs.items()}
        for shard in runtime.shards()
        for g, offs in shard.offsets.groups.items()
    }
    print("loaded " + json.dumps(state), flush=True)

    async def committer(task: int) -> None:
        group = group_of(task)
        seq = max(state.get(group, {}).values(), default=0) + 1
        while True:
            op = [
                OffsetCommitRecord(group, TOPIC, p, seq, -1, f"seq-{seq}", seq, None) for p in range(PARTITIONS_PER_OP)
            ]
            partition = partition_for(group)
            await writer.wait_durable(partition, writer.append(partition, op))
            print(f"ack {group} {seq}", flush=True)
            seq += 1

    async with trio.open_nursery() as nursery:
        for task in range(TASKS):
            nursery.start_soon(committer, task)


# -- the parent --------------------------------------------------------------------------------


class Child:
    def __init__(self, data_dir: str) -> None:
        from tests.support.serve_process import REPO  # here: this file is also the child script

        self.proc = subprocess.Popen(
            [sys.executable, __file__, data_dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:  # the child exited: wake the waiter to report it
            self._eof = True
            self._changed.notify_all()

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        with self._changed:
            done = self._changed.wait_for(lambda: predicate() or self._eof, timeout)
        if done and not predicate():
            self.proc.wait(5)
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"child exited ({self.proc.returncode}) waiting for {what}: {err[-2000:]}")
        if not done:
            raise AssertionError(f"timed out waiting for {what}")

    def acks(self) -> list[tuple[str, int]]:
        out = []
        for line in list(self.lines):
            if line.startswith("ack "):
                _, group, seq = line.split()
                out.append((group, int(seq)))
        return out

    def loaded(self) -> dict[str, dict[str, int]]:
        return json.loads(self.lines[0][len("loaded ") :])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def check_state(state: dict[str, dict[str, int]], acked: dict[str, int], attempted: dict[str, int]) -> None:
    """Every acknowledged commit is there (value >= last ack), nothing never attempted appears
    (value <= last attempt: an op whose ack was lost to the kill may or may not have landed),
    and each op is atomic (its 3 partitions agree)."""
    for task in range(TASKS):
        group = group_of(task)
        offsets = state.get(group, {})
        if not offsets:
            assert group not in acked, f"{group}: acknowledged commit {acked[group]} lost entirely"
            continue
        assert len(offsets) == PARTITIONS_PER_OP, f"op not atomic for {group}: {offsets}"
        values = set(offsets.values())
        assert len(values) == 1, f"op not atomic for {group}: {offsets}"
        (value,) = values
        assert value >= acked.get(group, 0), f"acknowledged commit {acked[group]} of {group} lost (found {value})"
        assert value <= attempted.get(group, 0), f"{group} has {value}, never attempted (last {attempted.get(group)})"


def note_cycle(
    acks: list[tuple[str, int]], start: dict[str, int], acked: dict[str, int], attempted: dict[str, int]
) -> None:
    """Fold one cycle in: each task started at start[group] and acked consecutive sequence
    numbers; the one after its last ack was attempted (in flight when the process died)."""
    last = {group: seq - 1 for group, seq in start.items()}
    for group, seq in acks:
        assert seq == last[group] + 1, (group, seq, last[group])
        last[group] = seq
        acked[group] = seq
    for group, seq in last.items():
        attempted[group] = max(attempted.get(group, 0), seq + 1)


def test_sigkill_never_loses_an_acknowledged_commit(tmp_path):
    data_dir = str(tmp_path / "data")
    rng = random.Random(20261126)
    acked: dict[str, int] = {}
    attempted: dict[str, int] = {}
    for _ in range(CYCLES):
        child = Child(data_dir)
        child.wait_for(lambda child=child: child.lines, 30, "the loaded state")
        loaded = child.loaded()
        check_state(loaded, acked, attempted)
        need = rng.randint(1, 40)
        child.wait_for(lambda child=child, need=need: len(child.acks()) >= need, 30, f"{need} acks")
        # The kill lands a random 0-50 ms later, while commits are in flight: the test's input.
        threading.Event().wait(rng.uniform(0, 0.05))
        child.kill()
        # The child resumes each group from what it loaded.
        start = {group_of(t): max(loaded.get(group_of(t), {}).values(), default=0) + 1 for t in range(TASKS)}
        note_cycle(child.acks(), start, acked, attempted)

    # Final check in this process: recovery + replay, then an independent batch reader.
    import trio

    from coordinator.config import Config
    from coordinator.groups.lifecycle import group_runtime
    from coordinator.runtime.clock import SystemClock
    from storage.log_manager import LogManager

    async def final() -> dict[str, dict[str, int]]:
        runtime = group_runtime(Config({"data.dir": data_dir}), SystemClock(), LogManager(data_dir, SystemClock()))
        await runtime.load_all()
        out = {
            g: {f"{t}:{p}": r.offset for (t, p), r in offs.items()}
            for shard in runtime.shards()
            for g, offs in shard.offsets.groups.items()
        }
        runtime.writer.close()
        return out

    check_state(trio.run(final), acked, attempted)
    from storage.dump import check

    assert check(data_dir) == []  # recovered and closed cleanly: CRCs, offsets, names, indexes
    _check_segments_with_kafka_python(data_dir)


def _check_segments_with_kafka_python(data_dir: str, *, ops_only: bool = True) -> int:
    """Read every __consumer_offsets segment with kafka-python's RecordBatch reader; each record
    must decode with our schemas. `ops_only`: every batch is one of our 3-partition ops."""
    from kafka.record import MemoryRecords

    from coordinator.groups.records import OffsetCommitRecord, UnknownRecord, decode_record

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
            items = [(r.offset, decode_record(r.key, r.value)) for r in batch]
            for offset, obj in items:
                assert offset > last_offset and not isinstance(obj, UnknownRecord)
                last_offset = offset
                total += 1
            if ops_only:
                assert len(items) == PARTITIONS_PER_OP
                assert all(isinstance(obj, OffsetCommitRecord) for _, obj in items)
                assert len({obj.offset for _, obj in items}) == 1  # one op, one seq
    assert total > 0
    return total


# -- the real server, real clients ------------------------------------------------------------


class ServerProcess:
    """`python -m coordinator serve --port 0` as a subprocess; its address from its stdout."""

    def __init__(self, data_dir: str, log_path: str) -> None:
        self.log = open(log_path, "a")
        from tests.support.serve_process import start_serve  # here: this file is the child script too

        self.proc, self.bootstrap = start_serve(
            data_dir, "--create-topic", f"{TOPIC}:{PARTITIONS_PER_OP}", stderr=self.log
        )

    def stop(self, sig: int) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.log.close()


class Acks:
    """Acknowledged commits, appended by client threads; the test waits on it, never polls."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int]] = []
        self._changed = threading.Condition()

    def append(self, ack: tuple[str, int]) -> None:
        with self._changed:
            self.items.append(ack)
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self.items) >= count, timeout)


def _client_committer(bootstrap: str, group: str, seq: int, acks: Acks, stop: threading.Event) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = None
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            request_timeout_ms=3000,
            retry_backoff_ms=50,
            reconnect_backoff_max_ms=200,
        )
        while not stop.is_set():
            consumer.commit(
                {TopicPartition(TOPIC, p): OffsetAndMetadata(seq, f"seq-{seq}", -1) for p in range(PARTITIONS_PER_OP)},
                timeout_ms=3000,
            )
            acks.append((group, seq))  # acknowledged: the commit returned without error
            seq += 1
    except Exception:
        pass  # the server was killed under us: this commit's outcome is unknown
    finally:
        if consumer is not None:
            try:
                consumer.close(autocommit=False, timeout_ms=1000)
            except Exception:
                pass


def _fetch_committed(bootstrap: str) -> dict[str, dict[str, int]]:
    from kafka import KafkaConsumer, TopicPartition

    state: dict[str, dict[str, int]] = {}
    for task in range(TASKS):
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group_of(task), enable_auto_commit=False, request_timeout_ms=5000
        )
        try:
            for p in range(PARTITIONS_PER_OP):
                got = consumer.committed(TopicPartition(TOPIC, p), timeout_ms=10_000)
                if got is not None:
                    state.setdefault(group_of(task), {})[f"{TOPIC}:{p}"] = got
        finally:
            consumer.close(autocommit=False)
    return state


def test_sigkill_the_server_never_loses_a_commit_a_client_saw_succeed(tmp_path):
    """Real server process, kafka-python clients committing (simple groups), SIGKILL, restart."""
    data_dir, log_path = str(tmp_path / "data"), str(tmp_path / "server.log")
    rng = random.Random(1126)
    acked: dict[str, int] = {}
    attempted: dict[str, int] = {}
    for cycle in range(SERVER_CYCLES):
        server = ServerProcess(data_dir, log_path)
        state = _fetch_committed(server.bootstrap)
        check_state(state, acked, attempted)
        start = {group_of(t): max(state.get(group_of(t), {}).values(), default=0) + 1 for t in range(TASKS)}
        acks = Acks()
        stop = threading.Event()
        threads = [
            threading.Thread(target=_client_committer, daemon=True, args=(server.bootstrap, group, seq, acks, stop))
            for group, seq in start.items()
        ]
        for thread in threads:
            thread.start()
        need = rng.randint(1, 30)
        assert acks.wait_for(need, timeout=30), f"only {len(acks.items)} commits acknowledged in cycle {cycle}"
        # The kill lands a random 0-50 ms later, while commits are in flight: the test's input,
        # not a wait for anything.
        stop.wait(rng.uniform(0, 0.05))
        server.stop(signal.SIGKILL)
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
            assert not thread.is_alive()
        note_cycle(acks.items, start, acked, attempted)
    assert acked
    server = ServerProcess(data_dir, log_path)
    check_state(_fetch_committed(server.bootstrap), acked, attempted)
    server.stop(signal.SIGTERM)  # a clean stop: every log closed with its marker
    from storage.dump import check

    assert check(data_dir) == []
    _check_segments_with_kafka_python(data_dir, ops_only=False)
    # The verifier's single-process engine over what the real server wrote through 6 kills:
    # structure (S1-S6), every record decodable (G1), every group in its own partition (G4).
    # (No ledger: a commit the client never saw acknowledged may or may not have landed.)
    from coordinator.verify.oracle import verify

    report = verify(data_dir)
    assert report.ok, report.violations[:5]
    assert report.stats["records"] > len(acked)


if __name__ == "__main__":
    import trio

    trio.run(_child, sys.argv[1])
