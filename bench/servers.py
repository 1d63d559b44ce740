"""The servers the benchmarks compare, each in its own process: kgc (this tree, or another
checkout given with --baseline DIR for A/B against an earlier commit) and librdkafka's mock
cluster (inside the confluent-kafka wheel, driven through ctypes in a child process).

    kgc = start_kgc(data_dir, settings={...}, topics={"bench": 32}, baseline=None)
    mock = start_mock(topics={"bench": 32}, share={"auto_offset_reset": 1, "record_lock_duration": 2000})
    ... kgc.bootstrap, kgc.pid, cpu_seconds(kgc.pid) ...
    kgc.stop(); mock.stop()

`python bench/servers.py mock --topic bench:32 [--share NAME=VALUE]` runs the mock alone (prints its
bootstrap line); each --share calls rd_kafka_mock_sharegroup_set_NAME(cluster, VALUE) before it serves.
Figures only: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Running:
    name: str
    proc: subprocess.Popen
    bootstrap: str

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def port(self) -> int:
        return int(self.bootstrap.split(",")[0].rsplit(":", 1)[1])

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def rss_mib(self) -> float:
        return rss_mib(self.pid)

    def stop(self, timeout: float = 30) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, all its threads (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def kgc_command(baseline: str | None = None) -> tuple[list[str], dict[str, str], str]:
    """(argv prefix, environment, cwd) that run `python -m coordinator` from this tree or from the
    checkout `baseline` (its modules shadow this tree's through PYTHONPATH)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users run with bytecode caches: so do we
    cwd = str(ROOT if baseline is None else Path(baseline).resolve())
    env["PYTHONPATH"] = cwd
    return [sys.executable, "-m", "coordinator"], env, cwd


def start_kgc(
    data_dir: str,
    *,
    settings: dict[str, object] | None = None,
    topics: dict[str, int] | None = None,
    baseline: str | None = None,
    extra: list[str] | None = None,
    profile: str | None = None,
    wrapper: list[str] | None = None,
) -> Running:
    """`wrapper`: a script (and its arguments) that runs `python -m coordinator` itself, with the
    same arguments after them (bench/trio_steps.py records the server's longest trio steps)."""
    prefix, env, cwd = kgc_command(baseline)
    if profile:
        prefix = [prefix[0], "-m", "cProfile", "-o", profile, *prefix[1:]]
    elif wrapper:
        prefix = [prefix[0], *wrapper]
    args = [*prefix, "serve", "--port", "0", "--data-dir", data_dir, "--log-level", "WARNING", *(extra or [])]
    for name, value in (settings or {}).items():
        args += ["--set", f"{name}={value}"]
    for name, partitions in (topics or {}).items():
        args += ["--create-topic", f"{name}:{partitions}"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    match = re.search(r"bootstrap=(\S+)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"kgc did not start: {line!r}")
    return Running("kgc" if baseline is None else f"kgc@{Path(baseline).name}", proc, match.group(1))


def start_mock(topics: dict[str, int] | None = None, brokers: int = 1, share: dict[str, int] | None = None) -> Running:
    """`share`: the mock's share-group defaults by setter name (MOCK_SHARE_SETTERS), e.g.
    {"auto_offset_reset": 1, "heartbeat_interval": 500}; they apply to every share group it creates."""
    args = [sys.executable, str(Path(__file__).resolve()), "mock", "--brokers", str(brokers)]
    for name, partitions in (topics or {}).items():
        args += ["--topic", f"{name}:{partitions}"]
    for name, value in (share or {}).items():
        if name not in MOCK_SHARE_SETTERS:
            raise SystemExit(f"unknown mock share setting {name!r}; known: {', '.join(MOCK_SHARE_SETTERS)}")
        args += ["--share", f"{name}={int(value)}"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    match = re.search(r"bootstrap=(\S+)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"the mock did not start: {line!r}")
    return Running("mock", proc, match.group(1))


# -- the mock, in its own process ----------------------------------------------------------------
# rd_kafka_mock_sharegroup_set_<name>(cluster, int) in librdkafka 2.16 (rdkafka_mock.h). The session
# timeout and heartbeat interval reach only share groups created afterwards, the rest every group.
# auto_offset_reset: 0 latest (the default), 1 earliest; 0 means "unlimited" for the limits.
MOCK_SHARE_SETTERS = (
    "session_timeout",
    "heartbeat_interval",
    "max_delivery_attempts",
    "record_lock_duration",
    "isolation_level",
    "max_size",
    "max_fetch_sessions",
    "max_record_locks",
    "auto_offset_reset",
)


def _librdkafka() -> ctypes.CDLL:
    import confluent_kafka

    libs = glob.glob(os.path.join(os.path.dirname(confluent_kafka.__file__) + ".libs", "librdkafka*.so*"))
    if not libs:
        raise SystemExit("librdkafka not found next to the confluent_kafka package")
    lib = ctypes.CDLL(libs[0])
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    for name in MOCK_SHARE_SETTERS:
        setter = getattr(lib, f"rd_kafka_mock_sharegroup_set_{name}")
        setter.restype, setter.argtypes = None, [ctypes.c_void_p, ctypes.c_int]
    return lib


def run_mock(brokers: int, topics: list[tuple[str, int]], share: Sequence[tuple[str, int]] = ()) -> None:
    lib = _librdkafka()
    conf = lib.rd_kafka_conf_new()
    err = ctypes.create_string_buffer(512)
    lib.rd_kafka_conf_set(conf, b"log_level", b"3", err, 512)
    handle = lib.rd_kafka_new(0, conf, err, 512)  # RD_KAFKA_PRODUCER: the mock's owner
    if not handle:
        raise SystemExit(f"rd_kafka_new: {err.value.decode()}")
    cluster = lib.rd_kafka_mock_cluster_new(handle, brokers)
    for name, partitions in topics:
        lib.rd_kafka_mock_topic_create(cluster, name.encode(), partitions, 1)
    for name, value in share:
        getattr(lib, f"rd_kafka_mock_sharegroup_set_{name}")(cluster, value)
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))  # before the line: a parent may stop us at once
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print(f"mock: serving bootstrap={lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()}", flush=True)
    sys.stdin.read()  # until the parent closes our stdin (or signals us)
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description="run librdkafka's mock cluster in this process")
    commands = parser.add_subparsers(dest="command", required=True)
    mock = commands.add_parser("mock")
    mock.add_argument("--brokers", type=int, default=1)
    mock.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS")
    mock.add_argument("--share", action="append", default=[], metavar="NAME=VALUE", help=", ".join(MOCK_SHARE_SETTERS))
    args = parser.parse_args()
    topics = [(t.rpartition(":")[0], int(t.rpartition(":")[2])) for t in args.topic]
    share = [(s.partition("=")[0], s.partition("=")[2]) for s in args.share]
    for name, value in share:
        if name not in MOCK_SHARE_SETTERS or not value.lstrip("-").isdigit():
            parser.error(f"--share {name}={value}: expected one of {', '.join(MOCK_SHARE_SETTERS)} = an integer")
    run_mock(args.brokers, topics, [(name, int(value)) for name, value in share])


def wait_for(predicate, timeout: float, what: str, step: float = 0.002) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(step)


if __name__ == "__main__":
    main()
