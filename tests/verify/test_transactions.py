"""Offsets committed in transactions (TxnOffsetCommit): a transactional offset counts only when
its producer's next marker is a COMMIT, an ABORT discards it, an open one does not count yet,
and control batches are not records (Kafka's OffsetMetadataManager replay). A hand-made
partition pins the rule record by record, with markers in other splits and Spark tasks; the
generated datasets (conftest: a fifth of the commits transactional) hold both outcomes."""

from __future__ import annotations

import json

import pytest

from coordinator.groups.record_types import OffsetCommitRecord
from coordinator.groups.records import encode_record
from coordinator.verify import kernels
from coordinator.verify.faults import _kafka_replay, iter_batches
from coordinator.verify.layout import list_partition_dirs, plan_splits, segment_path
from coordinator.verify.oracle import verify
from coordinator.verify.scan import scan_split
from storage.batch import Record, decode_header, encode_batch, encode_marker, read_marker
from storage.segment import LogSegment

G = "g"  # partition_for("g", 1) == 0


def _commit(partition: int, offset: int) -> tuple[bytes, bytes | None]:
    return encode_record(OffsetCommitRecord(G, "t", partition, offset, -1, "", 1000, None))


def _data(base: int, commits: list[tuple[int, int]], pid: int | None = None) -> bytes:
    recs = [Record(None, 1000, *_commit(p, o)) for p, o in commits]
    if pid is None:
        return encode_batch(base, recs)
    return encode_batch(base, recs, producer_id=pid, producer_epoch=0, transactional=True)


# (base offset, batch): partition 0 ends at 200 (pid 7 commits, pid 8's 300 aborts); partition 1
# at 50 (pid 9's 400 stays open); partition 2 at 80 (pid 7's later 70 has a lower record offset).
LOG = [
    (0, _data(0, [(0, 100), (1, 50)])),
    (2, _data(2, [(0, 200)], pid=7)),
    (3, _data(3, [(0, 300)], pid=8)),
    (4, encode_marker(7, 0, True, 0, 1000, base_offset=4)),
    (5, encode_marker(8, 0, False, 0, 1000, base_offset=5)),
    (6, _data(6, [(1, 400)], pid=9)),
    (7, _data(7, [(2, 70)], pid=7)),
    (8, _data(8, [(2, 80)])),
    (9, encode_marker(7, 0, True, 0, 1000, base_offset=9)),
]
KAFKA = {0: 200, 1: 50, 2: 80}  # what Kafka's replay commits, by partition


@pytest.fixture
def hand_made(tmp_path) -> dict:
    d = tmp_path / "log" / "__consumer_offsets-0"
    d.mkdir(parents=True)
    seg = LogSegment(str(d), 0, index_interval_bytes=1, segment_index_bytes=1 << 20)
    positions = {}
    for base, raw in LOG:
        positions[base] = seg.size
        seg.append(raw, decode_header(raw))
    seg.become_inactive()
    seg.close()
    return {
        "root": str(tmp_path / "log"),
        "file": segment_path(str(d), 0),
        "positions": positions,
        "ledger": str(tmp_path / "ledger.jsonl"),
    }


def _ledger(path: str, offsets: dict[int, int]) -> str:
    with open(path, "w") as f:
        for seq, (p, o) in enumerate(sorted(offsets.items()), 1):
            f.write(
                json.dumps(
                    {"op": "commit", "seq": seq, "group": G, "topic": "t", "partition": p, "offset": o, "metadata": ""}
                )
                + "\n"
            )
    return path


def test_scan_counts_committed_transactions_only(hand_made):
    (split,) = plan_splits(hand_made["root"], split_bytes=1 << 30)
    res = scan_split(split)
    assert res.violations == []  # control batches are not malformed offset records
    last = {k: a[3] for (_, k), a in res.keys.items()}
    assert last == {_commit(0, 0)[0]: 2, _commit(1, 0)[0]: 1, _commit(2, 0)[0]: 8}
    assert res.markers == [(4, 7, True), (5, 8, False), (9, 7, True)]
    assert [(p, k) for _, p, k in res.deferred] == [(9, _commit(1, 0)[0])]  # open: no marker yet
    assert res.summary.txn_batches == 7


def test_one_batch_per_split_defers_to_the_driver(hand_made):
    splits = plan_splits(hand_made["root"], split_bytes=1)
    assert len(splits) == len(LOG)
    deferred = {(p, a[3]) for s in splits for (_, p, _), a in scan_split(s).deferred.items()}
    assert deferred == {(7, 2), (8, 3), (9, 6), (7, 7)}


def test_oracle_follows_kafkas_replay(hand_made):
    report = verify(hand_made["root"], ledger=_ledger(hand_made["ledger"], KAFKA), num_partitions=1)
    assert report.violations == [] and report.stats["records"] == 10


@pytest.mark.parametrize("partition, claimed, at", [(0, 300, 2), (1, 400, 0), (2, 70, 8)])
def test_an_aborted_open_or_stale_transactional_offset_is_not_committed(hand_made, partition, claimed, at):
    ledger = _ledger(hand_made["ledger"], {**KAFKA, partition: claimed})
    report = verify(hand_made["root"], ledger=ledger, num_partitions=1)
    offset = {0: 2, 1: 1, 2: 8}[partition]
    assert report.keys() == {("G2", hand_made["file"], hand_made["positions"][at], offset)}


