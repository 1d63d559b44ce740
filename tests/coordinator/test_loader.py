"""Loading __consumer_offsets: round trips through the real writer, tombstones, unknown records,
session timers started at load, LOAD_IN_PROGRESS, reload after a failure, and our segment files
read back by an independent RecordBatch reader (kafka-python)."""

from __future__ import annotations

from protocol.errors import ErrorCode

import errno
import glob

import pytest
import trio
from kafka.record import MemoryRecords

from coordinator.runtime.clock import FakeClock
from coordinator.config import Config
from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone, MemberSnapshot
from coordinator.groups.operation import OpContext, ParkedReply
from coordinator.groups.placement import partition_for
from coordinator.groups.records import (OffsetCommitRecord, OffsetTombstone, decode_record)
from coordinator.groups.state import GroupState
from tests.support.group_context import GroupTestContext
from coordinator.runtime.loader import open_offsets
from coordinator.runtime.partition_writer import CoordinatorUnavailableError, PartitionState
from storage import fsutil
from storage.batch import Record

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python resources API


def config_for(tmp_path) -> Config:
    return Config({"data.dir": str(tmp_path)})


def commit(group, topic="t", partition=0, offset=1, epoch=-1, expire=None):
    return OffsetCommitRecord(group, topic, partition, offset, epoch, f"m{offset}", 1_000 + offset, expire)


def member(mid, session=10_000):
    return MemberSnapshot(mid, None, "client", "/127.0.0.1", 60_000, session, b"sub-" + mid.encode(),
                          b"asg-" + mid.encode())


async def write_ops(tmp_path, clock, ops):
    writer, _ = await open_offsets(config_for(tmp_path), clock)
    for op in ops:
        await writer.wait_durable(writer.append(op))
    writer.close()


async def test_round_trip_groups_offsets_and_tombstones(tmp_path, autojump_clock):
    clock = FakeClock(50_000)
    g1_gen1 = GroupMetadataRecord("g1", "consumer", 1, "range", "a", 10, (member("a"), member("b")))
    g1_gen2 = GroupMetadataRecord("g1", "consumer", 2, "range", "b", 20, (member("b"),))
    g2 = GroupMetadataRecord("g2", "consumer", 3, "rr", "x", 30, (member("x"),))
    g3 = GroupMetadataRecord("g3", "", 0, None, None, 40, ())
    ops = [
        [g1_gen1, commit("g1", offset=1), commit("g1", partition=1, offset=5)],
        [g2, commit("g2", "u", 3, 7, epoch=4), commit("g2", "u", 4, 8, expire=99_000)],
        [g3],
        [g1_gen2, commit("g1", offset=2)],  # overrides g1's first commit on t-0
        [OffsetTombstone("g1", "t", 1)],
        [GroupTombstone("g3")],
        [commit("simple", "s", 0, 11)],  # offsets without a group: a "simple" group appears
        [commit("gone", offset=1), OffsetTombstone("gone", "t", 0), GroupTombstone("gone")],
    ]
    await write_ops(tmp_path, clock, ops)

    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    assert sorted(loaded.groups.groups) == ["g1", "g2", "simple"]
    assert loaded.groups.group("g1").snapshot() == g1_gen2
    assert loaded.groups.group("g2").snapshot() == g2
    simple = loaded.groups.group("simple")
    assert simple.state is GroupState.EMPTY and simple.generation_id == 0 and not simple.members
    assert loaded.offsets.groups == {
        "g1": {("t", 0): commit("g1", offset=2)},
        "g2": {("u", 3): commit("g2", "u", 3, 7, epoch=4), ("u", 4): commit("g2", "u", 4, 8, expire=99_000)},
        "simple": {("s", 0): commit("simple", "s", 0, 11)},
    }
    assert all(writer.is_loaded(g) and writer.is_available(g) for g in ("g1", "g2", "simple"))
    assert sum(s.records for s in loaded.stats.values()) == 15
    writer.close()


async def test_real_group_round_trip_and_session_timers_start_at_load(tmp_path, autojump_clock):
    ctx = GroupTestContext(start_ms=1_000)
    ids = ctx.stable_group(2, session_ms=10_000)
    records = ctx.take_records()
    assert records, "a stable group writes its metadata"
    before = ctx.group().snapshot()
    clock = FakeClock(1_000_000)
    await write_ops(tmp_path, clock, [records])

    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    group = loaded.groups.group("g")
    assert group.snapshot() == before
    assert group.state is GroupState.STABLE and group.leader_id == ids[0]
    timers = loaded.groups.timers
    for mid in ids:
        assert timers.deadline(("heartbeat", "g", mid)) == 1_000_000 + 10_000
    # Nobody heartbeats: at load time + session timeout both members are removed.
    clock.advance(10_000)
    out = []
    while (timer := timers.pop_expired(clock.time_ms())) is not None:
        op = OpContext(loaded.groups, clock.time_ms())
        timer.action(op)
        out.extend(op.records)
    assert not group.members
    assert out and out[-1].members == ()  # the expiry itself writes the group as Empty
    writer.close()


