"""`kgc dump` and `kgc check` on real files written by the storage engine."""
from __future__ import annotations

import pytest

from coordinator.__main__ import main
from coordinator.runtime.clock import FakeClock
from storage.batch import Record
from storage.log import Log, LogConfig


@pytest.fixture
def data_dir(tmp_path):
    log = Log.open(tmp_path / "orders-0", LogConfig(), clock=FakeClock(1000))
    for i in range(3):
        log.append_records([Record(offset=0, timestamp=1000 + i, key=b"k%d" % i, value=b"v" * i, headers=[])])
    log.close()
    return tmp_path


def run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code


def test_dump_deep_prints_batches_and_records(data_dir, capsys):
    assert run(["dump", str(data_dir), "--deep"]) == 0
    out = capsys.readouterr().out
    assert out.count("baseOffset: ") == 3
    assert "| offset: 2 CreateTime: 1002 keySize: 2 valueSize: 2" in out
    assert "key: k2 payload: vv" in out


def test_check_passes_a_sound_dir_and_fails_a_torn_tail(data_dir, capsys):
    assert run(["check", str(data_dir)]) == 0
    assert capsys.readouterr().out.strip() == f"{data_dir}: ok"
    with open(data_dir / "orders-0" / "00000000000000000000.log", "ab") as segment:
        segment.write(b"\x00\x01")
    assert run(["check", str(data_dir)]) == 1
    err = capsys.readouterr().err
    assert "00000000000000000000.log: position 213" in err and "torn tail" in err


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no such file"):
        main(["check", str(tmp_path / "absent")])


@pytest.mark.parametrize("fault, status", [(None, 0), ("flipped_byte", 1)])
def test_verify_is_reachable_from_kgc(tmp_path, capsys, fault, status):
    from coordinator.verify.generate import main as generate

    out = tmp_path / "gen"
    generate([str(out), "--records", "2000", "--partitions", "2", "--groups", "4",
              "--segment-bytes", "8192"]
             + (["--fault", fault] if fault else []))
    capsys.readouterr()
    code = run(["verify", str(out / "after"), "--before", str(out / "before"), "--ledger",
                str(out / "ledger.jsonl"), "--engine", "oracle", "--offsets-partitions", "2", "--quiet"])
    assert code == status, capsys.readouterr()
