"""Transaction markers in compaction (Kafka's LogCleanerTest: testCommitMarkerRemoval,
testAbortMarkerRemoval, testAbortedTransactionSpanningSegments), on real files with an injected
clock: a marker goes only once no batch of its transaction is left, and then only at the first
round after now + delete.retention.ms; read_committed reads (the aborted-transaction index) stay
right at every step; a producer that expired no longer holds its last batch and markers back."""

from __future__ import annotations

from storage.batch import Record, encode_batch, encode_marker, iter_records
from storage.cleaner import Cleaner
from storage.log import Log
from tests.storage.helpers import FakeClock, open_log

PID, EPOCH, RETENTION = 1, 0, 10_000


class Producer:
    """appendTransactionalAsLeader: batches of one record per key, sequences in order."""

    def __init__(self, log: Log) -> None:
        self.log, self.seq = log, 0

    def send(self, *keys: int) -> None:
        records = [Record(None, 1_000, b"%d" % k, b"v%d" % k) for k in keys]
        batch = encode_batch(
            0, records, producer_id=PID, producer_epoch=EPOCH, base_sequence=self.seq, transactional=True
        )
        self.seq += len(keys)
        self.log.append_batch(batch)

    def end(self, commit: bool) -> None:
        self.log.append_batch(encode_marker(PID, EPOCH, commit, 0, 2_000))


def keys(log: Log) -> list[int]:
    """LogTestUtils.keysInLog: the keys of data records, in offset order."""
    return [int(r.key) for h, raw in log.iter_batches() if not h.is_control for r in iter_records(raw)]


def offsets(log: Log) -> list[int]:
    """offsetsInLog: offsets of records with a key and a value (markers included)."""
    return [r.offset for _, raw in log.iter_batches() for r in iter_records(raw) if r.key and r.value]


def _log(tmp_path, clock: FakeClock) -> Log:
    return open_log(tmp_path / "t-0", clock, segment_bytes=256, cleanup_policy="compact", delete_retention_ms=RETENTION)


def test_a_commit_marker_goes_after_its_records_and_the_delete_retention(tmp_path):
    clock = FakeClock()
    log = _log(tmp_path, clock)
    producer = Producer(log)
    producer.send(1)
    producer.send(2, 3)
    producer.end(commit=True)  # 3
    producer.send(2)
    producer.end(commit=True)  # 5
    log.roll()
    cleaner = Cleaner()
    cleaner.clean(log, force=True)  # the first transaction still has records: its marker stays
    assert (keys(log), offsets(log)) == ([1, 3, 2], [0, 2, 3, 4, 5])
    producer.send(1, 3)
    producer.end(commit=True)  # 8
    log.roll()
    cleaner.clean(log, force=True)  # its last records read (and removed) in this round
    assert (keys(log), offsets(log)) == ([2, 1, 3], [3, 4, 5, 6, 7, 8])
    cleaner.clean(log, force=True)  # no record left: the marker gets its delete horizon
    assert offsets(log) == [3, 4, 5, 6, 7, 8]
    stamped = [h for h, _ in log.iter_batches() if h.base_offset == 3]
    assert stamped[0].delete_horizon_ms == clock.now_ms + RETENTION
    clock.advance(RETENTION - 1)
    cleaner.clean(log, force=True)
    assert offsets(log) == [3, 4, 5, 6, 7, 8]
    clock.advance(1)
    cleaner.clean(log, force=True)  # the horizon passed: gone
    assert (keys(log), offsets(log)) == ([2, 1, 3], [4, 5, 6, 7, 8])
    # Producer state replayed from the cleaned log alone: no transaction left open.
    log.close()
    for snapshot in (tmp_path / "t-0").glob("*.snapshot"):
        snapshot.unlink()
    reopened = _log(tmp_path, clock)
    state = reopened.producer_state
    assert state.first_undecided_offset() is None and PID in state.producers


def test_an_abort_marker_goes_after_its_aborted_records_and_index_entry(tmp_path):
    clock = FakeClock()
    log = _log(tmp_path, clock)
    producer = Producer(log)
    producer.send(1)
    producer.send(2, 3)
    producer.end(commit=False)  # 3
    producer.send(3)
    producer.end(commit=True)  # 5
    log.roll()
    assert [(t.first_offset, t.last_offset) for t in log.collect_aborted(0, 6)] == [(0, 3)]
    cleaner = Cleaner()
    cleaner.clean(log, force=True)  # aborted records removed, their marker and entry kept
    assert (keys(log), offsets(log)) == ([3], [3, 4, 5])
    assert [(t.first_offset, t.last_offset) for t in log.collect_aborted(0, 6)] == [(0, 3)]
    cleaner.clean(log, force=True)  # nothing left of it: the entry goes, the marker waits
    assert (keys(log), offsets(log)) == ([3], [3, 4, 5])
    assert log.collect_aborted(0, 6) == []
    clock.advance(RETENTION)
    cleaner.clean(log, force=True)
    assert (keys(log), offsets(log)) == ([3], [4, 5])


def test_the_producers_last_batch_keeps_its_transactions_marker(tmp_path):
    clock = FakeClock()
    log = _log(tmp_path, clock)
    Producer(log).send(1)
    log.roll()
    Producer(log).end(commit=False)  # 1
    log.roll()
    cleaner = Cleaner()
    for _ in range(2):  # the empty batch keeps the producer's sequence, so the marker stays
        cleaner.clean(log, force=True)
        clock.advance(RETENTION)
        assert offsets(log) == [1]
        assert [h.last_offset for h, _ in log.iter_batches()][:2] == [0, 1]
    # Once the producer expires (producer.id.expiration.ms) nothing holds them back.
    assert log.producer_state.remove_expired(clock.now_ms, 1) == [PID]
    cleaner.clean(log, force=True)  # the empty batch goes; the marker has no data left
    cleaner.clean(log, force=True)
    clock.advance(RETENTION)
    cleaner.clean(log, force=True)
    assert offsets(log) == [] and [h.records_count for h, _ in log.iter_batches()] == [0]  # (it ends its group)


def test_header_only_batches_that_end_a_group_hold_no_marker(tmp_path):
    # One batch per segment (and per group): every emptied batch stays as a header (it ends its
    # group), yet its transaction's marker goes, and a replay opens no transaction from it.
    clock = FakeClock()
    log = open_log(tmp_path / "t-0", clock, segment_bytes=100, cleanup_policy="compact", delete_retention_ms=RETENTION)
    producer = Producer(log)
    producer.send(1)  # 0
    producer.end(commit=True)  # 1
    log.append_records([Record(key=b"1", value=b"plain")])  # 2: supersedes it
    producer.send(5)  # 3: the producer's last batch from now on
    producer.end(commit=True)  # 4
    log.append_records([Record(key=b"9", value=b"tail")])  # 5 (active)
    cleaner = Cleaner()
    cleaner.clean(log, force=True)  # the record goes, its batch's header stays; the marker stays
    cleaner.clean(log, force=True)  # the marker gets its horizon
    clock.advance(RETENTION)
    cleaner.clean(log, force=True)
    assert offsets(log) == [2, 3, 4, 5]
    assert [h.records_count for h, _ in log.iter_batches()] == [0, 0, 1, 1, 1, 1]
    log.close()
    for snapshot in (tmp_path / "t-0").glob("*.snapshot"):
        snapshot.unlink()
    assert _log(tmp_path, clock).producer_state.first_undecided_offset() is None
