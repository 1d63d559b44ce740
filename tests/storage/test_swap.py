"""Log.replace_segments: the crash-safe .cleaned -> .swap -> final rename sequence.

A crash is simulated at every rename and directory fsync of the sequence (the call raises, the
Log is dropped without close). After reopening, the log must hold either the old segments or
the new ones, never a mix, and the key -> latest value state must be unchanged either way.
"""

from __future__ import annotations

import os

import pytest

from storage import fsutil
from storage.batch import Record, iter_records
from storage.log import Log, LogFailedError
from tests.storage.helpers import open_log, read_all, rec


def latest_by_key(rows):
    state = {}
    for _, key, value in rows:
        state[key] = value
    return state


def build_log(path) -> Log:
    log = open_log(path, segment_bytes=600)
    for round_ in range(3):  # the same 12 keys rewritten three times
        for i in range(12):
            log.append_records([Record(key=b"k%d" % i, value=b"v%d-round%d" % (i, round_))])
    assert len(log.segments) >= 4
    return log


def compact_into_cleaned(log: Log, old):
    """A toy cleaner: keep each batch whose key is not rewritten later, plus each old
    segment's last batch (so every old base stays covered, as replace_segments requires)."""
    last_offset_of = {}
    for seg in log.segments:
        for _, _h, data in seg.iter_batches():
            for r in iter_records(data):
                last_offset_of[r.key] = r.offset
    new = log.new_cleaned_segment(old[0].base_offset)
    for seg in old:
        batches = list(seg.iter_batches())
        for i, (_, h, data) in enumerate(batches):
            (r,) = list(iter_records(data))
            if last_offset_of[r.key] == r.offset or i == len(batches) - 1:
                new.append(data, h)
    return new


def test_replace_segments_swaps_and_reads_continue(tmp_path):
    log = build_log(tmp_path)
    before = read_all(log)
    old = log.non_active_segments()[:3]
    new = compact_into_cleaned(log, old)
    log.replace_segments(old, [new])
    after = read_all(log)
    assert latest_by_key(after) == latest_by_key(before) and len(after) < len(before)
    assert not [p for p in os.listdir(tmp_path) if p.endswith((".cleaned", ".swap", ".deleted"))]
    log.append_records([rec(99)])  # appends continue after the swap
    final = read_all(log)
    log.close()
    assert read_all(open_log(tmp_path, segment_bytes=600)) == final


def test_replace_segments_refuses_uncovered_old_segments(tmp_path):
    log = build_log(tmp_path)
    old = log.non_active_segments()[:2]
    new = log.new_cleaned_segment(old[0].base_offset)
    for _, h, data in list(old[0].iter_batches())[:1]:
        new.append(data, h)  # covers only the first old segment's first batch
    with pytest.raises(ValueError, match="not covered"):
        log.replace_segments(old, [new])
    with pytest.raises(ValueError, match="active"):
        log.replace_segments([log.active_segment], [new])


class CrashAt:
    """Counts os.rename / os.replace / fsync_dir calls and raises at the n-th."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    def wrap(self, fn):
        def wrapped(*args, **kwargs):
            self.calls += 1
            if self.calls == self.n:
                raise RuntimeError("simulated crash")
            return fn(*args, **kwargs)

        return wrapped


def count_steps(tmp_path) -> int:
    log = build_log(tmp_path / "count")
    old = log.non_active_segments()[:3]
    new = compact_into_cleaned(log, old)
    counter = CrashAt(10**9)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "rename", counter.wrap(os.rename))
        mp.setattr(fsutil, "fsync_dir", counter.wrap(fsutil.fsync_dir))
        log.replace_segments(old, [new])
    return counter.calls


def test_crash_at_every_step_of_the_swap_recovers_old_or_new(tmp_path):
    steps = count_steps(tmp_path)
    assert steps >= 10  # 3 files x (cleaned->swap, old->deleted x3 segs, swap->final) + dir fsyncs
    outcomes = set()
    for n in range(1, steps + 1):
        work = tmp_path / f"crash{n}"
        log = build_log(work)
        before = read_all(log)
        old = log.non_active_segments()[:3]
        new = compact_into_cleaned(log, old)
        crash = CrashAt(n)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "rename", crash.wrap(os.rename))
            mp.setattr(fsutil, "fsync_dir", crash.wrap(fsutil.fsync_dir))
            with pytest.raises(RuntimeError, match="simulated crash"):
                log.replace_segments(old, [new])
        log.abandon()
        again = open_log(work, segment_bytes=600)
        after = read_all(again)
        assert latest_by_key(after) == latest_by_key(before), n
        assert after == before or len(after) < len(before), n
        outcomes.add("old" if after == before else "new")
        leftovers = [p for p in os.listdir(work) if p.endswith((".cleaned", ".swap", ".deleted"))]
        assert leftovers == [], (n, leftovers)
        # no stray copies: every offset appears once
        offsets = [o for o, _, _ in after]
        assert offsets == sorted(set(offsets)), n
    assert outcomes == {"old", "new"}


def test_iteration_in_progress_survives_a_replacement(tmp_path):
    log = build_log(tmp_path)
    before = read_all(log)
    it = log.iter_records()
    seen = [next(it) for _ in range(3)]
    old = log.non_active_segments()[:3]
    log.replace_segments(old, [compact_into_cleaned(log, old)])
    rest = list(it)
    offsets = [r.offset for r in seen + rest]
    assert offsets == sorted(set(offsets))  # no repeats, no reordering
    after = {(r.offset, r.key, r.value) for r in seen + rest}
    assert after <= set(before) and latest_by_key(sorted(after)) == latest_by_key(before)


def test_io_error_during_the_swap_fails_the_log_until_reopened(tmp_path, monkeypatch):
    log = build_log(tmp_path)
    before = read_all(log)
    old = log.non_active_segments()[:3]
    new = compact_into_cleaned(log, old)
    real_rename = os.rename
    calls = []

    def flaky_rename(src, dst):
        calls.append(dst)
        if len(calls) == 5:
            raise OSError(5, "Input/output error")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", flaky_rename)
    with pytest.raises(OSError):
        log.replace_segments(old, [new])
    monkeypatch.undo()
    with pytest.raises(LogFailedError):
        log.append_records([rec(1)])
    log.close()
    after = read_all(open_log(tmp_path, segment_bytes=600))
    assert latest_by_key(after) == latest_by_key(before)
