"""The share coordinator on its runtime and real files (MockClock time): state written, the
server stopped, a new one started on the same data dir reads the same state back; loading and
unavailable partitions as the persister's callers see them; pruning; unknown records at load."""

from __future__ import annotations

import uuid

import trio

from coordinator.runtime.coordinator_runtime import CoordinatorUnavailable, PartitionState
from coordinator.share.persister import ShareState, StateBatch, StateSummary
from coordinator.share.state import ops
from coordinator.share.state.placement import SHARE_STATE_TOPIC
from coordinator.share.state.records import SNAPSHOT_TYPE, encode_key
from protocol.errors import ErrorCode as E
from tests.support.share_state import ACKNOWLEDGED, ShareStateHarness, acknowledged


async def test_state_survives_a_restart(tmp_path, autojump_clock):
    settings = {"share_coordinator_snapshot_update_records_per_snapshot": 3}
    h = ShareStateHarness(tmp_path, **settings)
    a, b, gone = h.key("a", 0), h.key("b", 3), h.key("gone", 1)
    async with h.running():
        for key in (a, b, gone):
            assert await h.service.initialize(key, 1, 10) == E.NONE
        assert (await h.service.read(a, 2))[0] == E.NONE  # records leader epoch 2
        for offset in range(10, 30):
            assert await h.ack(a, offset, leader_epoch=2, state_epoch=1) == E.NONE
        assert await h.service.write(b, 1, 0, 12, 3, (StateBatch(12, 20, 0, 2),)) == E.NONE
        assert await h.service.delete(gone) == E.NONE
        assert (await h.service.read(b, 2))[0] == E.NONE  # records leader epoch 2 for b too
        before = {key: await h.service.read(key, 2) for key in (a, b)}
    assert before[a][1] is not None and acknowledged(before[a][1].batches) == set(range(10, 30))

    again = ShareStateHarness(tmp_path, **settings)
    async with again.running():
        for key in (a, b):
            assert await again.service.read(key, 2) == before[key]
        assert await again.service.read(gone, 2) == (E.INVALID_REQUEST, None)  # deleted: never initialized
        assert await again.service.read(a, 1) == (E.FENCED_LEADER_EPOCH, None)  # the epoch was recorded
        assert await again.service.read_summary(b, 0) == (E.NONE, StateSummary(1, 12, 2, 3))
        shard = again.runtime.shard(again.service.partition_for(a))
        assert shard is not None and shard.states[a].snapshot_epoch > 0  # snapshots every 3 updates were written


async def test_a_loading_partition_is_waited_for(tmp_path, autojump_clock):
    h = ShareStateHarness(tmp_path)
    key = h.key()
    async with h.running():
        assert await h.service.initialize(key, 0, 5) == E.NONE
    h2 = ShareStateHarness(tmp_path)
    async with h2.running(load=False):
        partition = h2.service.partition_for(key)
        assert h2.runtime.state(partition) is PartitionState.LOADING
        try:
            await h2.runtime.run_op(partition, ops.read, ops.ReadParams(key, 0))
            raise AssertionError("a loading partition must not serve")
        except CoordinatorUnavailable as exc:
            assert exc.error_code == E.COORDINATOR_LOAD_IN_PROGRESS
        answers = []

        async def read() -> None:
            answers.append(await h2.service.read(key, 0))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            await trio.sleep(1)
            assert answers == []  # still waiting for the load
            await h2.runtime.load_all()
        assert answers == [(E.NONE, ShareState(0, 5, 0, 0, ()))]


async def test_an_unled_partition_answers_after_the_retry_window(tmp_path, autojump_clock):
    h = ShareStateHarness(tmp_path)
    key = h.key()
    async with h.running():
        partition = h.service.partition_for(key)
        h.runtime.relocate(partition, led=False)  # its replicas are all down
        started = trio.current_time()
        assert await h.service.initialize(key, 0, 0) == E.NOT_COORDINATOR
        assert trio.current_time() - started >= h.service.retry_window_ms / 1000
        h.runtime.relocate(partition, led=True)  # a broker leads it again (and loads it)
        assert await h.service.initialize(key, 0, 0) == E.NONE


