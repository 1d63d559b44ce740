"""Shared helpers for storage tests: a settable clock and small log builders."""

from __future__ import annotations

from pathlib import Path

from storage.batch import Record
from storage.log import Log, LogConfig


class FakeClock:
    """Wall clock the test moves by hand."""

    def __init__(self, now_ms: int = 1_700_000_000_000) -> None:
        self.now_ms = now_ms

    def time_ms(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


def small_config(**overrides) -> LogConfig:
    """Small segments and a dense index so a few KiB exercise rolls and index lookups."""
    fields = dict(segment_bytes=4096, index_interval_bytes=256, segment_index_bytes=4096)
    fields.update(overrides)
    return LogConfig(**fields)


def open_log(path: Path, clock: FakeClock | None = None, **overrides) -> Log:
    return Log.open(path, small_config(**overrides), clock or FakeClock())


def rec(i: int, *, value: bytes | None = b"", size: int = 20) -> Record:
    """Record number i with a value of `size` bytes (or the given value)."""
    return Record(key=b"key-%d" % i, value=(b"%d:" % i).ljust(size, b"x") if value == b"" else value)


def fill(log: Log, batches: int, per_batch: int = 3, size: int = 20) -> list[tuple[int, Record]]:
    """Append `batches` batches; return [(offset, record)] as the model expects them."""
    out = []
    n = 0
    for _ in range(batches):
        records = [rec(n + j, size=size) for j in range(per_batch)]
        base = log.append_records(records)
        out.extend((base + j, r) for j, r in enumerate(records))
        n += per_batch
    return out


def read_all(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for r in log.iter_records()]
