"""I/O faults through a fault-injecting layer (os.write/os.pwrite/fsync raising ENOSPC or EIO):
a full disk during appends, during recovery (reopen) and during compaction. In each case the
caller gets a clear OSError, nothing half-written is ever served, the log is either intact or
failed (never silently wrong), and once the fault clears reopen/append work, everything
acknowledged (made durable) is still there and storage.dump.check finds no problem."""

from __future__ import annotations

import errno
import os
import shutil

import pytest

from storage.batch import Record
from storage.dump import check
from storage.log import LogConfig
from storage.log_manager import LogManager
from tests.storage.helpers import FakeClock
from tests.storage.test_cleaner_helpers import check_compacted, records


class FaultyDisk:
    """Patches the system calls storage writes through. `full()`: writes fail with ENOSPC after
    `allow` more bytes; `broken_sync()`: fsync/fdatasync fail with `err`; `clear()`: all works."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.allow: int | None = None
        self.sync_error: int | None = None
        self.hits = 0
        real_write, real_pwrite, real_fsync = os.write, os.pwrite, os.fsync

        def write(fd, data):
            return real_write(fd, self._take(data))

        def pwrite(fd, data, offset):
            return real_pwrite(fd, self._take(data), offset)

        def fsync(fd):
            if self.sync_error is not None:
                self.hits += 1
                raise OSError(self.sync_error, os.strerror(self.sync_error))
            real_fsync(fd)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "pwrite", pwrite)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "fdatasync", fsync)

    def _take(self, data) -> bytes:
        data = bytes(data)
        if self.allow is None:
            return data
        if self.allow <= 0:
            self.hits += 1
            raise OSError(errno.ENOSPC, "No space left on device")
        part = data[: self.allow]
        self.allow -= len(part)
        return part

    def full(self, allow: int = 0) -> None:
        self.allow = allow

    def broken_sync(self, err: int = errno.EIO) -> None:
        self.sync_error = err

    def clear(self) -> None:
        self.allow = self.sync_error = None


@pytest.fixture
def disk(monkeypatch):
    return FaultyDisk(monkeypatch)


GROUP = LogConfig(segment_bytes=4096, index_interval_bytes=128, durability="group_commit")
COMPACT = LogConfig(
    segment_bytes=1024,
    index_interval_bytes=128,
    segment_index_bytes=4096,
    cleanup_policy="compact",
    durability="group_commit",
)


def values(log) -> list[bytes | None]:
    return [r.value for r in log.iter_records()]


@pytest.mark.parametrize("allow", [0, 7, 70])
@pytest.mark.parametrize("fault", ["write", "fsync"])
async def test_disk_full_during_appends_loses_nothing_acknowledged(tmp_path, disk, autojump_clock, allow, fault):
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("t", 0, GROUP)
    acked = []
    for i in range(40):  # several segments and index entries
        offset = log.append_records([Record(key=b"k%d" % i, value=b"v%d" % i)])
        await log.wait_durable(offset)
        acked.append(b"v%d" % i)
    if fault == "write":
        disk.full(allow)
    else:
        disk.broken_sync(errno.ENOSPC)
    with pytest.raises(OSError) as info:
        for i in range(40, 80):
            await log.wait_durable(log.append_records([Record(key=b"k", value=b"lost%d" % i)]))
            acked.append(b"lost%d" % i)  # (fsync errors fail the wait: never acknowledged)
    assert info.value.errno == errno.ENOSPC and log.failed and disk.hits
    assert values(log)[: len(acked)] == acked  # nothing torn is served meanwhile
    assert list(logs.failed_logs()) == [("t", 0)]
    disk.clear()
    again = logs.reopen("t", 0)
    assert values(again)[: len(acked)] == acked
    await again.wait_durable(again.append_records([Record(key=b"k", value=b"after")]))
    assert values(again)[-1] == b"after"
    logs.close()
    assert check(tmp_path) == []


@pytest.mark.parametrize("allow", [0, 100])
def test_disk_full_during_recovery_is_a_clean_error_to_retry(tmp_path, disk, allow):
    path = tmp_path / "t-0"
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("t", 0, GROUP)
    for i in range(60):
        log.append_records([Record(key=b"k%d" % i, value=b"v%d" % i)])
    log.flush()
    expected = values(log)
    log.abandon()  # kill -9
    (path / "recovery-point-offset-checkpoint").unlink()  # make recovery rebuild every index
    pristine = tmp_path / "pristine"
    shutil.copytree(path, pristine)
    disk.full(allow)
    for _ in range(3):  # a retry while still full fails the same clean way
        with pytest.raises(OSError) as info:
            LogManager(tmp_path, FakeClock()).open("t", 0, GROUP)
        assert info.value.errno == errno.ENOSPC
    assert (path / "00000000000000000000.log").read_bytes() == (
        pristine / "00000000000000000000.log"
    ).read_bytes()  # the data is untouched
    disk.clear()
    logs = LogManager(tmp_path, FakeClock())
    again = logs.open("t", 0, GROUP)
    assert values(again) == expected
    again.append_records([Record(key=b"k", value=b"after")])
    logs.close()
    assert check(path) == []


@pytest.mark.parametrize("where", ["output write", "output fsync"])
async def test_disk_full_during_compaction_leaves_the_log_intact_and_serving(tmp_path, disk, autojump_clock, where):
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("c", 0, COMPACT)
    for r in range(6):
        for k in range(10):
            await log.wait_durable(log.append_records([Record(key=b"k%d" % k, value=b"v%d-%d" % (k, r))]))
    log.roll()
    pre = records(log)
    if where == "output write":
        disk.full(300)
    else:
        disk.broken_sync(errno.ENOSPC)
    assert await logs.clean_pass() == []  # the round failed, and only the round
    assert disk.hits and not log.failed and logs.failed_logs() == {}
    assert not [n for n in os.listdir(log.directory) if ".cleaned" in n or ".swap" in n]
    # Serving, and still the same log: groups swapped in before the fault are a valid
    # compaction (nothing invented, every latest value kept), the rest is as it was.
    check_compacted(pre, records(log), 0)
    disk.clear()
    await log.wait_durable(log.append_records([Record(key=b"k0", value=b"newest")]))
    assert await logs.clean_pass() == [("c", 0)]
    post = records(log)
    check_compacted(pre + post[-1:], post, log.active_segment.base_offset)
    logs.close()
    assert check(tmp_path) == []


@pytest.mark.parametrize("failing", [2, 4, 7])  # before the commit, just after it, at the end
async def test_a_failed_swap_rename_fails_the_log_and_reopen_completes_or_discards_it(
    tmp_path, monkeypatch, autojump_clock, failing
):
    logs = LogManager(tmp_path, FakeClock())
    log = logs.open("c", 0, COMPACT)
    for r in range(6):
        for k in range(10):
            log.append_records([Record(key=b"k%d" % k, value=b"v%d-%d" % (k, r))])
    log.roll()
    log.flush()
    pre = records(log)
    real_rename = os.rename
    calls = []

    def rename(src, dst):
        calls.append(dst)
        if len(calls) == failing:
            raise OSError(errno.EIO, "Input/output error")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    assert await logs.clean_pass() == []
    assert log.failed and list(logs.failed_logs()) == [("c", 0)]
    monkeypatch.undo()
    again = logs.reopen("c", 0)
    post = records(again)
    check_compacted(pre, post, 0)  # completed or discarded: either way nothing lost or invented
    logs.close()
    assert check(tmp_path) == []


# -- a real full disk: a small loop-mounted ext4 (needs root, as CI runs) -------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MiB ext4 file system mounted on tmp_path/mnt, with a 6 MiB filler file to free."""
    if os.geteuid() != 0:
        pytest.skip("mounting a loop file system needs root (CI runs as root)")
    image, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    mnt.mkdir()
    with open(image, "wb") as f:
        f.truncate(24 << 20)
    import subprocess

    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True, text=True)
    mounted = (
        made.returncode == 0
        and subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], capture_output=True, text=True).returncode
        == 0
    )
    if not mounted:
        pytest.skip(f"cannot make or loop-mount an ext4 image here: {made.stderr.strip() or 'mount failed'}")
    try:
        with open(mnt / "filler", "wb") as f:
            f.write(b"\xff" * (6 << 20))
            os.fsync(f.fileno())
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], check=False).returncode:
            subprocess.run(["umount", "-l", str(mnt)], check=False)  # files still open: detach


