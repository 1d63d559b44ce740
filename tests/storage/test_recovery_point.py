"""Recovery after kill -9 costs the data after the recovery point: a checkpoint (or flush) records
it with the data and index entries below it fsynced; recovery resumes the active segment's scan
at the last index entry below it and ends with the same indexes and facts as a full rescan."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storage.batch import Record
from storage.dump import check
from storage.log import Log
from storage.recovery import RECOVERY_POINT_FILE
from tests.storage.helpers import FakeClock, open_log, read_all

CFG = dict(segment_bytes=1 << 20, index_interval_bytes=150)


def append(log: Log, i: int, size: int = 40, ts: int | None = None) -> None:
    log.append_records([Record(key=b"k%d" % i, value=b"v" * size)], timestamp_ms=ts)


def state(log: Log) -> list[tuple]:
    """Everything recovery rebuilds, per segment."""
    segs = log.segments
    return [
        (
            s.base_offset,
            list(s.offset_index.keys),
            list(s.offset_index.values),
            list(s.time_index.keys),
            list(s.time_index.values),
            s.next_offset,
            s.max_timestamp,
            s._offset_of_max_timestamp,
            s.first_batch_timestamp,
        )
        for s in segs
    ] + [segs[-1].bytes_since_last_index_entry]  # (what the next append's index rule uses)


def full_rescan_twin(path, twin):
    """The same crashed directory without a recovery point: everything is rescanned."""
    shutil.copytree(path, twin)
    (twin / RECOVERY_POINT_FILE).unlink(missing_ok=True)
    return open_log(twin, FakeClock(), **CFG)


def test_a_crash_after_a_checkpoint_rescans_only_what_follows(tmp_path):
    path = tmp_path / "p"
    log = open_log(path, FakeClock(), **CFG)
    for i in range(300):
        append(log, i)
    log.flush()  # = checkpoint: data, indexes and the recovery point
    before = log.active_segment.size
    for i in range(300, 320):
        append(log, i)
    after = log.active_segment.size - before
    log.abandon()
    again = open_log(path, FakeClock(), **CFG)
    assert not again.load_result.clean_shutdown
    assert 0 < again.load_result.rescanned_bytes <= after + 150 + 2 * 120
    twin = full_rescan_twin(path, tmp_path / "twin")
    assert twin.load_result.rescanned_bytes == before + after
    assert state(again) == state(twin) and read_all(again) == read_all(twin)
    for log_ in (again, twin):  # and both go on identically
        for i in range(320, 400):
            append(log_, i)
    assert state(again) == state(twin)
    again.close()
    assert check(path) == []


@pytest.mark.parametrize("damage", ["unsorted", "entry not in its batch"])
def test_a_damaged_index_below_the_recovery_point_is_not_trusted(tmp_path, damage):
    path = tmp_path / "p"
    log = open_log(path, FakeClock(), **CFG)
    for i in range(200):
        append(log, i)
    log.flush()
    log.abandon()
    index = path / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    last_rel = int.from_bytes(data[-8:-4], "big")
    if damage == "unsorted":  # the last entry goes below the one before: resume before it
        data[-8:-4] = (last_rel - 64).to_bytes(4, "big")
    else:  # its batch does not hold the entry's offset: nothing is trusted
        data[-8:-4] = (last_rel + 1).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    again = open_log(path, FakeClock(), **CFG)
    rescanned = again.load_result.rescanned_bytes
    if damage == "unsorted":
        assert 0 < rescanned < 1000
    else:
        assert rescanned == again.active_segment.size
    assert state(again) == state(full_rescan_twin(path, tmp_path / "twin"))


def test_a_recovery_point_inside_an_older_segment_resumes_there(tmp_path):
    path = tmp_path / "p"
    log = open_log(path, FakeClock(), segment_bytes=4000, index_interval_bytes=150)
    for i in range(200):
        append(log, i)
    assert len(log.segments) > 3
    second = log.segments[1]
    log.abandon()
    inside = (second.base_offset + second.next_offset) // 2
    (path / RECOVERY_POINT_FILE).write_text(f"0\n1\np 0 {inside}\n")
    again = open_log(path, FakeClock(), segment_bytes=4000, index_interval_bytes=150)
    assert again.load_result.rescanned_bytes < sum(s.size for s in again.segments[1:])
    twin = full_rescan_twin(path, tmp_path / "twin")
    assert state(again) == state(twin) and again.log_end_offset == 200


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 400), min_size=1, max_size=60),
    timestamps=st.lists(st.integers(0, 50), min_size=60, max_size=60),
    flush_at=st.integers(0, 60),
    cut=st.integers(0, 30),
)
def test_resuming_rebuilds_what_a_full_rescan_rebuilds(tmp_path_factory, sizes, timestamps, flush_at, cut):
    root = tmp_path_factory.mktemp("resume")
    path = root / "p"
    log = open_log(path, FakeClock(), **CFG)
    for i, size in enumerate(sizes):
        if i == flush_at:
            log.flush()
        append(log, i, size, ts=1000 + timestamps[i])  # timestamps go up and down
    log.abandon()
    seg = path / "00000000000000000000.log"
    os.truncate(seg, max(0, os.path.getsize(seg) - cut))  # and maybe a torn tail
    again = open_log(path, FakeClock(), **CFG)
    twin = full_rescan_twin(path, root / "twin")
    assert state(again) == state(twin)
    assert read_all(again) == read_all(twin)
    assert again.offset_for_timestamp(1025) == twin.offset_for_timestamp(1025)
    shutil.rmtree(root)
