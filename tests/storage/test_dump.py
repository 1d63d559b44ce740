"""`dump` output layout and `check` problems (file, position, offset)."""

from __future__ import annotations

import io
import json
import os

from storage.batch import Record, decode_header
from storage.dump import check, dump
from tests.storage.helpers import FakeClock, fill, open_log


def make_closed_log(path, batches=12, **overrides):
    log = open_log(path, FakeClock(1_000), **overrides)
    fill(log, batches)
    log.append_records(
        [Record(key=b"gone", value=None, headers=[("h1", b"x"), ("h2", None)])],
        producer_id=5,
        producer_epoch=1,
        base_sequence=10,
    )
    log.close()
    return log


def test_dump_prints_kafka_dump_log_layout(tmp_path):
    make_closed_log(tmp_path, segment_bytes=1 << 20)
    out = io.StringIO()
    dump(tmp_path / "00000000000000000000.log", out, deep=True)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"Dumping {tmp_path / '00000000000000000000.log'}"
    assert lines[1] == "Log starting offset: 0"
    first = lines[2]
    assert first.startswith(
        "baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 "
        "producerId: -1 producerEpoch: -1 partitionLeaderEpoch: -1 "
        "isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 1000 size: "
    )
    crc = decode_header((tmp_path / "00000000000000000000.log").read_bytes()).crc
    assert first.endswith(f"magic: 2 compresscodec: none crc: {crc} isvalid: true")
    assert lines[3] == (
        "| offset: 0 CreateTime: 1000 keySize: 5 valueSize: 20 sequence: -1 "
        "headerKeys: [] key: key-0 payload: 0:xxxxxxxxxxxxxxxxxx"
    )
    assert lines[-2].startswith(
        "baseOffset: 36 lastOffset: 36 count: 1 baseSequence: 10 lastSequence: 10 producerId: 5 producerEpoch: 1"
    )
    assert lines[-1] == (
        "| offset: 36 CreateTime: 1000 keySize: 4 valueSize: -1 sequence: 10 "
        "headerKeys: [h1,h2] key: gone payload: null"
    )


def test_dump_json_and_whole_data_dir(tmp_path):
    make_closed_log(tmp_path / "topic-0", segment_bytes=600)
    make_closed_log(tmp_path / "topic-1", batches=2)
    out = io.StringIO()
    dump(tmp_path, out, deep=True, json=True, index=True)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    records = [r for r in rows if r["type"] == "record"]
    assert len(records) == 37 + 7
    assert {r["type"] for r in rows} == {"batch", "record", "index", "timeindex"}
    assert all(r["isvalid"] for r in rows if r["type"] == "batch")


def test_check_passes_a_clean_log(tmp_path):
    make_closed_log(tmp_path / "p-0", segment_bytes=600, index_interval_bytes=100)
    assert check(tmp_path) == []


def test_check_reports_a_torn_tail_precisely(tmp_path):
    make_closed_log(tmp_path, segment_bytes=1 << 20)
    seg = tmp_path / "00000000000000000000.log"
    data = seg.read_bytes()
    last_start = 0
    while last_start + decode_header(data, last_start).size < len(data):
        last_start += decode_header(data, last_start).size
    os.truncate(seg, len(data) - 5)
    (problem,) = check(tmp_path)
    assert (problem.file, problem.position, problem.offset) == (str(seg), last_start, 36)
    assert "torn tail" in problem.reason


def test_check_reports_bad_crc_with_file_position_offset(tmp_path):
    make_closed_log(tmp_path, segment_bytes=600)
    seg = tmp_path / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    second = decode_header(data, 0).size
    data[second + 50] ^= 1
    seg.write_bytes(bytes(data))
    assert [(p.file, p.position, p.offset, p.reason) for p in check(tmp_path)] == [
        (str(seg), second, 3, "CRC-32C mismatch")
    ]


def test_check_reports_bad_index_and_stray_swap_files(tmp_path):
    make_closed_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=100)
    index = tmp_path / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    data[7] ^= 1  # first entry's position no longer a batch start
    index.write_bytes(bytes(data))
    (problem,) = check(tmp_path)
    assert problem.file == str(index) and problem.position == 0 and "not a batch start" in problem.reason
    (tmp_path / "00000000000000000000.log.swap").write_bytes(b"")
    assert "interrupted cleaner swap" in check(tmp_path)[0].reason


def test_dump_of_one_segment_with_index_lists_entries_and_finds_no_problem(tmp_path):
    make_closed_log(tmp_path, segment_bytes=1 << 20, index_interval_bytes=100)
    out = io.StringIO()
    dump(tmp_path / "00000000000000000000.log", out, index=True)
    text = out.getvalue()
    assert f"Dumping {tmp_path / '00000000000000000000.index'}" in text
    assert "offset: 5 position: " in text and "timestamp: 1000 offset: " in text
    assert "Index problem" not in text


def test_check_accepts_an_open_logs_preallocated_active_index(tmp_path):
    log = open_log(tmp_path, FakeClock(1_000), segment_bytes=600, index_interval_bytes=100)
    fill(log, 30)
    assert check(tmp_path) == []  # live: the active index is zero-filled past its entries
    log.close()
    assert check(tmp_path) == []


def test_check_accepts_a_roll_cut_before_the_new_segments_indexes_only_while_it_is_empty(tmp_path):
    """A kill -9 between creating a rolled segment's .log and its indexes leaves an empty newest
    segment without them (recovery makes them); a newest segment holding batches without its
    index is a problem."""
    for name, roll in (("rolled", True), ("written", False)):
        log = open_log(tmp_path / name, FakeClock(1_000), segment_bytes=1 << 20, index_interval_bytes=100)
        fill(log, 10)
        if roll:
            log.roll()
        newest = log.segments[-1].log_path
        log.close()
        assert (os.path.getsize(newest) == 0) is roll
        for suffix in (".index", ".timeindex"):
            os.remove(newest[:-4] + suffix)
    assert check(tmp_path / "rolled") == []
    assert [p.reason for p in check(tmp_path / "written")] == ["index file is missing"]
