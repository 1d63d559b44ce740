"""Verifier without Spark: the scanner, the split planner, the ledger semantics, the oracle and
the CLI's oracle engine, on the session's generated datasets."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from coordinator.verify import cli, kernels
from coordinator.verify.faults import iter_batches
from coordinator.verify.layout import plan_splits, segment_path
from coordinator.verify.rules import continuity, replay_ledger
from coordinator.verify.scan import scan_split

from .conftest import FAULT_KINDS, SPLIT_BYTES


def _key(f: dict) -> tuple:
    return (f["check"], f["file"], f["position"], f["offset"])


def test_importing_the_cli_does_not_load_pyspark():
    code = (
        "import sys, coordinator.verify.cli, coordinator.verify.oracle; sys.exit(1 if 'pyspark' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_oracle_passes_clean_logs(clean):
    from .conftest import run_oracle

    report = run_oracle(clean)
    assert report.violations == []
    assert report.stats["records"] > 0 and report.stats["before_records"] > report.stats["records"]


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_oracle_catches_fault(kind, faulty, faulty_oracle_report):
    fault = next(f for f in faulty["faults"] if f["kind"] == kind)
    assert _key(fault) in faulty_oracle_report.keys()


def test_oracle_reports_nothing_outside_the_faulted_partitions(faulty, faulty_oracle_report):
    touched = {os.path.basename(os.path.dirname(f["file"])) for f in faulty["faults"]}
    for v in faulty_oracle_report.violations:
        where = v["file"] if os.path.isdir(v["file"]) else os.path.dirname(v["file"])
        assert os.path.basename(where) in touched, v


def test_split_points_are_batch_starts_even_with_a_corrupt_index(faulty):
    fault = next(f for f in faulty["faults"] if f["kind"] == "index_mid_batch")
    pdir = os.path.dirname(fault["file"])
    splits = [s for s in plan_splits(faulty["after"], split_bytes=256) if s.dir == pdir]
    assert len(splits) > len({s.segment for s in splits})  # some segment really was split
    for s in splits:
        starts = {pos for pos, _, _ in iter_batches(s.log_path)}
        assert s.start in starts


def _counted(rows: list[dict]) -> dict:
    """Per (name, region, key): (count, first offset, last offset, last value hash) of the
    counted records, deferred rows resolved against the M rows (as the Spark job does)."""
    markers: dict = {}
    for r in sorted((r for r in rows if r["kind"] == "M"), key=lambda r: r["offset"]):
        markers.setdefault((r["name"], r["producer_id"]), []).append((r["offset"], r["commit"]))
    out: dict = {}
    for r in (r for r in rows if r["kind"] == "K"):
        if r["producer_id"] is not None:
            after = [c for o, c in markers.get((r["name"], r["producer_id"]), []) if o > r["last_offset"]]
            if not after or not after[0]:
                continue
        k = (r["name"], r["region"], r["key"])
        a = out.get(k)
        if a is None or r["last_offset"] > a[2]:
            a, b = (r["count"], r["first_offset"], r["last_offset"], r["value_hash"]), a
        else:
            a, b = a, (r["count"], r["first_offset"], r["last_offset"], r["value_hash"])
        out[k] = a if b is None else (a[0] + b[0], min(a[1], b[1]), a[2], a[3])
    return out


@pytest.mark.parametrize(
    "engine",
    [
        "python",
        pytest.param("compiled", marks=pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed")),
    ],
)
def test_key_rows_merged_over_sub_splits_equal_whole_segments(clean, engine):
    import pyarrow as pa

    from coordinator.verify.rows import task_rows

    whole = plan_splits(clean["before"], split_bytes=1 << 40)
    parts = plan_splits(clean["before"], split_bytes=SPLIT_BYTES)
    assert len(parts) > len(whole)

    def rows(splits):
        return pa.Table.from_batches(list(task_rows(splits, engine=engine))).to_pylist()

    got, want = rows(parts), rows(whole)
    deferred = sum(r["kind"] == "K" and r["producer_id"] is not None for r in got)
    assert deferred > sum(r["kind"] == "K" and r["producer_id"] is not None for r in want) > 0
    assert _counted(got) == _counted(want) and len(_counted(got)) > 1000


def test_continuity_flags_offsets_overlapping_the_next_segment():
    base = dict(name="t-0", dir="/d", end=0, reached=0, broken=False, batches=1, records=1, max_timestamp=0)
    rows = [
        dict(base, segment=0, start=0, first_base=0, first_pos=0, last_offset=12, last_pos=100, log_end=13),
        dict(base, segment=10, start=0, first_base=13, first_pos=0, last_offset=20, last_pos=0, log_end=21),
    ]
    viols, leo = continuity(rows)
    assert ("S3", segment_path("/d", 0), 100, 12) in {v[:4] for v in viols}
    assert leo == {"/d": 21}


@pytest.mark.parametrize("row_group", [2, 1 << 18])
def test_ledger_replay_applies_deletions_in_sequence(tmp_path, monkeypatch, row_group):
    """The reference (rules.replay_ledger) and the Arrow replay the Spark engine uses, which
    folds the ledger in a row group at a time (here also two events at a time)."""
    from coordinator.verify import ledger as ledger_module

    monkeypatch.setattr(ledger_module, "_ROW_GROUP", row_group)
    path = tmp_path / "ledger.jsonl"
    events = [
        {"seq": 1, "op": "commit", "group": "g", "topic": "t", "partition": 0, "offset": 5},
        {"seq": 2, "op": "commit", "group": "g", "topic": "t", "partition": 1, "offset": 7},
        {"seq": 3, "op": "delete_offset", "group": "g", "topic": "t", "partition": 0},
        {"seq": 5, "op": "delete_group", "group": "g"},
        {"seq": 6, "op": "commit", "group": "g", "topic": "t", "partition": 2, "offset": 9, "metadata": "m"},
        {"seq": 4, "op": "commit", "group": "h", "topic": "t", "partition": 0, "offset": 1},
        {"seq": 8, "op": "commit", "group": "h", "topic": "t", "partition": 1, "offset": 3},
        {"seq": 7, "op": "commit", "group": "h", "topic": "t", "partition": 1, "offset": 2},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    want = {("g", "t", 2): ("g", 9, "m"), ("h", "t", 0): ("h", 1, ""), ("h", "t", 1): ("h", 3, "")}
    assert replay_ledger(str(path)) == want
    got = ledger_module.replay_table(str(path)).to_pylist()
    assert {(r["group"], r["topic"], r["partition"]): (r["group"], r["offset"], r["metadata"]) for r in got} == want
    path.write_text(json.dumps({"seq": 1, "op": "rename_group", "group": "g"}) + "\n")
    with pytest.raises(ValueError, match="unknown ledger op 'rename_group'"):
        ledger_module.replay_table(str(path))


def test_a_missing_commit_without_a_partition_count_is_located_at_the_data_dir(clean, tmp_path):
    """--offsets-partitions 0 (placement unknown): an acknowledged commit the log lacks is
    reported at the data dir instead of failing to name its partition."""
    from coordinator.verify.ledger import read_events
    from coordinator.verify.oracle import verify

    path = tmp_path / "ledger.jsonl"
    events = list(read_events(clean["ledger"])) + [
        {"op": "commit", "seq": 1 << 62, "group": "nobody", "topic": "t", "partition": 0, "offset": 1}
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    report = verify(clean["after"], ledger=str(path), num_partitions=0)
    assert report.keys() == {("G2", clean["after"], None, None)}


def _cli_args(m: dict, report: str) -> list[str]:
    return [
        m["after"],
        "--before",
        m["before"],
        "--ledger",
        m["ledger"],
        "--engine",
        "oracle",
        "--cleaned-at-ms",
        str(m["cleaned_at_ms"]),
        "--offsets-partitions",
        str(m["partitions"]),
        "--report",
        report,
        "--quiet",
    ]


def test_cli_oracle_engine_exit_codes_and_report(clean, faulty, tmp_path, capsys):
    assert cli.main(_cli_args(clean, str(tmp_path / "clean.json"))) == 0
    assert json.loads((tmp_path / "clean.json").read_text())["ok"] is True
    assert cli.main(_cli_args(faulty, str(tmp_path / "faulty.json"))) == 1
    doc = json.loads((tmp_path / "faulty.json").read_text())
    found = {_key(v) for v in doc["violations"]}
    assert all(_key(f) in found for f in faulty["faults"])
    assert "VIOLATIONS FOUND" in capsys.readouterr().out


def test_cli_rejects_a_missing_dir(tmp_path):
    assert cli.main([str(tmp_path / "nope"), "--engine", "oracle", "--quiet"]) == 2


def test_cli_rejects_a_conf_without_a_value(tmp_path):
    assert cli.main([str(tmp_path), "--conf", "spark.executor.memory", "--quiet"]) == 2


def test_cli_rejects_a_local_scan_on_a_cluster_master(tmp_path, capsys):
    assert cli.main([str(tmp_path), "--master", "spark://h:7077", "--scan-in", "local", "--quiet"]) == 2
    assert "--scan-in local needs a local master" in capsys.readouterr().err


@pytest.mark.parametrize(
    "master, cores", [("local", 1), ("local[3]", 3), ("local[2, 4]", 2), ("local[*]", os.cpu_count()), ("yarn", None)]
)
def test_local_cores_reads_the_master(master, cores):
    from coordinator.verify.local_scan import local_cores

    assert local_cores(master) == cores


def _segment_with_index(tmp_path, entries_for) -> str:
    """One partition dir, one segment of 40 one-record batches, index written by hand."""
    from storage.batch import Record, encode_batch

    pdir = tmp_path / "t-0"
    pdir.mkdir()
    log = bytearray()
    starts = []
    for i in range(40):
        starts.append(len(log))
        log += encode_batch(i * 3, [Record(i * 3, 1000 + i, b"k%d" % i, b"v" * 300)], last_offset_delta=2)
    (pdir / f"{0:020d}.log").write_bytes(bytes(log))
    idx = b"".join(rel.to_bytes(4, "big") + pos.to_bytes(4, "big") for rel, pos in entries_for(starts))
    (pdir / f"{0:020d}.index").write_bytes(idx)
    (pdir / f"{0:020d}.timeindex").write_bytes(b"")
    return str(tmp_path)


@pytest.mark.parametrize("split_bytes", [1 << 30, 2000])
def test_index_entry_may_name_a_later_offset_of_its_chunk(tmp_path, split_bytes):
    # Entry offset = last offset of the batch AFTER the one it points at (a two-batch chunk),
    # as storage's cleaner and Kafka's older LogSegment.append write them: sound.
    root = _segment_with_index(tmp_path, lambda st: [(3 * i + 5, st[i]) for i in range(4, 40, 8)])
    splits = plan_splits(root, split_bytes=split_bytes)
    assert (len(splits) > 1) == (split_bytes < 1 << 30)
    viols = [v for s in splits for v in scan_split(s).violations]
    assert viols == []


@pytest.mark.parametrize("split_bytes", [1 << 30, 2000])
def test_index_entry_below_its_batch_is_reported(tmp_path, split_bytes):
    root = _segment_with_index(tmp_path, lambda st: [(3 * i - 1, st[i]) for i in range(4, 40, 8)])
    splits = plan_splits(root, split_bytes=split_bytes)
    results = [scan_split(s) for s in splits]
    viols = {v[:4] for r in results for v in r.violations}
    path = segment_path(os.path.join(root, "t-0"), 0, ".index")
    assert viols == {("S5", path, k * 8, 3 * i - 1) for k, i in enumerate(range(4, 40, 8))}
