"""A Spark standalone cluster on loopback for the tests: one master and N workers started with
the pyspark distribution's own `bin/spark-class`, each its own process group, all stopped
(terminate, then kill after a grace period) when the context exits. Every wait polls a
condition under a deadline; nothing sleeps for a fixed time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.waiting import wait_until

__all__ = ["standalone_cluster", "spark_home"]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _until(what: str, check, deadline: float, procs: list[subprocess.Popen]) -> None:
    """Poll `check` until `deadline` (monotonic), failing at once if one of `procs` exited."""

    def ready() -> bool:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(
                    f"{p.args[1] if len(p.args) > 1 else p.args} exited with {p.returncode} while waiting for {what}"
                )
        return bool(check())

    wait_until(ready, max(0.0, deadline - time.monotonic()), interval=0.2, message=what)


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


@contextmanager
def standalone_cluster(
    tmp: Path, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 120
) -> Iterator[str]:
    """Yields the master URL (spark://127.0.0.1:PORT) once `workers` workers registered."""
    spark_class = str(spark_home() / "bin" / "spark-class")
    env = dict(
        os.environ,
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp / "logs"),
        SPARK_NO_DAEMONIZE="1",
    )
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = []

    def start(args: list[str], log: str) -> None:
        f = open(tmp / log, "wb")
        logs.append(f)
        procs.append(
            subprocess.Popen(
                [spark_class, *args],
                env=env,
                stdout=f,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        )

    deadline = time.monotonic() + timeout
    try:
        start(
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
            "master.log",
        )
        _until("the master's web UI", lambda: _alive_workers(ui) == 0 and _listening(ui), deadline, procs)
        for i in range(workers):
            work = tmp / f"worker-{i}"
            work.mkdir()
            start(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cores),
                    "--memory",
                    memory,
                    "--webui-port",
                    str(_free_port()),
                    "--work-dir",
                    str(work),
                ],
                f"worker-{i}.log",
            )
        _until(f"{workers} workers", lambda: _alive_workers(ui) >= workers, deadline, procs)
        yield url
    finally:
        _stop(procs)
        for f in logs:
            f.close()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0
