"""Issue 26: what `kgc serve` loads before it answers ApiVersions (net/early_responder.py).

Everything up to the early answer (the CLI, the refusals of preflight.py, the bind, the answers)
stays free of trio, the server, the codec and what only other commands need: each of those is
tens of milliseconds of the first answer.
"""

from __future__ import annotations

import subprocess
import sys

from coordinator import __main__ as cli
from coordinator import processes

_NOT_BEFORE_THE_ANSWER = (
    "trio",
    "attr",
    "coordinator.server",
    "coordinator.serve_cli",
    "coordinator.handlers",
    "protocol.codec",
    "protocol.messages",
    "coordinator.processes",  # subprocess: only a broker process of --processes loads it at start
    "coordinator.verify_launch",
    "subprocess",
    "shutil",
)


def test_the_early_answer_needs_neither_trio_nor_the_server():
    code = f"""
import sys
import coordinator.__main__, coordinator.preflight, coordinator.net.early_responder
coordinator.__main__.build_parser(serve_only=True).parse_args(["serve", "--port", "0"])
loaded = [m for m in {_NOT_BEFORE_THE_ANSWER!r} if m in sys.modules]
assert not loaded, loaded
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_cli_names_the_process_child_variable_as_processes_sets_it():
    assert cli.PROCESS_CHILD_ENV == processes.ENV_BROKER


def test_help_is_as_wide_as_shutil_would_make_it(monkeypatch):
    import shutil

    from coordinator.cli_parser import _columns

    for columns in ("120", "", "x", "-3"):
        monkeypatch.setenv("COLUMNS", columns)
        assert _columns() == shutil.get_terminal_size().columns
