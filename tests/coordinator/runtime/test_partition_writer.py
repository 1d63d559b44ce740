"""The durable writer: one batch per op, group commit, empty ops, failures, clean close."""

from __future__ import annotations

import errno

import pytest
import trio

from coordinator.config import Config
from coordinator.groups.lifecycle import offsets_log_config
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.record_types import GroupMetadataRecord, OffsetCommitRecord, OffsetTombstone
from coordinator.groups.records import decode_record, encode_record
from coordinator.runtime.clock import FakeClock
from coordinator.runtime.partition_writer import LogWriteError, PartitionWriter
from storage import fsutil
from storage.batch import iter_records
from storage.log_manager import LogManager

P, Q = 7, 8  # two partitions of the topic


def make_writer(tmp_path, n=50, **overrides) -> PartitionWriter:
    config = Config({"data.dir": str(tmp_path), **overrides})
    clock = FakeClock(1_000)
    return PartitionWriter(
        OFFSETS_TOPIC, LogManager(tmp_path, clock), n, offsets_log_config(config), clock, encode_record
    )


def commit(group, topic="t", partition=0, offset=1):
    return OffsetCommitRecord(group, topic, partition, offset, -1, "", 1_000, None)


def batches(writer, partition):
    log = writer.log(partition)
    return (
        []
        if log is None
        else [[decode_record(r.key, r.value) for r in iter_records(data)] for _, data in log.iter_batches()]
    )


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


async def test_records_of_one_op_are_one_batch(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    group = GroupMetadataRecord("g1", "consumer", 1, "range", None, 5, ())
    op = [group, commit("g1", partition=0), commit("g1", partition=1), OffsetTombstone("g1", "t", 2)]
    await writer.wait_durable(P, writer.append(P, op))
    assert writer.existing_partitions() == [P]
    assert (tmp_path / f"__consumer_offsets-{P}").is_dir()
    assert batches(writer, P) == [op]
    writer.close()


async def test_durable_only_after_the_fsync(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    writer = make_writer(tmp_path)
    offset = writer.append(P, [commit("g1")])
    log = writer.log(P)
    assert offset == 0 and log.log_end_offset == 1 and log.durable_offset == 0 and sync.calls == 0
    await writer.wait_durable(P, offset)
    assert sync.calls == 1 and log.durable_offset == 1
    writer.close()


async def test_group_commit_one_fsync_covers_ops_appended_meanwhile(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    writer = make_writer(tmp_path)
    offsets = [writer.append(P, [commit("g1", offset=i)]) for i in range(20)]
    done: list[int] = []

    async def wait(offset):
        await writer.wait_durable(P, offset)
        done.append(offset)

    async with trio.open_nursery() as nursery:
        for offset in offsets:
            nursery.start_soon(wait, offset)
    assert sorted(done) == offsets == list(range(20))
    assert sync.calls == 1
    assert len(batches(writer, P)) == 20
    writer.close()


async def test_empty_op_waits_for_earlier_writes_of_its_partition_only(tmp_path, monkeypatch, autojump_clock):
    sync = CountingSync()
    monkeypatch.setattr(fsutil, "fdatasync", sync)
    writer = make_writer(tmp_path)
    writer.append(P, [commit("g1")])
    assert writer.append(Q, []) == -1  # nothing written to Q: nothing to wait for
    await writer.wait_durable(Q, -1)
    assert sync.calls == 0
    await writer.wait_durable(P, writer.append(P, []))
    assert sync.calls == 1 and writer.log(P).durable_offset == 1
    await writer.wait_durable(P, writer.append(P, []))  # nothing pending: no fsync
    assert sync.calls == 1
    writer.close()


async def test_failing_fsync_raises_log_write_error(tmp_path, monkeypatch, autojump_clock):
    writer = make_writer(tmp_path)
    await writer.wait_durable(P, writer.append(P, [commit("g1")]))
    monkeypatch.setattr(fsutil, "fdatasync", CountingSync(fail=True))
    offset = writer.append(P, [commit("g1", offset=2)])
    with pytest.raises(LogWriteError):
        await writer.wait_durable(P, offset)
    with pytest.raises(LogWriteError):
        writer.append(P, [commit("g1", offset=3)])  # the log failed: no writes until reopened
    monkeypatch.undo()
    await writer.wait_durable(Q, writer.append(Q, [commit("g3")]))  # other partitions still write
    writer.close()


async def test_failing_write_raises_from_append(tmp_path, monkeypatch, autojump_clock):
    writer = make_writer(tmp_path)
    await writer.wait_durable(P, writer.append(P, [commit("g1")]))

    def enospc(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsutil, "write_all", enospc)
    with pytest.raises(LogWriteError):
        writer.append(P, [commit("g1", offset=2)])
    monkeypatch.undo()
    await writer.wait_durable(Q, writer.append(Q, [commit("g3")]))
    writer.close()


async def test_close_writes_the_clean_shutdown_marker(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    await writer.wait_durable(P, writer.append(P, [commit("g1")]))
    writer.close()
    assert (tmp_path / f"__consumer_offsets-{P}" / ".kafka_cleanshutdown").exists()
    with pytest.raises(LogWriteError):
        writer.append(P, [commit("g1")])


async def test_segments_roll_at_offsets_topic_segment_bytes(tmp_path, autojump_clock):
    writer = make_writer(tmp_path, **{"offsets.topic.segment.bytes": "2000"})
    for i in range(50):
        await writer.wait_durable(P, writer.append(P, [commit("g1", offset=i)]))
    assert len(writer.log(P).segments) > 1
    assert [r.offset for batch in batches(writer, P) for r in batch] == list(range(50))
    writer.close()


async def test_reopen_recovers_and_abandons_the_old_log(tmp_path, autojump_clock):
    writer = make_writer(tmp_path)
    await writer.wait_durable(P, writer.append(P, [commit("g1", offset=1)]))
    old = writer.log(P)
    assert [[r.offset for r in b] for _, b in [(0, x) for x in batches(writer, P)]] == [[1]]
    [(header, data)] = list(writer.iter_batches(P))  # reopens
    assert writer.log(P) is not old
    assert [decode_record(r.key, r.value) for r in iter_records(data)] == [commit("g1", offset=1)]
    writer.close()
