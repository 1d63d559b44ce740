"""A user partition whose log failed on an I/O error (a full disk) answers KAFKA_STORAGE_ERROR,
then serves again by itself once the fault clears: DataPath.reopen_failed, with backoff."""

from __future__ import annotations

import errno

from protocol.errors import ErrorCode
from storage import fsutil
from storage.batch import iter_records
from tests.coordinator.broker.conftest import batch, make_data


def values(part) -> list[bytes]:
    return [r.value for _, raw in part.log.iter_batches() for r in iter_records(raw)]


async def test_a_full_disk_fails_the_partition_until_it_clears(tmp_path, monkeypatch):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    assert (await part.append(batch(b"a", b"b"), 1 << 20)).error == ErrorCode.NONE

    def full(fd, data_):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(fsutil.os, "write", full)
        result = await part.append(batch(b"c"), 1 << 20)
        assert result.error == ErrorCode.KAFKA_STORAGE_ERROR and "No space" in result.message
        assert part.log.failed
        # Recovery needs no space here, so the reopen works; appends still fail.
        assert data.reopen_failed(1_000) == [("t", 0)]
        part = data.partition("t", 0)
        assert values(part) == [b"a", b"b"]
        assert (await part.append(batch(b"d"), 1 << 20)).error == ErrorCode.KAFKA_STORAGE_ERROR
        assert data.reopen_failed(500) == []  # waits its backoff
    assert data.reopen_failed(500) == [("t", 0)]
    again = data.partition("t", 0)
    assert again is not part and not again.log.failed
    assert values(again) == [b"a", b"b"]  # acknowledged data kept, the failed appends gone
    assert (await again.append(batch(b"e"), 1 << 20)).error == ErrorCode.NONE
    assert values(again) == [b"a", b"b", b"e"]
    data.close()
    assert (tmp_path / "t-0" / ".kafka_cleanshutdown").exists()


async def test_a_shared_log_manager_serves_both_owners(tmp_path):
    from coordinator.broker.data_path import DataPath
    from coordinator.broker.topics import TopicRegistry
    from coordinator.config import Config
    from coordinator.runtime.clock import FakeClock
    from storage.log import LogConfig
    from storage.log_manager import LogManager

    clock = FakeClock(1_000_000)
    logs = LogManager(tmp_path, clock)
    internal = logs.open("__consumer_offsets", 0, LogConfig(cleanup_policy="compact"))
    registry = TopicRegistry(tmp_path)
    registry.load()
    registry.ensure("t", 2)
    data = DataPath(Config({"data.dir": str(tmp_path), "log.flush.mode": "interval"}), registry, clock, logs=logs)
    data.open_all()
    assert set(logs.logs()) == {("__consumer_offsets", 0), ("t", 0), ("t", 1)}
    assert (await data.partition("t", 1).append(batch(b"x"), 1 << 20)).error == ErrorCode.NONE
    data.close()  # its own logs only
    assert set(logs.logs()) == {("__consumer_offsets", 0)} and not internal.closed
    assert (tmp_path / "t-1" / ".kafka_cleanshutdown").exists()
    logs.close()
