"""Run kcat (Debian's 1.7.1, linked to librdkafka 2.0.2: the oldest client we serve).

Its librdkafka predates v2.11, so it needs exact versions inside our advertised ranges
(protocol.md §3.2); that is why it is worth running at all next to confluent-kafka.
"""

from __future__ import annotations

from typing import Any

from interop.clients.process import DEFAULT_TIMEOUT, ClientRun, require_executable, run_json


def run_kcat(*args: str, timeout: float = DEFAULT_TIMEOUT) -> tuple[Any, ClientRun]:
    """Run `kcat args...` (args should include -J) and return (parsed JSON, run record).

    `-m` (kcat's own metadata/request timeout, seconds) is set below the hard deadline so that
    kcat normally gives up and reports by itself.
    """
    kcat = require_executable("kcat")
    own_timeout = max(1, int(timeout) - 5)
    return run_json([kcat, "-m", str(own_timeout), *args], timeout=timeout)
