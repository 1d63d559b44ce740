"""Transactions in storage: markers, producer state, `.txnindex`, `.snapshot`, recovery, cleaner."""

from __future__ import annotations

import os
import struct

from crc32c import crc32c

from storage.batch import Record, encode_batch, encode_marker, iter_records, read_marker
from storage.cleaner import Cleaner, CleanerConfig
from storage.log import Log
from storage.producer_snapshot import list_snapshots, read_snapshot, snapshot_path
from storage.recovery import CLEAN_SHUTDOWN_FILE
from storage.txn_index import AbortedTxn
from tests.storage.helpers import FakeClock, open_log

PID, EPOCH = 42, 3


def txn_batch(*keys: bytes, seq: int = 0, pid: int = PID, epoch: int = EPOCH) -> bytes:
    return encode_batch(
        0,
        [Record(None, 1000, k, b"v-" + k) for k in keys],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=True,
    )


def marker(commit: bool, pid: int = PID, epoch: int = EPOCH, coordinator_epoch: int = 7) -> bytes:
    return encode_marker(pid, epoch, commit, coordinator_epoch, 2000)


def test_a_marker_is_kafkas_control_record():
    raw = marker(True)
    rec = next(iter_records(raw))
    assert rec.key == struct.pack(">hh", 0, 1) and rec.value == struct.pack(">hi", 0, 7)
    assert read_marker(raw) == (True, 7)
    assert read_marker(marker(False)) == (False, 7)


