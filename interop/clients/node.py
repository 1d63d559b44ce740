"""Run a node script from interop/js/ (kafkajs, @platformatic/kafka) and parse its JSON result.

The script gets INTEROP_DEADLINE_MS, a little under the subprocess timeout, so it can stop by
itself and say where it was stuck before the harness has to kill it.
"""

from __future__ import annotations

from typing import Any

import pytest

from interop.clients.process import DEFAULT_TIMEOUT, INSTALL_HINT, REPO, ClientRun, require_executable, run_json

JS_DIR = REPO / "interop" / "js"

# Time the script keeps for itself to report and exit before the hard kill.
_GRACE_S = 3.0


def run_node(script: str, *args: str, timeout: float = DEFAULT_TIMEOUT) -> tuple[Any, ClientRun]:
    """Run `node interop/js/<script> args...` and return (parsed JSON, run record)."""
    node = require_executable("node")
    if not (JS_DIR / "node_modules").is_dir():
        pytest.fail(f"{JS_DIR / 'node_modules'} is missing: {INSTALL_HINT}", pytrace=False)
    deadline_ms = int(max(timeout - _GRACE_S, timeout / 2) * 1000)
    return run_json(
        [node, str(JS_DIR / script), *args], timeout=timeout, cwd=JS_DIR, env={"INTEROP_DEADLINE_MS": str(deadline_ms)}
    )