def fill_up(path) -> None:
    """Take every byte left (whatever the failed append gave back)."""
    try:
        f = open(path, "wb", buffering=0)
    except OSError as exc:  # not even room for a new file
        assert exc.errno == errno.ENOSPC
        return
    with f:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    f.write(b"\xff" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


async def test_a_real_full_disk_then_space_freed(small_disk, autojump_clock):
    data = small_disk / "data"
    logs = LogManager(data, FakeClock())
    try:
        await _fill_the_disk_then_free_it(small_disk, data, logs)
    finally:
        logs.close()
    assert check(data) == []


async def _fill_the_disk_then_free_it(small_disk, data, logs) -> None:
    compacted = logs.open("c", 0, LogConfig(segment_bytes=64 << 10, cleanup_policy="compact"))
    for _ in range(8):
        for k in range(200):
            compacted.append_records([Record(key=b"k%d" % k, value=b"x" * 100)])
    compacted.roll()
    compacted.flush()
    log = logs.open("t", 0, LogConfig(segment_bytes=1 << 20))
    acked, value = [], b"v" * 16000
    with pytest.raises(OSError) as info:
        for i in range(100_000):
            await log.wait_durable(log.append_records([Record(key=b"%d" % i, value=value)]))
            acked.append(i)
    assert info.value.errno == errno.ENOSPC and log.failed and len(acked) > 50
    fill_up(small_disk / "stuffing")
    # Still full: the cleaner's round fails alone; the compacted log stays healthy.
    pre = records(compacted)
    assert await logs.clean_pass() == []
    assert not compacted.failed and records(compacted) == pre
    assert not [n for n in os.listdir(compacted.directory) if ".cleaned" in n]
    try:  # a reopen while full may work (nothing to write) or fail cleanly; both are fine
        logs.reopen("t", 0)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC and ("t", 0) in logs.failed_logs()
    os.unlink(small_disk / "filler")  # space freed
    if os.path.exists(small_disk / "stuffing"):
        os.unlink(small_disk / "stuffing")
    again = logs.reopen("t", 0)
    got = [int(r.key) for r in again.iter_records()]
    assert got[: len(acked)] == acked  # nothing acknowledged lost
    await again.wait_durable(again.append_records([Record(key=b"after", value=b"x")]))
    assert await logs.clean_pass() == [("c", 0)]
