"""The control plane's per-request cost end to end: a client's request rate against a real
`kgc serve` process with the control plane off, on with no rule, and on with 100 rules that
never match, over real sockets.

    .venv/bin/python bench/control_overhead_bench.py [--seconds 3] [--window 32] [--repeat 3]

The load is ApiVersions v3 frames pipelined on one connection (`window` in flight), as in
server_bench.py: the cheapest request there is, so what the control plane adds per request
(the `rules.active` check, the rule index, one request-log entry) is as visible as it can be.
Variants: off (no control settings), on with no rule (`--control-port 0`), 100 rules on other
APIs (OffsetCommit for 100 other groups: the index has no entry for ApiVersions), and 100 rules
on ApiVersions for 100 other client ids (each one evaluated and refused per request: the worst
case). Rules are installed over the HTTP control API. The two servers run side by side and are
measured alternately; prints requests/s (best round) and the cost per request relative to
"off"; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_bench import measure  # noqa: E402 - the load generator of the sibling bench

VERSION = 3


def start(data_dir: str, control: bool) -> tuple[subprocess.Popen, int, str | None]:
    argv = [
        sys.executable,
        "-m",
        "coordinator",
        "serve",
        "--port",
        "0",
        "--data-dir",
        data_dir,
        "--log-level",
        "WARNING",
    ]
    if control:
        argv += ["--control-port", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    port, url = None, None
    while port is None or (control and url is None):
        line = proc.stdout.readline()
        if not line:
            proc.kill()
            raise SystemExit("kgc serve exited before listening")
        if match := re.search(r"bootstrap=[\d.]+:(\d+)", line):
            port = int(match.group(1))
        if match := re.search(r"control=(\S+)", line):
            url = match.group(1)
    return proc, port, url


def rate(port: int, seconds: float, window: int) -> float:
    return trio.run(measure, port, 1, seconds, window, VERSION)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # Both servers run side by side and are measured alternately, round after round, so that
    # load from elsewhere on the machine hits both alike; each figure is the best round.
    with tempfile.TemporaryDirectory() as off_dir, tempfile.TemporaryDirectory() as on_dir:
        off, off_port, _ = start(off_dir, control=False)
        on, on_port, url = start(on_dir, control=True)
        try:
            http = httpx.Client(base_url=url)
            rules = {
                "on, no rule": [],
                "on, 100 rules on other APIs": [
                    {"api": "OffsetCommit", "group": f"other-{i}", "error": "NOT_COORDINATOR"} for i in range(100)
                ],
                "on, 100 ApiVersions rules, other client ids": [
                    {"api": "ApiVersions", "client_id": f"other-{i}", "error": "UNKNOWN_SERVER_ERROR"}
                    for i in range(100)
                ],
            }
            results: dict[str, tuple[float, float]] = {}  # variant -> (best off, best on) of its rounds
            for name, specs in rules.items():
                http.delete("/v1/faults").raise_for_status()
                for spec in specs:
                    http.post("/v1/faults", json=spec).raise_for_status()
                best_off = best_on = 0.0
                for _ in range(args.repeat):
                    best_off = max(best_off, rate(off_port, args.seconds, args.window))
                    best_on = max(best_on, rate(on_port, args.seconds, args.window))
                results[name] = (best_off, best_on)
                hits = sum(rule["hits"] for rule in http.get("/v1/faults").json())
                assert hits == 0, f"a rule that should never match acted {hits} times"
        finally:
            for proc in (off, on):
                proc.terminate()
                proc.wait(10)
    print(
        f"ApiVersions v{VERSION}, 1 connection, {args.window} in flight, {args.seconds:g} s rounds, off and on "
        f"alternately, best of {args.repeat} rounds each"
    )
    print(f"{'variant':<46} {'off req/s':>10} {'on req/s':>10} {'off us':>8} {'on us':>8} {'added us':>9}")
    for name, (off_rate, on_rate) in results.items():
        print(
            f"{name:<46} {off_rate:>10,.0f} {on_rate:>10,.0f} {1e6 / off_rate:>8.2f} {1e6 / on_rate:>8.2f} "
            f"{1e6 / on_rate - 1e6 / off_rate:>+9.2f}"
        )


if __name__ == "__main__":
    main()
