"""Recovery, one test per failure mode (LevelDB log_test / Kafka LogLoaderTest style)."""

from __future__ import annotations

import errno
import os
import shutil

import pytest

from storage import fsutil
from storage.batch import Record, decode_header
from storage.log import LogFailedError
from storage.recovery import CLEAN_SHUTDOWN_FILE, CorruptLogError
from tests.storage.helpers import fill, open_log, read_all


def expected(model):
    return [(o, r.key, r.value) for o, r in model]


def crash(log):
    """Drop the Log without close(): no marker, untrimmed indexes."""
    log.abandon()


def test_torn_tail_at_every_byte_of_the_last_batch_is_truncated(tmp_path):
    src = tmp_path / "src"
    log = open_log(src, segment_bytes=1 << 20)
    model = fill(log, 6, per_batch=3)
    last_start = log.active_segment.size
    last = [Record(key=b"last-%d" % i, value=b"v" * 10, headers=[("h", b"1")]) for i in range(3)]
    log.append_records(last, compression=1)
    end = log.active_segment.size
    crash(log)
    for cut in range(last_start, end):
        work = tmp_path / f"cut{cut}"
        shutil.copytree(src, work)
        os.truncate(work / "00000000000000000000.log", cut)
        again = open_log(work, segment_bytes=1 << 20)
        assert again.load_result.truncated_bytes == cut - last_start, cut
        assert read_all(again) == expected(model), cut
        assert again.log_end_offset == 18 and os.path.getsize(work / "00000000000000000000.log") == last_start
        assert again.append_records([Record(key=b"n", value=b"n")]) == 18
        again.close()
        shutil.rmtree(work)
    # and the whole batch survives when nothing is cut
    whole = open_log(src, segment_bytes=1 << 20)
    assert whole.log_end_offset == 21 and whole.load_result.truncated_bytes == 0


def _flip_byte_in_batch(path, batch_index):
    data = bytearray(path.read_bytes())
    pos = 0
    for _ in range(batch_index):
        pos += decode_header(data, pos).size
    data[pos + 40] ^= 0xFF  # inside the CRC-covered range (maxTimestamp)
    path.write_bytes(bytes(data))
    return pos


def test_bad_crc_in_an_earlier_segment_raises_corrupt_log_error_with_file_and_position(tmp_path):
    log = open_log(tmp_path, segment_bytes=700)
    fill(log, 30)
    first = log.segments[0]
    crash(log)  # no recovery point checkpoint beyond 0 for the first segment: it is rescanned
    (tmp_path / "recovery-point-offset-checkpoint").unlink(missing_ok=True)
    pos = _flip_byte_in_batch(tmp_path / os.path.basename(first.log_path), 2)
    with pytest.raises(CorruptLogError) as info:
        open_log(tmp_path, segment_bytes=700)
    err = info.value
    assert err.file.endswith("00000000000000000000.log") and err.position == pos
    assert err.offset == 6 and "CRC" in err.reason and str(pos) in str(err)


def test_bad_crc_in_a_trusted_segment_is_caught_when_read(tmp_path):
    log = open_log(tmp_path, segment_bytes=700)
    fill(log, 30)
    log.close()
    pos = _flip_byte_in_batch(tmp_path / "00000000000000000000.log", 1)
    again = open_log(tmp_path, segment_bytes=700)  # clean shutdown: not rescanned
    with pytest.raises(CorruptLogError) as info:
        list(again.iter_records())
    assert info.value.position == pos and info.value.offset == 3


def test_bad_crc_inside_the_last_segment_truncates_there(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20)
    model = fill(log, 10)
    crash(log)
    pos = _flip_byte_in_batch(tmp_path / "00000000000000000000.log", 4)
    again = open_log(tmp_path, segment_bytes=1 << 20)
    assert read_all(again) == expected(model)[:12]
    assert again.active_segment.size == pos


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage", "missing_timeindex"])
def test_bad_index_is_rebuilt_identically(tmp_path, damage):
    log = open_log(tmp_path, segment_bytes=3000, index_interval_bytes=200)
    model = fill(log, 60)
    log.close()
    seg_path = tmp_path / "00000000000000000000.index"
    good_index = seg_path.read_bytes()
    good_time = (tmp_path / "00000000000000000000.timeindex").read_bytes()
    assert len(good_index) >= 16
    if damage == "missing":
        seg_path.unlink()
    elif damage == "truncated":
        seg_path.write_bytes(good_index[:-3])
    elif damage == "garbage":
        seg_path.write_bytes(bytes(reversed(good_index)))
    else:
        (tmp_path / "00000000000000000000.timeindex").unlink()
    again = open_log(tmp_path, segment_bytes=3000, index_interval_bytes=200)
    assert again.load_result.rebuilt_indexes == [str(tmp_path / "00000000000000000000.log")]
    assert read_all(again) == expected(model)
    for offset, _ in model:
        assert decode_header(again.read(offset, 1)).last_offset >= offset
    again.close()
    assert seg_path.read_bytes() == good_index
    assert (tmp_path / "00000000000000000000.timeindex").read_bytes() == good_time