def test_a_task_of_whole_dirs_resolves_markers_of_later_splits(hand_made):
    """The local scan's tasks hold whole dirs: one split per batch, all in one task, and the
    per-key rows come out as Kafka's replay has them (final_keys applies the markers)."""
    from coordinator.verify.final_keys import finish
    from coordinator.verify.layout import pack
    from coordinator.verify.rows import scan_task

    # All in the cleaned region (region 0), so that count0/f0/l0 are filled too.
    splits = plan_splits(hand_made["root"], split_bytes=1, region_end={"__consumer_offsets-0": 1 << 40})
    (task,) = pack(splits, 1, whole_dirs=True)
    scanned = scan_task(task, engine="python", decode=True)
    rows = finish(scanned.keys, scanned.markers, side="after").to_pylist()
    latest = {r["l"]["partition"]: (r["l"]["offset"], r["l"]["committed_offset"]) for r in rows}
    assert latest == {0: (2, 200), 1: (1, 50), 2: (8, 80)}
    counted = {r["l"]["partition"]: (r["count0"], r["f0"]["offset"], r["l0"]["offset"]) for r in rows}
    assert counted == {0: (2, 0, 2), 1: (1, 1, 1), 2: (2, 7, 8)}  # the aborted and the open one do not count


@pytest.mark.spark
@pytest.mark.parametrize("scan, scan_in", [("python", "executors"), ("auto", "local")])
def test_spark_resolves_markers_across_splits_and_tasks(spark, hand_made, scan, scan_in):
    """The executors' rows (one task per split) meet their markers in Spark; the local scan's in
    its task of the whole dir."""
    from coordinator.verify import spark_checks

    for claims in (KAFKA, {**KAFKA, 0: 300}, {**KAFKA, 1: 400}, {**KAFKA, 2: 70}):
        ledger = _ledger(hand_made["ledger"], claims)
        want = verify(hand_made["root"], ledger=ledger, num_partitions=1)
        got = spark_checks.run(
            spark,
            hand_made["root"],
            ledger=ledger,
            num_partitions=1,
            split_bytes=1,
            pack_bytes=1,
            engine=scan,
            scan_in=scan_in,
        )
        assert (got.keys(), got.counts) == (want.keys(), want.counts)
        assert got.stats["txn_batches"] == 7 and got.stats["splits"] == len(LOG)


def test_generated_logs_hold_committed_aborted_and_open_transactions(clean):
    outcome = {True: 0, False: 0}
    aborted_latest = blind = 0  # keys whose physically last record is aborted / not the committed one
    for p in list_partition_dirs(clean["after"]):
        if not p.name.startswith("__consumer_offsets-"):
            continue
        for base in p.segments:
            for _, h, raw in iter_batches(segment_path(p.path, base)):
                marker = read_marker(raw) if h.is_control else None
                if marker is not None:
                    outcome[marker.commit] += 1
        committed, aborted, last = _kafka_replay(p.path, p.segments)
        aborted_latest += sum(last[k][2] is loc[2] for k, loc in aborted)
        blind += sum(k not in committed or last[k][2] is not committed[k][2] for k in last)
    assert outcome[True] > 10 and outcome[False] > 3, outcome
    # A transaction-blind verifier would take these records for committed offsets (the others
    # are in transactions still open, or older than a plain commit made meanwhile).
    assert aborted_latest > 0 and blind > aborted_latest


def _write(tmp_path, batches: list[bytes]) -> str:
    d = tmp_path / "bad" / "__consumer_offsets-0"
    d.mkdir(parents=True)
    seg = LogSegment(str(d), 0, index_interval_bytes=1, segment_index_bytes=1 << 20)
    for raw in batches:
        seg.append(raw, decode_header(raw))
    seg.become_inactive()
    seg.close()
    return str(tmp_path / "bad")


def test_a_marker_that_does_not_parse_is_s1_and_ends_nothing(tmp_path):
    short = encode_batch(
        1,
        [Record(None, 1000, b"\x00\x00\x00\x01", b"\x00")],
        producer_id=7,
        producer_epoch=0,
        transactional=True,
        control=True,
    )
    root = _write(tmp_path, [_data(0, [(0, 100)], pid=7), short])
    (split,) = plan_splits(root, split_bytes=1 << 30)
    res = scan_split(split)
    assert [(v[0], v[3]) for v in res.violations] == [("S1", 1)]
    assert "end transaction marker" in res.violations[0][4]
    assert res.markers == [] and len(res.deferred) == 1 and not res.keys


@pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize("split_bytes", [1, 1 << 30])
def test_the_compiled_scan_agrees(hand_made, tmp_path, split_bytes):
    from .test_fast_scan import _same_scan

    short = encode_batch(
        1,
        [Record(None, 1000, b"\x00\x00\x00\x01", b"\x00")],
        producer_id=7,
        producer_epoch=0,
        transactional=True,
        control=True,
    )
    bad = _write(tmp_path, [_data(0, [(0, 100)], pid=7), short])
    splits = plan_splits(hand_made["root"], split_bytes=split_bytes) + plan_splits(bad, split_bytes=split_bytes)
    assert sum(len(_same_scan(s)[0]) for s in splits) == 1
