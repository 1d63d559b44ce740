"""A crash at each step of the cleaner's swap (FORMAT.md "Swap"): stop after writing the
`.cleaned` files, after renaming them to `.swap`, after renaming the old segments to
`.deleted`, and before deleting the `.deleted` files. The process "dies" (the Log is
abandoned without close); reopening must give either all the old data or all the new,
never a mix, and never lose a key's latest value."""

from __future__ import annotations

import os
import shutil

import pytest

from storage.cleaner import Cleaner
from storage.recovery import DELETED, SWAP
from storage.segment import LogSegment
from tests.storage.helpers import FakeClock
from tests.storage.test_cleaner_helpers import (
    check_compacted,
    check_structure,
    live_state,
    open_compacted,
    put,
    records,
)


class Crash(BaseException):
    """The process stops here (BaseException: nothing on the way may swallow it)."""


def build(path, clock):
    log = open_compacted(path, clock)
    for r in range(4):
        for k in range(12):
            put(log, b"key-%d" % k, b"value-%d-%d" % (k, r))
    put(log, b"key-5", None)
    return log


def files(path, suffix):
    return sorted(n for n in os.listdir(path) if n.endswith(suffix))


# (name, method to intercept, which call crashes, expected outcome after reopen)
STEPS = [
    ("after .cleaned written", "change_suffix", lambda seg, s: s == SWAP, "old"),
    ("after .swap renamed", "change_suffix", lambda seg, s: s == DELETED, "new"),
    ("after .deleted renamed", "change_suffix", lambda seg, s: s == "", "new"),
    ("before .deleted removed", "delete", lambda seg, *a: seg.suffix == DELETED, "new"),
]


@pytest.mark.parametrize("name,method,crashes,outcome", STEPS, ids=[s[0] for s in STEPS])
@pytest.mark.parametrize("crash_group", [0, 1])
def test_crash_at_each_swap_step(tmp_path, monkeypatch, name, method, crashes, outcome, crash_group):
    clock = FakeClock()
    live, ref = tmp_path / "live", tmp_path / "ref"
    log = build(live, clock)
    log.close()
    shutil.copytree(live, ref)
    # The reference: the same round without a crash (the cleaner is deterministic).
    ref_log = open_compacted(ref, clock)
    pre = records(ref_log)
    Cleaner().clean(ref_log, force=True)
    new_rows = records(ref_log)
    ref_log.close()

    log = open_compacted(live, clock)
    round_ = Cleaner().start(log, force=True)
    groups = round_.groups()
    assert len(groups) >= 2
    for g in groups[:crash_group]:
        round_.clean_group(g)  # earlier groups complete before the crash
    done_rows = records(log)
    original = getattr(LogSegment, method)

    def crashing(seg, *args):
        if crashes(seg, *args):
            raise Crash(name)
        return original(seg, *args)

    monkeypatch.setattr(LogSegment, method, crashing)
    with pytest.raises(Crash):
        round_.clean_group(groups[crash_group])
    monkeypatch.setattr(LogSegment, method, original)
    seen = {s: files(live, s) for s in (".cleaned", ".swap", ".deleted")}
    assert any(seen.values()), f"the crash at {name!r} left no swap files: {seen}"
    log.abandon()

    reopened = open_compacted(live, clock)
    rows = records(reopened)
    assert not files(live, ".cleaned") and not files(live, ".swap") and not files(live, ".deleted")
    check_structure(reopened)
    assert live_state(rows) == live_state(pre)
    check_compacted(pre, rows, 0)
    crashed = groups[crash_group]
    lo, hi = crashed[0].base_offset, crashed[-1].next_offset
    in_group = [r for r in rows if lo <= r[0] < hi]
    if outcome == "old":
        assert in_group == [r for r in done_rows if lo <= r[0] < hi]
    else:
        assert in_group == [r for r in new_rows if lo <= r[0] < hi]
    # The log still works: append, clean to the end, reopen.
    put(reopened, b"key-1", b"after")
    Cleaner().clean(reopened, force=True)
    final = records(reopened)
    reopened.close()
    assert records(open_compacted(live, clock)) == final
    assert live_state(final)[b"key-1"] == b"after"


def test_io_error_during_swap_fails_the_log_and_reopen_recovers(tmp_path, monkeypatch):
    clock = FakeClock()
    log = build(tmp_path, clock)
    pre = records(log)
    from storage import fsutil

    calls = {"n": 0}
    real = fsutil.fsync_dir

    def failing(path):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(5, "EIO on directory fsync")
        return real(path)

    monkeypatch.setattr(fsutil, "fsync_dir", failing)
    with pytest.raises(OSError):
        Cleaner().clean(log, force=True)
    monkeypatch.setattr(fsutil, "fsync_dir", real)
    with pytest.raises(Exception, match="unusable"):
        put(log, b"x", b"y")
    log.abandon()
    rows = records(open_compacted(tmp_path, clock))
    assert live_state(rows) == live_state(pre)
