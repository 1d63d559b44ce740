"""DeleteRecords' log start offset (log_start.py, Log.increment_log_start_offset): one test per
failure mode, on real files with real fsyncs."""

from __future__ import annotations

import errno
import os

import pytest

import storage.fsutil
from storage.log import OffsetOutOfRangeError
from storage.log_start import LOG_START_FILE, read_log_start
from tests.storage.helpers import FakeClock, fill, open_log, read_all, rec


def _segments(path) -> list[int]:
    return sorted(int(name[:20]) for name in os.listdir(path) if name.endswith(".log"))


def test_moving_the_start_refuses_reads_below_it_and_deletes_whole_segments_below(tmp_path):
    log = open_log(tmp_path / "t-0")
    fill(log, 60, per_batch=3, size=60)  # several 4 KiB segments
    bases = log.segments
    assert len(bases) >= 3
    target = bases[2].base_offset + 1  # inside the third segment
    deleted = log.increment_log_start_offset(target)
    assert deleted == 2 and log.segments[0].base_offset == bases[2].base_offset
    assert log.log_start_offset == target
    assert read_all(log)[0][0] == target
    with pytest.raises(OffsetOutOfRangeError):
        log.read(target - 1, 1000)
    assert log.read(target, 1000)  # the batch holding it, whole
    assert log.offset_for_timestamp(0) == target
    assert _segments(tmp_path / "t-0") == [s.base_offset for s in log.segments]
    assert read_log_start(str(tmp_path / "t-0")) == target
    log.close()


def test_an_offset_at_or_below_the_start_changes_nothing_and_past_the_end_is_refused(tmp_path):
    log = open_log(tmp_path / "t-0")
    fill(log, 4)
    log.increment_log_start_offset(5)
    assert log.increment_log_start_offset(5) == 0 and log.increment_log_start_offset(2) == 0
    assert log.log_start_offset == 5
    with pytest.raises(OffsetOutOfRangeError):
        log.increment_log_start_offset(log.log_end_offset + 1)
    assert log.increment_log_start_offset(log.log_end_offset) == 0  # everything: the active segment stays
    assert log.log_start_offset == log.log_end_offset == 12 and read_all(log) == []
    assert log.append_records([rec(99)]) == 12 and read_all(log)[0][0] == 12
    log.close()


def test_the_start_survives_kill_9(tmp_path):
    path = tmp_path / "t-0"
    log = open_log(path)
    fill(log, 10)
    log.increment_log_start_offset(7)
    log.abandon()  # no close, no marker: a crash right after DeleteRecords answered
    reopened = open_log(path)
    assert reopened.log_start_offset == 7 and read_all(reopened)[0][0] == 7
    reopened.close()
    assert open_log(path).log_start_offset == 7  # and after a clean close


def test_a_crash_between_the_checkpoint_and_the_segment_deletion_is_finished_by_retention(tmp_path, monkeypatch):
    path = tmp_path / "t-0"
    log = open_log(path, retention_ms=-1)
    fill(log, 60, per_batch=3, size=60)
    target = log.segments[2].base_offset
    monkeypatch.setattr(type(log), "delete_segments_before", lambda self, offset: 0)  # "crash" before it
    log.increment_log_start_offset(target)
    log.abandon()
    monkeypatch.undo()
    reopened = open_log(path, retention_ms=-1)
    assert reopened.log_start_offset == target and reopened.segments[0].base_offset < target
    assert reopened.apply_retention(FakeClock().time_ms()) == 2
    assert reopened.segments[0].base_offset == target
    reopened.close()


def test_a_failed_checkpoint_write_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "t-0"
    log = open_log(path)
    fill(log, 10)

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage.fsutil.os, "write", full)
    with pytest.raises(OSError):
        log.increment_log_start_offset(4)
    monkeypatch.undo()
    assert log.log_start_offset == 0 and not (path / LOG_START_FILE).exists()
    assert not [n for n in os.listdir(path) if n.endswith(".tmp")]
    assert log.increment_log_start_offset(4) == 0 and log.log_start_offset == 4  # usable once space is back
    log.close()


@pytest.mark.parametrize("text", ["", "0\n1\n", "garbage", "0\n1\nt 0 -5\n", "7\n1\nt 0 5\n", b"\xff\xfe"])
def test_an_unreadable_checkpoint_is_ignored(tmp_path, text):
    path = tmp_path / "t-0"
    log = open_log(path)
    fill(log, 4)
    log.close()
    data = text if isinstance(text, bytes) else text.encode()
    (path / LOG_START_FILE).write_bytes(data)
    reopened = open_log(path)
    assert reopened.log_start_offset == 0 and len(read_all(reopened)) == 12
    reopened.close()


def test_a_checkpoint_past_the_log_end_starts_the_log_afresh_there(tmp_path):
    """Data acknowledged without fsync (log.flush.mode=interval) lost in a crash after DeleteRecords
    checkpointed its start: Kafka's LogLoader truncates fully and starts at the checkpoint."""
    path = tmp_path / "t-0"
    log = open_log(path)
    fill(log, 4)  # offsets 0..11
    log.close()
    (path / LOG_START_FILE).write_text("0\n1\nt 0 40\n")
    reopened = open_log(path)
    assert reopened.log_start_offset == reopened.log_end_offset == 40
    assert _segments(path) == [40] and read_all(reopened) == []
    fill(reopened, 1)
    assert read_all(reopened)[0][0] == 40
    reopened.close()
    again = open_log(path)
    assert again.log_start_offset == 40 and again.log_end_offset == 43
    again.close()
