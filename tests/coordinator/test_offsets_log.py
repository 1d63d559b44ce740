"""The durable writer: placement, one batch per op and partition, group commit, failures."""

from __future__ import annotations

import errno

import pytest
import trio

from coordinator.runtime.clock import FakeClock
from coordinator.config import Config
from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone
from coordinator.groups.placement import partition_for
from coordinator.groups.records import OffsetCommitRecord, OffsetTombstone, decode_record
from coordinator.runtime.partition_writer import (CoordinatorUnavailableError, OffsetsLog, PartitionState,
                                     offsets_log_config)
from storage import fsutil
from storage.batch import iter_records


def make_writer(tmp_path, n=50, **overrides) -> OffsetsLog:
    config = Config({"data.dir": str(tmp_path), **overrides})
    return OffsetsLog(tmp_path, n, offsets_log_config(config), FakeClock(1_000))


def commit(group, topic="t", partition=0, offset=1):
    return OffsetCommitRecord(group, topic, partition, offset, -1, "", 1_000, None)


def batches(writer, partition):
    log = writer.log(partition)
    return [] if log is None else [[decode_record(r.key, r.value) for r in iter_records(data)]
                                   for _, data in log.iter_batches()]


class CountingSync:
    def __init__(self, fail: bool = False) -> None:
        self.calls, self.fail, self.real = 0, fail, fsutil.fdatasync

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if self.fail:
            raise OSError(errno.EIO, "Input/output error")
        self.real(fd)


def test_log_config_is_compacted_with_offsets_segment_bytes(tmp_path):
    config = offsets_log_config(Config({"offsets.topic.segment.bytes": "12345"}))
    assert config.cleanup_policy == "compact"
    assert config.segment_bytes == 12345
    assert config.retention_ms == -1


async def test_records_of_one_op_are_one_batch_in_the_groups_partition(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    group = GroupMetadataRecord("g1", "consumer", 1, "range", None, 5, ())
    op = [group, commit("g1", partition=0), commit("g1", partition=1), OffsetTombstone("g1", "t", 2)]
    token = writer.append(op)
    await writer.wait_durable(token)
    p = partition_for("g1")
    assert writer.existing_partitions() == [p]
    assert (tmp_path / f"__consumer_offsets-{p}").is_dir()
    assert batches(writer, p) == [op]
    writer.close()


async def test_an_op_touching_two_partitions_writes_one_batch_in_each(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    a, b = "g1", "g3"
    assert partition_for(a) != partition_for(b)
    token = writer.append([GroupTombstone(a), commit(b), GroupTombstone(b)])
    await writer.wait_durable(token)
    assert batches(writer, partition_for(a)) == [[GroupTombstone(a)]]
    assert batches(writer, partition_for(b)) == [[commit(b), GroupTombstone(b)]]
    writer.close()


async def test_durable_only_after_the_fsync(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    writer = make_writer(tmp_path)
    token = writer.append([commit("g1")])
    log = writer.log(partition_for("g1"))
    assert log.log_end_offset == 1 and log.durable_offset == 0 and sync.calls == 0
    await writer.wait_durable(token)
    assert sync.calls == 1 and log.durable_offset == 1
    writer.close()


async def test_group_commit_one_fsync_covers_ops_appended_meanwhile(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    writer = make_writer(tmp_path)
    tokens = [writer.append([commit("g1", offset=i)]) for i in range(20)]
    done: list[int] = []

    async def wait(token):
        await writer.wait_durable(token)
        done.append(token)

    async with trio.open_nursery() as nursery:
        for token in tokens:
            nursery.start_soon(wait, token)
    assert sorted(done) == tokens
    assert sync.calls == 1
    assert len(batches(writer, partition_for("g1"))) == 20
    writer.close()


async def test_empty_op_waits_for_earlier_writes(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    writer = make_writer(tmp_path)
    writer.append([commit("g1")])
    empty = writer.append([])
    await writer.wait_durable(empty)
    assert sync.calls == 1
    assert writer.log(partition_for("g1")).durable_offset == 1
    await writer.wait_durable(writer.append([]))  # nothing pending: no fsync
    assert sync.calls == 1
    writer.close()


async def test_failing_fsync_fails_the_op_and_marks_the_partition_failed(tmp_path, monkeypatch, autojump_clock):
    writer = make_writer(tmp_path)
    failed: list[int] = []
    writer.on_failure = failed.append
    await writer.wait_durable(writer.append([commit("g1")]))
    monkeypatch.setattr(fsutil, "fdatasync", CountingSync(fail=True))
    token = writer.append([commit("g1", offset=2)])
    with pytest.raises(CoordinatorUnavailableError) as info:
        await writer.wait_durable(token)
    p = partition_for("g1")
    assert info.value.partition == p and info.value.error_code == 15
    assert writer.state(p) is PartitionState.FAILED
    assert not writer.is_available("g1") and writer.is_loaded("g1")
    assert writer.is_available("g3")  # other partitions keep serving
    assert failed == [p]
    with pytest.raises(CoordinatorUnavailableError):
        writer.append([commit("g1", offset=3)])  # no writes until reloaded
    writer.close()


async def test_failing_write_raises_from_append(tmp_path, monkeypatch, autojump_clock):
    writer = make_writer(tmp_path)
    await writer.wait_durable(writer.append([commit("g1")]))

    def enospc(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsutil, "write_all", enospc)
    with pytest.raises(CoordinatorUnavailableError):
        writer.append([commit("g1", offset=2)])
    assert writer.state(partition_for("g1")) is PartitionState.FAILED
    monkeypatch.undo()
    token = writer.append([commit("g3")])  # another partition still appends
    await writer.wait_durable(token)
    writer.close()


async def test_loading_partition_refuses_writes_with_load_in_progress(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    writer.set_state(partition_for("g1"), PartitionState.LOADING)
    assert not writer.is_loaded("g1") and not writer.is_available("g1")
    with pytest.raises(CoordinatorUnavailableError) as info:
        writer.append([commit("g1")])
    assert info.value.error_code == 14
    writer.close()


async def test_close_writes_the_clean_shutdown_marker(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    await writer.wait_durable(writer.append([commit("g1")]))
    writer.close()
    assert (tmp_path / f"__consumer_offsets-{partition_for('g1')}" / ".kafka_cleanshutdown").exists()
    with pytest.raises(CoordinatorUnavailableError):
        writer.append([commit("g1")])


async def test_segments_roll_at_offsets_topic_segment_bytes(tmp_path, autojump_clock):
    writer = make_writer(tmp_path, **{"offsets.topic.segment.bytes": "2000"})
    for i in range(50):
        await writer.wait_durable(writer.append([commit("g1", offset=i)]))
    log = writer.log(partition_for("g1"))
    assert len(log.segments) > 1
    assert [r.offset for r in batches(writer, partition_for("g1")) for r in r] == list(range(50))
    writer.close()


async def test_empty_op_is_not_failed_by_another_failed_partition(tmp_path, monkeypatch, autojump_clock):
    writer = make_writer(tmp_path)
    monkeypatch.setattr(fsutil, "fdatasync", CountingSync(fail=True))
    token = writer.append([commit("g1")])
    with pytest.raises(CoordinatorUnavailableError):
        await writer.wait_durable(token)
    monkeypatch.undo()
    await writer.wait_durable(writer.append([]))  # a heartbeat-like op elsewhere still answers
    writer.close()
