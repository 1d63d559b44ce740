"""`.index` / `.timeindex`: lookups, files at their real size, reading preallocated files by their
real end, deferred writes of a rebuild, reopen, sanity checks."""

from __future__ import annotations

import os
import random

import pytest

from storage.index import OffsetIndex, TimeIndex


def test_offset_index_random_lookups_match_a_model(tmp_path):
    idx = OffsetIndex(str(tmp_path / "x.index"), 1000, 1 << 16)
    rng = random.Random(7)
    entries, off, pos = [], 1000, 0
    for _ in range(500):
        off += rng.randint(1, 50)
        pos += rng.randint(1, 5000)
        idx.append(off, pos)
        entries.append((off, pos))
    for _ in range(2000):
        target = rng.randint(900, off + 100)
        below = [e for e in entries if e[0] <= target]
        assert idx.lookup(target) == (below[-1] if below else (1000, 0))


def test_lookup_extreme_cases(tmp_path):
    idx = OffsetIndex(str(tmp_path / "x.index"), 50, 1 << 10)
    assert idx.lookup(0) == (50, 0) and idx.lookup(10**9) == (50, 0)
    idx.append(60, 100)
    assert idx.lookup(59) == (50, 0) and idx.lookup(60) == (60, 100) and idx.lookup(10**9) == (60, 100)
    with pytest.raises(ValueError):
        idx.append(60, 200)  # offsets must strictly increase


def test_files_hold_exactly_their_entries_and_reopen(tmp_path):
    path = tmp_path / "x.index"
    idx = OffsetIndex(str(path), 0, 1000)
    for i in range(1, 6):
        idx.append(i * 10, i * 100)
        assert path.stat().st_size == 8 * i  # no preallocation
    idx.close_untrimmed()  # a crash leaves nothing to trim
    again = OffsetIndex(str(path), 0, 1000)
    assert again.problem(10_000) is None and len(again) == 5 and again.lookup(35) == (30, 300)


@pytest.mark.parametrize("used", [0, 1, 2, 77, 124])
def test_a_preallocated_file_is_read_up_to_its_real_end(tmp_path, monkeypatch, used):
    """Kafka preallocates the active segment's index and zero-fills it; after a crash the
    file is that size. Its end is found by a binary search, not by reading it whole."""
    path = tmp_path / "x.index"
    entries = b"".join((i + 1).to_bytes(4, "big") + (10 * i + 5).to_bytes(4, "big") for i in range(used))
    path.write_bytes(entries + bytes(8 * (125 - used)))
    reads = []
    real_pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: reads.append(n) or real_pread(fd, n, at))
    idx = OffsetIndex(str(path), 0, 1000)
    assert len(idx) == used and idx.zero_tail_entries == 125 - used
    assert sum(reads) <= 8 * used + 8 * 10  # the entries plus a few probes
    if used:
        assert "untrimmed" in idx.problem(10_000)
        assert idx.last_entry() == (used, 10 * (used - 1) + 5)


def test_a_lone_zero_entry_is_an_entry(tmp_path):
    path = tmp_path / "x.index"
    path.write_bytes(bytes(8))
    assert len(OffsetIndex(str(path), 0, 1000)) == 1


def test_a_rebuild_writes_its_entries_at_once_on_persist(tmp_path):
    path = tmp_path / "x.index"
    idx = OffsetIndex(str(path), 0, 1000)
    idx.append(1, 10)
    idx.reset()
    for i in range(1, 4):
        idx.append(i * 10, i * 100)
    assert path.stat().st_size == 0  # nothing written until persist
    idx.persist()
    assert path.stat().st_size == 24
    idx.append(40, 400)  # written through again
    assert path.stat().st_size == 32
    assert OffsetIndex(str(path), 0, 1000).lookup(45) == (40, 400)


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"\x00\x00\x00\x05\x00\x00\x00\x10\x00\x00\x00", "multiple of 8"),
        (b"\x00\x00\x00\x05\x00\x00\x00\x10\x00\x00\x00\x03\x00\x00\x00\x20", "does not increase"),
        (b"\x00\x00\x00\x05\x00\x01\x00\x00", "outside the log"),
    ],
)
def test_offset_index_problems_are_named(tmp_path, content, fragment):
    path = tmp_path / "x.index"
    path.write_bytes(content)
    assert fragment in OffsetIndex(str(path), 0, 800).problem(1000)


def test_truncate_to_drops_entries_at_and_after_the_offset(tmp_path):
    idx = OffsetIndex(str(tmp_path / "x.index"), 0, 800)
    for i in range(1, 10):
        idx.append(i * 10, i * 100)
    idx.truncate_to(50)
    assert idx.last_entry() == (40, 400) and len(idx) == 4
    idx.append(45, 450)  # appending continues after the cut
    assert (tmp_path / "x.index").stat().st_size == 40


def test_time_index_keeps_only_growing_timestamps(tmp_path):
    tidx = TimeIndex(str(tmp_path / "x.timeindex"), 100, 1200)
    tidx.maybe_append(1000, 105)
    tidx.maybe_append(900, 110)  # not larger: ignored
    tidx.maybe_append(1500, 120)
    assert len(tidx) == 2
    assert tidx.lookup(999) == (-1, 100)
    assert tidx.lookup(1000) == (1000, 105) and tidx.lookup(1499) == (1000, 105)
    assert tidx.lookup(10**12) == (1500, 120)
    assert tidx.problem(121) is None and "outside" in tidx.problem(110)
    tidx.close()
    assert (tmp_path / "x.timeindex").stat().st_size == 24


def test_full_index_reports_full(tmp_path):
    idx = OffsetIndex(str(tmp_path / "x.index"), 0, 16)
    idx.append(1, 1)
    idx.append(2, 2)
    assert idx.is_full
    with pytest.raises(IndexError):
        idx.append(3, 3)