async def test_unknown_record_types_are_skipped(tmp_path, autojump_clock):
    clock = FakeClock(0)
    await write_ops(tmp_path, clock, [[commit("g1")]])
    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    log = writer.log(partition_for("g1"))
    # A KIP-848 ConsumerGroupMetadata record (type 3) between two commits of ours.
    log.append_records([Record(key=b"\x00\x03\x00\x02g1", value=b"\x00\x00\x00\x00\x00\x05\x00")])
    await writer.wait_durable(writer.append([commit("g1", offset=9)]))
    writer.close()
    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    assert loaded.offsets.get("g1", "t", 0) == commit("g1", offset=9)
    assert loaded.stats[partition_for("g1")].skipped == 1
    writer.close()


async def test_clean_shutdown_needs_no_recovery(tmp_path, autojump_clock):
    clock = FakeClock(0)
    await write_ops(tmp_path, clock, [[commit("g1")]])
    writer, _ = await open_offsets(config_for(tmp_path), clock)
    assert writer.log(partition_for("g1")).load_result.clean_shutdown
    writer.log(partition_for("g1")).abandon()  # a crash
    writer2, loaded = await open_offsets(config_for(tmp_path), clock)
    assert not writer2.log(partition_for("g1")).load_result.clean_shutdown
    assert loaded.offsets.get("g1", "t", 0) == commit("g1")
    writer2.close()


async def test_partitions_answer_load_in_progress_until_loaded(tmp_path, autojump_clock):
    clock = FakeClock(0)
    await write_ops(tmp_path, clock, [[commit("g1")]])
    writer, loaded = await open_offsets(config_for(tmp_path), clock, load=False)
    assert not loaded.is_loaded("g1") and not loaded.is_available("g1")
    assert loaded.is_loaded("g3")  # no log on disk: nothing to load
    with pytest.raises(CoordinatorUnavailableError):
        writer.append([commit("g1", offset=2)])
    await loaded.load_all()
    assert loaded.is_loaded("g1") and loaded.is_available("g1")
    assert loaded.offsets.get("g1", "t", 0) == commit("g1")
    writer.close()