async def test_pruning_deletes_only_what_no_state_needs(tmp_path, autojump_clock):
    """A busy key and a quiet one on the same partition: the quiet key's only snapshot holds
    pruning back until the cold-partition snapshot rewrites it; then the segments below both
    keys' newest snapshots go, and a restart reads the same state from what is left."""
    settings = {
        "share_coordinator_state_topic_segment_bytes": 1024,
        "share_coordinator_snapshot_update_records_per_snapshot": 4,
        "share_coordinator_state_topic_prune_interval_ms": 60_000,
        "share_coordinator_cold_partition_snapshot_interval_ms": 120_000,
    }
    h = ShareStateHarness(tmp_path, **settings)
    busy = h.key("busy", 0)
    partition = h.service.partition_for(busy)
    quiet = next(k for k in (h.key(f"quiet-{i}", 0) for i in range(100)) if h.service.partition_for(k) == partition)
    async with h.running():
        assert await h.service.initialize(quiet, 0, 0) == E.NONE
        assert await h.service.initialize(busy, 0, 0) == E.NONE
        for offset in range(200):
            assert await h.ack(busy, offset) == E.NONE
        log = h.runtime.writer.log(partition)
        assert log is not None and len(log.segments) > 3
        await trio.sleep(61)  # the first pruning pass
        assert log.log_start_offset == 0
        await trio.sleep(120)  # cold snapshots at 120 s, the pruning pass after them at 180 s
        assert log.log_start_offset > 0
        before = {k: await h.service.read(k, 0) for k in (busy, quiet)}
    assert acknowledged(before[busy][1].batches) == set(range(200))
    again = ShareStateHarness(tmp_path, **settings)
    async with again.running():
        assert {k: await again.service.read(k, 0) for k in (busy, quiet)} == before


async def test_unknown_records_are_skipped_at_load(tmp_path, autojump_clock):
    h = ShareStateHarness(tmp_path)
    key = h.key()
    partition = h.service.partition_for(key)
    async with h.running():
        assert await h.service.initialize(key, 0, 0) == E.NONE
        log = h.runtime.writer.log(partition)
        assert log is not None
        log.append_kv([(b"\x00\x09unknown-type", b"x"), (encode_key(SNAPSHOT_TYPE, key), b"\x00\x05later")], 0)
        await h.ack(key, 3)
    again = ShareStateHarness(tmp_path)
    async with again.running():
        assert again.runtime.stats[partition].skipped == 2
        code, state = await again.service.read(key, 0)
        assert code == E.NONE and state is not None
        assert state.batches == (StateBatch(3, 3, ACKNOWLEDGED, 1),)


async def test_the_topic_is_not_compacted(tmp_path):
    h = ShareStateHarness(tmp_path)
    config = h.runtime.writer.log_config
    assert (config.cleanup_policy, config.retention_ms, config.retention_bytes) == ("delete", -1, -1)
    assert h.runtime.kind.topic == SHARE_STATE_TOPIC


async def test_bad_input_gets_kafkas_errors_and_writes_nothing(tmp_path, autojump_clock):
    h = ShareStateHarness(tmp_path)
    key = h.key("bad", 1)
    async with h.running():
        assert await h.service.initialize(key, 2, 0) == E.NONE
        assert (await h.service.read(key, 3))[0] == E.NONE
        ends = {p: h.runtime.writer.log(p).log_end_offset for p in range(3) if h.runtime.writer.log(p) is not None}
        state = h.runtime.shard(h.service.partition_for(key)).states[key]
        unknown_topic = key._replace(topic_id=uuid.UUID(int=99))
        calls = [
            (h.service.write(key._replace(partition=-1), 2, 3, 0, 0, ()), E.INVALID_REQUEST),
            (h.service.write(key._replace(partition=4), 2, 3, 0, 0, ()), E.INVALID_REQUEST),  # never initialized
            (h.service.initialize(key._replace(partition=4), 0, 0), E.UNKNOWN_TOPIC_OR_PARTITION),  # "t" has 4
            (h.service.initialize(unknown_topic, 0, 0), E.UNKNOWN_TOPIC_OR_PARTITION),
            (h.service.write(key, 1, 3, 0, 0, ()), E.FENCED_STATE_EPOCH),
            (h.service.write(key, 2, 2, 0, 0, ()), E.FENCED_LEADER_EPOCH),
            (h.service.initialize(key, 1, 0), E.FENCED_STATE_EPOCH),
            (h.service.write(key, 2, 3, 0, 0, (StateBatch(0, 1, 999, 1),)), E.INVALID_REQUEST),
            (h.service.delete(unknown_topic), E.UNKNOWN_TOPIC_OR_PARTITION),
        ]
        for call, code in calls:
            assert await call == code
        assert await h.service.read(key._replace(partition=-1), 3) == (E.INVALID_REQUEST, None)
        assert await h.service.read(key, 2) == (E.FENCED_LEADER_EPOCH, None)
        assert await h.service.read_summary(unknown_topic, 0) == (E.UNKNOWN_TOPIC_OR_PARTITION, None)
        assert {p: h.runtime.writer.log(p).log_end_offset for p in ends} == ends  # nothing was written
        assert h.runtime.shard(h.service.partition_for(key)).states[key] == state
        assert (await h.service.read(key, 3))[0] == E.NONE  # and the state still serves
