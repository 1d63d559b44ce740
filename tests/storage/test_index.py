"""`.index` / `.timeindex`: lookups, preallocation and trim, reopen, sanity checks."""

from __future__ import annotations

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


def test_preallocate_then_trim_and_reopen(tmp_path):
    path = tmp_path / "x.index"
    idx = OffsetIndex(str(path), 0, 1000)
    idx.preallocate()
    assert path.stat().st_size == 1000 // 8 * 8
    for i in range(1, 6):
        idx.append(i * 10, i * 100)
    idx.close()
    assert path.stat().st_size == 40
    again = OffsetIndex(str(path), 0, 1000)
    assert again.problem(10_000) is None and len(again) == 5 and again.lookup(35) == (30, 300)


def test_untrimmed_preallocated_index_fails_the_sanity_check(tmp_path):
    path = tmp_path / "x.index"
    idx = OffsetIndex(str(path), 0, 800)
    idx.preallocate()
    idx.append(5, 100)
    idx.close_untrimmed()  # a crash: the zero-filled tail is still there
    assert "untrimmed: 99 zero-filled" in OffsetIndex(str(path), 0, 800).problem(10_000)


@pytest.mark.parametrize("content, fragment", [
    (b"\x00\x00\x00\x05\x00\x00\x00\x10\x00\x00\x00", "multiple of 8"),
    (b"\x00\x00\x00\x05\x00\x00\x00\x10\x00\x00\x00\x03\x00\x00\x00\x20", "does not increase"),
    (b"\x00\x00\x00\x05\x00\x01\x00\x00", "outside the log"),
])
def test_offset_index_problems_are_named(tmp_path, content, fragment):
    path = tmp_path / "x.index"
    path.write_bytes(content)
    assert fragment in OffsetIndex(str(path), 0, 800).problem(1000)


def test_truncate_to_drops_entries_at_and_after_the_offset(tmp_path):
    idx = OffsetIndex(str(tmp_path / "x.index"), 0, 800)
    idx.preallocate()
    for i in range(1, 10):
        idx.append(i * 10, i * 100)
    idx.truncate_to(50)
    assert idx.last_entry() == (40, 400) and len(idx) == 4
    idx.append(45, 450)  # appending continues after the cut


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