async def test_failed_partition_reloads_from_its_log(tmp_path, monkeypatch, autojump_clock):
    clock = FakeClock(0)
    g1 = GroupMetadataRecord("g1", "consumer", 1, "range", "a", 10, (member("a"),))
    await write_ops(tmp_path, clock, [[g1, commit("g1", offset=1)]])
    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    woken = []
    loaded.on_timers_changed = lambda: woken.append(1)
    async with trio.open_nursery() as nursery:
        await nursery.start(loaded.run)
        # An op changes memory, parks a JoinGroup, and its append hits a full disk.
        parked: ParkedReply = ParkedReply()
        loaded.groups.group("g1").members["a"].awaiting_join = parked
        loaded.offsets.put(commit("g1", offset=2))

        def enospc(fd, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(fsutil, "write_all", enospc)
        with pytest.raises(CoordinatorUnavailableError):
            writer.append([commit("g1", offset=2)])
        monkeypatch.undo()
        assert not loaded.is_available("g1")
        while writer.state(partition_for("g1")) is not PartitionState.ACTIVE:
            await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert parked.done and parked.value.error == ErrorCode.NOT_COORDINATOR
    assert loaded.offsets.get("g1", "t", 0) == commit("g1", offset=1)  # the log is the truth
    assert loaded.groups.group("g1").snapshot() == g1
    assert woken
    await writer.wait_durable(writer.append([commit("g1", offset=3)]))  # serving again
    writer.close()


async def test_failed_fsync_reloads_too(tmp_path, monkeypatch, autojump_clock):
    clock = FakeClock(0)
    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    async with trio.open_nursery() as nursery:
        await nursery.start(loaded.run)
        await writer.wait_durable(writer.append([commit("g1", offset=1)]))

        def eio(fd):
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(fsutil, "fdatasync", eio)
        token = writer.append([commit("g1", offset=2)])
        with pytest.raises(CoordinatorUnavailableError):
            await writer.wait_durable(token)
        monkeypatch.undo()
        while writer.state(partition_for("g1")) is not PartitionState.ACTIVE:
            await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    # The unsynced batch is still in the page cache, so recovery keeps it: an outcome the
    # client must treat as unknown (it got an error), exactly as with Kafka.
    assert loaded.offsets.get("g1", "t", 0).offset in (1, 2)
    writer.close()


async def test_segments_decode_with_an_independent_batch_reader(tmp_path, autojump_clock):
    clock = FakeClock(0)
    g = GroupMetadataRecord("g1", "consumer", 1, "range", "a", 10, (member("a"),))
    ops = [[g, commit("g1", offset=1), commit("g1", partition=1, offset=2)], [OffsetTombstone("g1", "t", 1)],
           [GroupTombstone("g1")]]
    await write_ops(tmp_path, clock, ops)
    files = glob.glob(str(tmp_path / f"__consumer_offsets-{partition_for('g1')}" / "*.log"))
    assert len(files) == 1
    records = MemoryRecords(open(files[0], "rb").read())
    got, batch_sizes = [], []
    while records.has_next():
        batch = records.next_batch()
        batch.validate_crc()
        items = list(batch)
        batch_sizes.append(len(items))
        got += [(r.offset, decode_record(r.key, r.value)) for r in items]
    assert batch_sizes == [3, 1, 1]
    assert got == list(enumerate([obj for op in ops for obj in op]))


async def test_load_equals_a_record_by_record_replay(tmp_path, autojump_clock):
    """Random ops over few keys; loading (last record per key) must give the state a naive
    in-order replay gives, up to simple groups left without offsets (see loader.py)."""
    import random

    from coordinator.groups.shard import GroupCoordinator
    from coordinator.groups.offset_store import OffsetStore
    from coordinator.groups.replay import replay

    rng = random.Random(7)
    groups = ["g1", "g2", "g3", "g4"]
    ops = []
    for i in range(300):
        op = []
        for _ in range(rng.randint(1, 4)):
            g, kind = rng.choice(groups), rng.random()
            if kind < 0.5:
                op.append(commit(g, rng.choice("ab"), rng.randint(0, 2), offset=i))
            elif kind < 0.65:
                op.append(OffsetTombstone(g, rng.choice("ab"), rng.randint(0, 2)))
            elif kind < 0.9:
                members = tuple(member(f"m{j}") for j in range(rng.randint(0, 2)))
                op.append(GroupMetadataRecord(g, "consumer" if members else "", i, "range" if members else None,
                                              "m0" if members else None, i, members))
            else:
                op.append(GroupTombstone(g))
        ops.append(op)
    clock = FakeClock(0)
    await write_ops(tmp_path, clock, ops)
    model_groups, model_offsets = GroupCoordinator(), OffsetStore()
    for op in ops:
        for rec in op:
            replay(rec, model_groups, model_offsets, 0)
    writer, loaded = await open_offsets(config_for(tmp_path), clock)

    def visible(coord, offsets):
        return {g: grp.snapshot() for g, grp in coord.groups.items()
                if grp.members or grp.generation_id or offsets.has_offsets(g)}

    assert loaded.offsets.groups == model_offsets.groups
    assert visible(loaded.groups, loaded.offsets) == visible(model_groups, model_offsets)
    writer.close()


async def test_runtime_with_the_durable_writer_survives_a_restart(tmp_path, mock_clock):
    """The real Runtime writes through OffsetsLog; after a restart the group is back, Stable.
    (A MockClock without autojump: the fsync runs in a thread, and autojump would move time
    to the next timer while the loop waits for it, expiring the pending member.)"""
    from coordinator.runtime.clock import TrioClock
    from coordinator.groups.requests import SyncGroupParams
    from coordinator.runtime.single_writer import Runtime

    clock = TrioClock(epoch_ms=1_000_000)
    writer, loaded = await open_offsets(config_for(tmp_path), clock)
    runtime = Runtime(loaded.groups, clock, writer)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        first = await runtime.submit(GroupTestContext.join_params(group_id="rt"))
        assert first.error == ErrorCode.MEMBER_ID_REQUIRED
        joined = await runtime.submit(GroupTestContext.join_params(first.member_id, group_id="rt"))
        assert joined.error == ErrorCode.NONE
        synced = await runtime.submit(SyncGroupParams("rt", joined.generation_id, joined.member_id,
                                                      assignments=[(joined.member_id, b"A")]))
        assert synced.error == ErrorCode.NONE and synced.assignment == b"A"
        before = loaded.groups.group("rt").snapshot()
        nursery.cancel_scope.cancel()
    writer.close()

    writer, again = await open_offsets(config_for(tmp_path), clock)
    group = again.groups.group("rt")
    assert group.snapshot() == before
    assert group.state is GroupState.STABLE and group.members[joined.member_id].assignment == b"A"
    writer.close()


async def test_interval_flush_mode_flushes_in_the_background(tmp_path, autojump_clock):
    config = Config({"data.dir": str(tmp_path), "log.flush.mode": "interval", "log.flush.interval.ms": "1000"})
    writer, loaded = await open_offsets(config, FakeClock(0))
    async with trio.open_nursery() as nursery:
        await nursery.start(loaded.run)
        await writer.wait_durable(writer.append([commit("g1")]))  # returns at once in this mode
        log = writer.log(partition_for("g1"))
        assert log.durable_offset == 0
        await trio.sleep(1.5)
        assert log.durable_offset == 1
        nursery.cancel_scope.cancel()
    writer.close()


def test_group_from_record_restores_static_members_and_leader():
    from coordinator.groups.replay import group_from_record

    static = MemberSnapshot("m-1", "inst-1", "client", "/h", 60_000, 10_000, b"s", b"a")
    record = GroupMetadataRecord("g", "consumer", 4, "range", "m-2", 77, (static, member("m-2")))
    group = group_from_record(record, now_ms=5)
    assert group.static_members == {"inst-1": "m-1"}
    assert group.leader_id == "m-2"  # the record's leader, not the first member
    assert group.members["m-1"].protocols == [("range", b"s")]
    assert group.state is GroupState.STABLE and group.state_timestamp_ms == 77
    assert group.snapshot() == record