def test_untrimmed_index_after_a_crash_is_rebuilt(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=100)
    model = fill(log, 40)
    crash(log)
    # What Kafka (or an older kgc) leaves: the active index preallocated and zero-filled.
    os.truncate(tmp_path / "00000000000000000000.index", 4096)
    os.truncate(tmp_path / "00000000000000000000.timeindex", 4092)
    again = open_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=100)
    assert read_all(again) == expected(model)
    assert len(again.active_segment.offset_index) > 5


class DiskFull:
    """os.write that writes `allow` bytes in total, then fails with ENOSPC."""

    def __init__(self, allow: int) -> None:
        self.allow = allow
        self.real = os.write

    def __call__(self, fd, data):
        if self.allow <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(len(data), self.allow)
        self.allow -= n
        return self.real(fd, bytes(data[:n]))


@pytest.mark.parametrize("allow", [0, 1, 30, 60])
def test_enospc_mid_write_fails_clearly_and_recovers_cleanly(tmp_path, monkeypatch, allow):
    log = open_log(tmp_path, segment_bytes=1 << 20)
    model = fill(log, 5)
    log.flush()
    size = os.path.getsize(tmp_path / "00000000000000000000.log")
    monkeypatch.setattr(fsutil.os, "write", DiskFull(allow))
    with pytest.raises(OSError) as info:
        log.append_records([Record(key=b"big", value=b"x" * 100)])
    assert info.value.errno == errno.ENOSPC
    monkeypatch.undo()
    # The partial batch is gone at once: no read can serve it, even before the reopen.
    assert os.path.getsize(tmp_path / "00000000000000000000.log") == size
    assert log.read(15, 1 << 20) == b"" and log.log_end_offset == 15
    assert read_all(log) == expected(model)
    with pytest.raises(LogFailedError, match="reopen"):
        log.append_records([Record(key=b"after", value=b"x")])
    log.close()
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()  # a failed log never claims clean
    again = open_log(tmp_path, segment_bytes=1 << 20)
    assert read_all(again) == expected(model)
    assert again.load_result.truncated_bytes == 0
    assert again.append_records([Record(key=b"next", value=b"x")]) == 15


@pytest.mark.parametrize("allow", [0, 30])
def test_a_torn_batch_left_when_even_the_cut_back_fails_is_cut_by_recovery(tmp_path, monkeypatch, allow):
    log = open_log(tmp_path, segment_bytes=1 << 20)
    model = fill(log, 5)
    log.flush()
    monkeypatch.setattr(fsutil.os, "write", DiskFull(allow))

    def broken_truncate(fd, size):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fsutil.os, "ftruncate", broken_truncate)
    with pytest.raises(OSError):
        log.append_records([Record(key=b"big", value=b"x" * 100)])
    monkeypatch.undo()
    assert log.failed and read_all(log) == expected(model)  # the torn bytes are not read
    log.close()
    again = open_log(tmp_path, segment_bytes=1 << 20)
    assert again.load_result.truncated_bytes == allow and read_all(again) == expected(model)


def test_failed_fsync_makes_the_log_unusable(tmp_path, monkeypatch):
    log = open_log(tmp_path)
    fill(log, 2)

    def broken_fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fsutil.os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        log.flush()
    monkeypatch.undo()
    with pytest.raises(LogFailedError):
        log.append_records([Record(key=b"k", value=b"v")])
    with pytest.raises(LogFailedError):
        log.flush()


def test_segment_overlapping_the_next_one_is_corrupt(tmp_path):
    log = open_log(tmp_path, segment_bytes=500)
    fill(log, 10)
    log.close()
    names = sorted(p.name for p in tmp_path.glob("*.log"))
    # Rename the second segment to a base below the first one's end.
    second = names[1]
    for ext in (".log", ".index", ".timeindex"):
        os.rename(tmp_path / second.replace(".log", ext), tmp_path / (f"{1:020d}" + ext))
    with pytest.raises(CorruptLogError, match="past the next segment"):
        open_log(tmp_path, segment_bytes=500)


def test_orphan_index_files_are_removed_and_not_reused(tmp_path):
    log = open_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=100)
    model = fill(log, 20)
    log.close()
    end = model[-1][0] + 1
    stale = tmp_path / f"{end:020d}.index"
    stale.write_bytes(b"\x00\x00\x00\x09\x00\x00\x10\x00")  # an entry no future segment has
    again = open_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=100)
    assert not stale.exists()
    again.roll()
    assert len(again.active_segment.offset_index) == 0
