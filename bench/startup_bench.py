"""Start-up: from exec to a connection accepted, and to the first ApiVersions answer.

    .venv/bin/python bench/startup_bench.py [--runs 10] [--baseline DIR] [--no-mock]

Each run execs `python -m coordinator serve` on a fresh empty data dir and a port picked free just
before, then polls that port: "accepts" is the first successful TCP connect (the kernel accepts
into the listen backlog once the port is bound and listening), "answers" the first ApiVersions v0
response on that connection (`kgc serve` answers it before trio and the server are imported:
net/early_responder.py), "serves" the answer to a Metadata v0 sent next on the same connection
(the server imported and built, the data dir prepared: what a client waits for next). On a busy
machine wall times mostly measure the share of CPU the server got; "cpu" is the CPU time the kgc
process (all its threads, /proc/PID/task/*/schedstat) had used when each answer arrived. The mock is
librdkafka's mock cluster in its own Python process (ctypes, bench/servers.py): exec to its
bootstrap line, Python's own start-up included, and to its first ApiVersions answer. Prints
min/median/max in milliseconds; asserts nothing (bench/ rule).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import kgc_command  # noqa: E402

# ApiVersions v0 request: size, api_key 18, version 0, correlation id 1, client id "bench".
_CLIENT = b"bench"
_BODY = struct.pack(">hhih", 18, 0, 1, len(_CLIENT)) + _CLIENT
_API_VERSIONS = struct.pack(">i", len(_BODY)) + _BODY
# Metadata v0, correlation id 2, every topic (an empty list in v0).
_META = struct.pack(">hhih", 3, 0, 2, len(_CLIENT)) + _CLIENT + struct.pack(">i", 0)
_METADATA = struct.pack(">i", len(_META)) + _META


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _connect(port: int, deadline: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"nothing listened on {port} in time") from None
            time.sleep(0.0005)


def _answered(sock: socket.socket, request: bytes = _API_VERSIONS) -> None:
    sock.sendall(request)
    head = sock.recv(4, socket.MSG_WAITALL)
    if len(head) != 4:
        raise SystemExit("the server closed the connection instead of answering")
    size = struct.unpack(">i", head)[0]
    sock.recv(size, socket.MSG_WAITALL)


def _cpu_ms(pid: int) -> float:
    """CPU time the process's threads have run so far (Linux; NaN elsewhere)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return float("nan")
    total = 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total / 1e6


def time_kgc(baseline: str | None) -> tuple[float, float, float, float, float]:
    prefix, env, cwd = kgc_command(baseline)
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="kgc-startup-") as data:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [*prefix, "serve", "--port", str(port), "--data-dir", os.path.join(data, "d"), "--log-level", "WARNING"],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            sock = _connect(port, t0 + 30)
            accepted = time.monotonic() - t0
            with sock:
                _answered(sock)
                answered, answered_cpu = time.monotonic() - t0, _cpu_ms(proc.pid)
                _answered(sock, _METADATA)
                served, served_cpu = time.monotonic() - t0, _cpu_ms(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    return accepted * 1000, answered * 1000, served * 1000, answered_cpu, served_cpu


def time_mock() -> tuple[float, ...]:
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers.py")
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, script, "mock"], stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        listening = time.monotonic() - t0
        port = int(line.strip().rsplit(":", 1)[1])
        with _connect(port, t0 + 30) as sock:
            _answered(sock)
            answered = time.monotonic() - t0
            _answered(sock, _METADATA)
            served = time.monotonic() - t0
    finally:
        proc.kill()
        proc.wait()
    return listening * 1000, answered * 1000, served * 1000


def _row(name: str, samples: list[tuple[float, ...]]) -> None:
    def span(i: int) -> str:
        values = [sample[i] for sample in samples]
        return f"{min(values):6.1f} / {statistics.median(values):6.1f} / {max(values):6.1f}"

    print(f"  {name:<16} accepts {span(0)} ms   answers {span(1)} ms   serves {span(2)} ms")
    if len(samples[0]) > 3:
        print(f"  {'':<16} cpu at the answer {span(3)} ms, at serving {span(4)} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", metavar="DIR", help="also time the kgc checked out in DIR")
    parser.add_argument("--no-mock", action="store_true")
    args = parser.parse_args()
    print(
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 CPUs); "
        f"{args.runs} runs each, min / median / max"
    )
    rows: dict[str, list[tuple[float, ...]]] = {"kgc": []}
    if args.baseline:
        rows[f"kgc@{os.path.basename(os.path.normpath(args.baseline))}"] = []
    if not args.no_mock:
        rows["mock"] = []
    for _ in range(args.runs):  # interleaved, so a busy moment hits every server alike
        rows["kgc"].append(time_kgc(None))
        if args.baseline:
            rows[f"kgc@{os.path.basename(os.path.normpath(args.baseline))}"].append(time_kgc(args.baseline))
        if not args.no_mock:
            rows["mock"].append(time_mock())
    for name, samples in rows.items():
        _row(name, samples)


if __name__ == "__main__":
    main()
