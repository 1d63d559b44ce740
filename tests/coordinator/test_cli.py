"""The `kgc` command line: `kgc dump`/`check` on real files, and every failure as one line on stderr
that says what to do, exit 2 (the real `kgc` in a subprocess, as users run it)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator.__main__ import main
from coordinator.runtime.clock import FakeClock
from storage.batch import Record
from storage.log import Log, LogConfig
from tests.support.waiting import wait_until

KGC = Path(sys.executable).with_name("kgc")
DEADLINE = 60  # seconds a command may take before the test calls it hung


def kgc(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(KGC)] if KGC.exists() else [sys.executable, "-m", "coordinator"]
    return subprocess.run(command + [str(a) for a in args], capture_output=True, text=True, timeout=DEADLINE, env=env)


def one_line_failure(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """The command failed with status 2 and one line on stderr holding every word, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgc"), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


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


@pytest.mark.parametrize("command", ["dump", "check"])
def test_a_missing_path_is_one_line_and_exit_2(tmp_path, command):
    one_line_failure(kgc(command, tmp_path / "absent"), "absent: no such file or directory", "data dir")


@pytest.mark.parametrize("fault, status", [(None, 0), ("flipped_byte", 1)])
def test_verify_is_reachable_from_kgc(tmp_path, capsys, fault, status):
    from coordinator.verify.generate import main as generate

    out = tmp_path / "gen"
    generate(
        [str(out), "--records", "2000", "--partitions", "2", "--groups", "4", "--segment-bytes", "8192"]
        + (["--fault", fault] if fault else [])
    )
    capsys.readouterr()
    code = run(
        [
            "verify",
            str(out / "after"),
            "--before",
            str(out / "before"),
            "--ledger",
            str(out / "ledger.parquet"),
            "--engine",
            "oracle",
            "--offsets-partitions",
            "2",
            "--quiet",
        ]
    )
    assert code == status, capsys.readouterr()


# -- start-up failures -----------------------------------------------------------------------------
def test_a_port_in_use_names_the_port(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        line = one_line_failure(
            kgc("serve", "--port", port, "--data-dir", tmp_path / "d"), f"port {port} is in use", "--port"
        )
    assert "Errno" not in line


def test_a_data_dir_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    one_line_failure(kgc("serve", "--port", 0, "--data-dir", tmp_path / "f"), "is a file, not a directory")


def test_a_data_dir_that_cannot_be_created(tmp_path):
    (tmp_path / "f").write_text("x")
    one_line_failure(
        kgc("serve", "--port", 0, "--data-dir", tmp_path / "f" / "sub"), "cannot create data dir", "a parent is a file"
    )


@pytest.mark.parametrize("port", ["-5", "70000", "http"])
def test_a_port_outside_0_to_65535(tmp_path, port):
    one_line_failure(kgc("serve", "--port", port, "--data-dir", tmp_path), "expected a port 0..65535")


@pytest.mark.parametrize("brokers", ["0", "65"])
def test_brokers_outside_1_to_64(tmp_path, brokers):
    one_line_failure(
        kgc("serve", "--brokers", brokers, "--port", 0, "--data-dir", tmp_path / "d"),
        "between 1 and 64",
        f"got {brokers}",
    )


def test_an_unknown_log_level(tmp_path):
    one_line_failure(kgc("serve", "--log-level", "LOUD", "--data-dir", tmp_path / "d"), "'LOUD'", "DEBUG")


def test_a_misspelt_setting_gets_did_you_mean(tmp_path):
    one_line_failure(
        kgc("serve", "--set", "group.max.sise=3", "--data-dir", tmp_path / "d"),
        "unknown setting 'group.max.sise'",
        "did you mean group.max.size",  # or group.share.max.size: both are one edit away
    )


def test_a_bad_value_names_the_setting_and_the_type(tmp_path):
    one_line_failure(
        kgc("serve", "--set", "group.max.size=many", "--data-dir", tmp_path / "d"),
        "group.max.size",
        "expected an integer, got 'many'",
    )


def test_a_non_empty_dir_kgc_did_not_create_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    one_line_failure(kgc("serve", "--port", 0, "--data-dir", tmp_path), "not empty (notes.txt)", "--adopt-data-dir")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "kgc.meta.properties").exists()


def test_debug_shows_the_traceback(tmp_path):
    (tmp_path / "f").write_text("x")
    result = kgc("--debug", "serve", "--port", 0, "--data-dir", tmp_path / "f")
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "DataDirError" in result.stderr


# -- other commands --------------------------------------------------------------------------------
def test_transcript_failures_exit_2(tmp_path):
    (tmp_path / "t.txt").write_text("not json\n")
    one_line_failure(kgc("transcript", tmp_path / "t.txt"), "not JSON")
    one_line_failure(kgc("transcript", tmp_path / "absent.jsonl"), "No such file")


def test_a_closed_pipe_ends_quietly(tmp_path):
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first line is written: `kgc settings | true`
    command = [str(KGC)] if KGC.exists() else [sys.executable, "-m", "coordinator"]
    result = subprocess.run(command + ["settings"], stdout=writer, stderr=subprocess.PIPE, text=True, timeout=DEADLINE)
    os.close(writer)
    assert result.returncode == 0 and result.stderr == ""


def test_verify_without_the_extra_says_how_to_install_it(tmp_path):
    script = "import sys; sys.modules['pyspark'] = None; from coordinator.__main__ import main; main(sys.argv[1:])"
    result = subprocess.run(
        [sys.executable, "-c", script, "verify", str(tmp_path)], capture_output=True, text=True, timeout=DEADLINE
    )
    one_line_failure(result, "pip install 'kafka-group-coordinator[verify]'", "Java 17", "--engine oracle")


def test_verify_without_java_says_java_17_is_needed(tmp_path, monkeypatch, capsys):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())  # as if pyspark were installed
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run(["verify", str(tmp_path)]) == 2
    assert "needs Java 17 or newer" in capsys.readouterr().err
    java = tmp_path / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    java.chmod(0o755)
    assert run(["verify", str(tmp_path)]) == 2
    assert "is Java 11" in capsys.readouterr().err


# -- signals ---------------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_sigterm_during_start_up_stops_it(tmp_path):
    """The server blocks in its start-up (opening the transcript, a FIFO nobody reads) as it would
    in a long recovery or topic creation; SIGTERM ends it there with one line and status 143."""
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    command = [str(KGC)] if KGC.exists() else [sys.executable, "-m", "coordinator"]
    proc = subprocess.Popen(
        command + ["serve", "--port", "0", "--data-dir", str(tmp_path / "d"), "--transcript", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        meta = tmp_path / "d" / "kgc.meta.properties"
        # past the data dir checks: in serve(), about to block on the FIFO
        wait_until(meta.exists, DEADLINE, interval=0.01, message="the data dir's kgc.meta.properties")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "serving" not in out
    assert "SIGTERM: stopped while starting" in err and "Traceback" not in err


@pytest.mark.parametrize("processes", [[], ["--brokers", "2", "--processes"]])
def test_a_group_setting_out_of_its_range_is_one_line_and_exit_2(tmp_path, processes):
    """GroupCoordinatorConfig's range checks are a bad setting, not an internal error; with
    --processes the parent says it once, before any broker process starts."""
    one_line_failure(
        kgc(
            "serve",
            *processes,
            "--port",
            0,
            "--set",
            "group.consumer.heartbeat.interval.ms=500",
            "--data-dir",
            tmp_path / "d",
        ),
        "group.consumer.heartbeat.interval.ms must be between",
    )
