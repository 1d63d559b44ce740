"""LogConfig.preallocate_bytes: the active `.log` extended ahead of its appends (real files,
real fallocate and fsync). The zeros past the data never show: reads stop at the data, a roll
or a clean close cuts them off, recovery after a crash truncates them, and a durable append
survives a crash like any other."""

from __future__ import annotations

import errno
import logging
import os

from storage import fsutil
from storage.batch import Record
from storage.log_check import check
from tests.storage.helpers import fill, open_log, read_all

CHUNK = 8192
LOG0 = "00000000000000000000.log"


def expected(model):
    return [(o, r.key, r.value) for o, r in model]


def test_the_active_file_runs_ahead_of_its_data_and_reads_stop_at_the_data(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    model = fill(log, 5)
    seg = log.active_segment
    assert os.path.getsize(tmp_path / LOG0) == CHUNK > seg.size > 0
    assert read_all(log) == expected(model)
    assert log.read(0, 1 << 20) and len(seg.read(0, 1 << 20)) == seg.size  # no zeros in a fetch


def test_appends_past_the_reservation_extend_it_again(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    model = fill(log, 100, per_batch=3, size=40)  # ~18 KiB: three reservations
    size = log.active_segment.size
    assert size > 2 * CHUNK and os.path.getsize(tmp_path / LOG0) == -(-size // CHUNK) * CHUNK
    big = Record(key=b"big", value=b"b" * (3 * CHUNK))  # one batch larger than a reservation
    model.append((log.append_records([big]), big))
    assert os.path.getsize(tmp_path / LOG0) >= log.active_segment.size
    assert read_all(log) == expected(model)


def test_a_clean_close_cuts_the_zeros_off_and_the_reopened_log_appends_after_its_data(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    model = fill(log, 4)
    size = log.active_segment.size
    log.close()
    assert os.path.getsize(tmp_path / LOG0) == size
    again = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    assert again.load_result.clean_shutdown and again.load_result.truncated_bytes == 0
    model += fill(again, 2)
    model = [(o, r) for o, r in model]
    assert [o for o, _ in model] == list(range(len(model)))
    again.close()
    third = open_log(tmp_path, segment_bytes=1 << 20)
    assert read_all(third) == expected(model)


def test_a_roll_trims_the_old_segment_and_reserves_in_the_new_one(tmp_path):
    log = open_log(tmp_path, segment_bytes=2048, preallocate_bytes=CHUNK)
    model = fill(log, 40, size=40)
    segments = log.segments
    assert len(segments) > 2
    for seg in segments[:-1]:
        assert os.path.getsize(seg.log_path) == seg.size  # final: no zeros, fsynced so
    assert os.path.getsize(segments[-1].log_path) == CHUNK
    log.abandon()  # a crash: the old segments must need no repair
    again = open_log(tmp_path, segment_bytes=2048, preallocate_bytes=CHUNK)
    assert read_all(again) == expected(model)


async def test_a_durable_append_survives_a_crash_and_recovery_drops_only_the_zeros(tmp_path, caplog):
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK, durability="group_commit")
    model = fill(log, 6)
    await log.wait_durable(log.log_end_offset - 1)
    size = log.active_segment.size
    log.abandon()  # no trim, no marker: the file still ends in zeros
    assert os.path.getsize(tmp_path / LOG0) == CHUNK
    assert check(tmp_path) == []  # `kgc check` on a crashed dir: the zeros are no damage
    again = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    assert not again.load_result.clean_shutdown
    assert again.load_result.truncated_bytes == CHUNK - size
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # zeros: nothing lost
    assert read_all(again) == expected(model) and again.log_end_offset == 18
    assert again.append_records([Record(key=b"n", value=b"n")]) == 18  # right after the data
    again.close()
    assert read_all(open_log(tmp_path, segment_bytes=1 << 20))[-1] == (18, b"n", b"n")


def test_a_torn_batch_before_the_zeros_is_truncated_with_them(tmp_path, caplog):
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    model = fill(log, 3)
    size = log.active_segment.size
    log.abandon()
    with open(tmp_path / LOG0, "r+b") as f:  # half a batch written, unsynced, before a crash
        f.seek(size)
        f.write(bytes(range(1, 40)))
    again = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    assert again.load_result.truncated_bytes == CHUNK - size
    assert [r for r in caplog.records if r.levelno == logging.WARNING and "bytes dropped" in r.getMessage()]
    assert read_all(again) == expected(model) and os.path.getsize(tmp_path / LOG0) == size


def test_a_filesystem_that_cannot_preallocate_grows_the_file_as_before(tmp_path, monkeypatch):
    def unsupported(fd, offset, length):
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(fsutil, "preallocate", unsupported)
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    model = fill(log, 5)
    assert os.path.getsize(tmp_path / LOG0) == log.active_segment.size
    assert log.active_segment.preallocate_bytes == 0  # not tried again for this segment
    assert read_all(log) == expected(model)


def test_a_failed_write_into_the_reservation_cuts_the_file_back_and_fails_the_log(tmp_path, monkeypatch):
    log = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    model = fill(log, 3)
    size = log.active_segment.size

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsutil.os, "write", full)
    try:
        log.append_records([Record(key=b"x", value=b"x")])
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    else:
        raise AssertionError("the append did not fail")
    monkeypatch.undo()
    assert os.path.getsize(tmp_path / LOG0) == size
    log.abandon()
    again = open_log(tmp_path, segment_bytes=1 << 20, preallocate_bytes=CHUNK)
    assert read_all(again) == expected(model)
