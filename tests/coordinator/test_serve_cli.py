"""`kgc serve`'s life: SIGTERM during synchronous start-up work, a clean stop, and a start-up
failure raised inside trio's exception groups coming back as one line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator import serve_cli, server
from coordinator.config import Config

KGC = Path(sys.executable).with_name("kgc")


def test_sigterm_interrupts_synchronous_topic_creation(tmp_path, monkeypatch, capsys):
    created: list[int] = []

    def ensure(self, name, partitions, replication_factor=1):  # stands for TopicRegistry's own loop
        for index in range(partitions):
            if index == 5:
                os.kill(os.getpid(), signal.SIGTERM)
            created.append(index)
        raise AssertionError("creation was not interrupted")

    monkeypatch.setattr(server.TopicRegistry, "ensure", ensure)
    config = Config({"data.dir": str(tmp_path / "d"), "port": 0})
    assert serve_cli.run(config, {"big": 900}, "WARNING") == 128 + signal.SIGTERM
    assert 5 <= len(created) < 900
    assert "SIGTERM: stopped while starting" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back as it was


def test_a_port_in_use_inside_trio_comes_back_as_one_serve_error(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        config = Config({"data.dir": str(tmp_path / "d"), "port": port})
        with pytest.raises(serve_cli.ServeError, match=f"port {port} is in use"):
            serve_cli.run(config, {}, "WARNING")


def test_serving_then_sigterm_stops_cleanly_and_restarts_on_the_same_dir(tmp_path):
    command = [str(KGC)] if KGC.exists() else [sys.executable, "-m", "coordinator"]
    for _ in range(2):
        proc = subprocess.Popen(
            command + ["serve", "--port", "0", "--data-dir", str(tmp_path / "d"), "--create-topic", "orders:3"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert first.startswith("kgc: serving bootstrap=127.0.0.1:"), first
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 0, err
        assert "server.stopped" in err and "Traceback" not in err