def test_an_open_transaction_holds_the_first_unstable_offset(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_records([Record(key=b"plain", value=b"x")])
    log.append_batch(txn_batch(b"a", b"b"))
    log.append_records([Record(key=b"other", value=b"y")])
    assert log.first_unstable_offset() == 1
    base, _ = log.append_batch(marker(True))
    assert base == 4 and log.producer_state.first_undecided_offset() is None
    assert log.first_unstable_offset() == 1  # until the high watermark passes the marker
    log.producer_state.on_high_watermark(5)
    assert log.first_unstable_offset() is None
    assert log.collect_aborted(0, 5) == []


def test_an_abort_is_indexed_with_the_lso_it_leaves(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_batch(txn_batch(b"a"))  # 0: pid 42
    log.append_batch(txn_batch(b"b", pid=43))  # 1: pid 43, still open when 42 aborts
    log.append_batch(marker(False))  # 2: abort 42
    seg = log.active_segment
    assert seg.txn_index.entries == [AbortedTxn(PID, 0, 2, 1)]
    with open(seg.txn_index.path, "rb") as f:
        assert f.read() == struct.pack(">hqqqq", 0, PID, 0, 2, 1)
    assert log.collect_aborted(0, 3) == [AbortedTxn(PID, 0, 2, 1)]
    assert log.collect_aborted(3, 10) == []


def test_the_snapshot_is_kafkas_bytes_and_a_clean_reopen_reads_it(tmp_path):
    clock = FakeClock()
    log = open_log(tmp_path / "t-0", clock)
    log.append_batch(
        encode_batch(0, [Record(None, 1000, b"k", b"v")] * 2, producer_id=7, producer_epoch=0, base_sequence=0)
    )
    log.append_batch(txn_batch(b"a"))
    log.close()
    assert list_snapshots(str(tmp_path / "t-0")) == [3]
    with open(snapshot_path(str(tmp_path / "t-0"), 3), "rb") as f:
        data = f.read()
    entries = [
        struct.pack(">qhiqiqiq", 7, 0, 1, 1, 1, 1000, -1, -1),
        struct.pack(">qhiqiqiq", PID, EPOCH, 0, 2, 0, 1000, -1, 2),
    ]
    body = struct.pack(">i", 2) + b"".join(entries)
    assert data == struct.pack(">hI", 1, crc32c(body)) + body
    reopened = Log.open(tmp_path / "t-0", log.config, clock)
    assert reopened.first_unstable_offset() == 2
    assert reopened.producer_state.producers[7].last_seq == 1
    assert [e.producer_id for e in read_snapshot(snapshot_path(str(tmp_path / "t-0"), 3))] == [7, PID]


def test_recovery_rewrites_a_lost_txnindex_from_the_log(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_batch(txn_batch(b"a"))
    log.append_records([Record(key=b"p", value=b"q")])
    log.append_batch(marker(False))
    path = log.active_segment.txn_index.path
    log.abandon()  # a crash: no snapshot, no clean-shutdown marker
    os.unlink(path)  # the index entry never reached the disk
    reopened = open_log(tmp_path / "t-0")
    assert reopened.collect_aborted(0, 3) == [AbortedTxn(PID, 0, 2, 3)]
    assert os.path.exists(path)


def test_a_snapshot_spares_the_replay_of_what_it_covers(tmp_path):
    log = open_log(tmp_path / "t-0", segment_bytes=300)
    log.append_batch(txn_batch(b"a"))  # open transaction at 0
    for i in range(10):  # rolls: a snapshot at each new segment's base
        log.append_records([Record(key=b"k%d" % i, value=b"x" * 100)])
    assert len(log.segments) > 2 and list_snapshots(log.directory)
    log.abandon()
    first = log.segments[0].log_path
    os.truncate(first, 0)  # what a snapshot covers is never read again (the open txn comes from it)
    reopened = open_log(tmp_path / "t-0", segment_bytes=300)
    assert reopened.first_unstable_offset() == 0
    assert not os.path.exists(os.path.join(str(tmp_path / "t-0"), CLEAN_SHUTDOWN_FILE))


def _compacted(tmp_path):
    return open_log(tmp_path / "c-0", segment_bytes=400, cleanup_policy="compact")


def test_the_cleaner_drops_aborted_records_and_keeps_what_they_would_have_shadowed(tmp_path):
    log = _compacted(tmp_path)
    log.append_records([Record(key=b"k", value=b"committed")])  # 0
    log.append_batch(txn_batch(b"k"))  # 1: aborted later
    log.append_batch(marker(False))  # 2
    log.append_batch(txn_batch(b"j", pid=43))  # 3: committed
    log.append_batch(marker(True, pid=43))  # 4
    log.roll()
    log.append_records([Record(key=b"z", value=b"tail")])
    stats = Cleaner(CleanerConfig()).clean(log, force=True)
    assert stats is not None
    kept = {r.offset: (r.key, r.value) for r in log.iter_records()}
    assert kept[0] == (b"k", b"committed") and 1 not in kept
    assert kept[3] == (b"j", b"v-j") and 2 in kept and 4 in kept  # markers stay
    assert log.segments[0].txn_index.entries == [AbortedTxn(PID, 1, 2, 3)]


def test_an_open_transaction_bounds_the_cleaner(tmp_path):
    log = _compacted(tmp_path)
    log.append_records([Record(key=b"k", value=b"old")])  # 0
    log.append_batch(txn_batch(b"k"))  # 1: still open
    log.roll()
    log.append_records([Record(key=b"z", value=b"tail")])
    Cleaner(CleanerConfig()).clean(log, force=True)
    assert [r.offset for r in log.iter_records()][:2] == [0, 1]  # nothing at or after 1 decided yet


def test_dump_prints_markers_txnindex_and_snapshots_as_kafka_dump_log_does(tmp_path):
    import io

    from storage.dump import check, dump

    log = open_log(tmp_path / "t-0")
    log.append_batch(txn_batch(b"a"))
    log.append_batch(marker(False))
    log.close()
    out = io.StringIO()
    dump(tmp_path / "t-0", out, deep=True, index=True)
    text = out.getvalue()
    assert "isTransactional: true isControl: true" in text
    assert "endTxnMarker: ABORT coordinatorEpoch: 7" in text
    assert f"version: 0 producerId: {PID} firstOffset: 0 lastOffset: 1 lastStableOffset: 2" in text
    out = io.StringIO()
    dump(snapshot_path(str(tmp_path / "t-0"), 2), out)
    assert (
        f"producerId: {PID} producerEpoch: {EPOCH} coordinatorEpoch: 7 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 2000 firstSequence: 0 lastSequence: 0 lastOffset: 0"
    ) in out.getvalue()
    assert check(tmp_path / "t-0") == []


def test_check_refuses_an_index_entry_without_its_marker(tmp_path):
    from storage.dump import check

    log = open_log(tmp_path / "t-0")
    log.append_batch(txn_batch(b"a"))
    log.append_batch(marker(True))  # a COMMIT: no entry belongs here
    path = log.active_segment.txn_index.path
    log.close()
    with open(path, "wb") as f:
        f.write(AbortedTxn(PID, 0, 1, 2).pack())
    [problem] = check(tmp_path / "t-0")
    assert problem.file == path and "no ABORT marker" in problem.reason


async def test_a_crash_replays_producer_state_from_the_last_checkpoint_only(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_batch(txn_batch(b"a"))  # an open transaction before the checkpoint
    log.append_records([Record(key=b"k", value=b"v")])
    await log.checkpoint()  # fsync + recovery point + the producer snapshot at 2
    log.append_records([Record(key=b"k", value=b"w")])
    log.append_batch(marker(False))  # its abort, after the checkpoint
    log.abandon()
    reopened = open_log(tmp_path / "t-0")
    assert reopened.txns.replayed_from == 2  # not 0: the checkpoint's snapshot covered the rest
    assert reopened.first_unstable_offset() == 0  # (the abort is not yet below a high watermark)
    assert reopened.collect_aborted(0, 5) == [AbortedTxn(PID, 0, 3, 4)]
    reopened.close()
    again = open_log(tmp_path / "t-0")
    assert again.txns.replayed_from is None  # a clean stop: the snapshot at the log end is enough
