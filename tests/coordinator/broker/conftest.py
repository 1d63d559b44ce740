"""Helpers for data-path unit tests: a DataPath on a temp dir, no sockets, an injected clock.

`log.flush.mode=interval` makes `wait_durable` return without a worker thread, so tests under
MockClock(autojump_threshold=0) never see virtual time jump while an fsync runs.
"""

from __future__ import annotations

from pathlib import Path

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import TopicRegistry
from coordinator.config import Config
from coordinator.runtime.clock import FakeClock
from storage.batch import Record, encode_batch


def make_data(tmp_path: Path, clock=None, topics: dict[str, int] | None = None, **settings) -> DataPath:
    config = Config(
        {
            "data.dir": str(tmp_path),
            "log.flush.mode": "interval",
            **{k.replace("_", "."): v for k, v in settings.items()},
        }
    )
    registry = TopicRegistry(tmp_path)
    registry.load()
    for name, partitions in (topics or {}).items():
        registry.ensure(name, partitions)
    data = DataPath(config, registry, clock or FakeClock(1_000_000))
    data.open_all()
    return data


def batch(
    *values: bytes,
    ts: int = 1000,
    producer_id: int = -1,
    epoch: int = -1,
    seq: int = -1,
    compression: int = 0,
    transactional: bool = False,
) -> bytes:
    """A producer's batch (base offset 0), one record per value, timestamps ts, ts+1, ..."""
    records = [Record(None, ts + i, b"k" + v, v) for i, v in enumerate(values)]
    return encode_batch(
        0,
        records,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=seq,
        compression=compression,
        transactional=transactional,
    )
