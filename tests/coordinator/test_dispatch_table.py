"""The one version table and the handler table describe the same set of APIs.

An API advertised without a handler would make clients send requests the server then closes
the connection on; a handler that is not advertised is never called by a real client. Handlers
and the heavy optional parts load on first use: a fresh server process has none of them.
"""

from __future__ import annotations

import subprocess
import sys

from coordinator.handlers import HANDLER_MODULES, HANDLERS, load_handler
from protocol.api import SUPPORTED_VERSIONS, ApiKey

# Served on the broker link of --processes only (cluster/peer_link.py), never advertised to clients.
BROKER_LINK_ONLY = {ApiKey.WRITE_TXN_MARKERS}


def test_every_advertised_api_has_a_handler_and_every_handler_is_advertised():
    assert set(SUPPORTED_VERSIONS) == set(HANDLER_MODULES) - BROKER_LINK_ONLY
    assert not BROKER_LINK_ONLY & set(SUPPORTED_VERSIONS)


def test_handlers_are_numbered_by_their_api_key_and_load_on_first_use():
    for key, module in HANDLER_MODULES.items():
        handler = load_handler(key)
        assert handler is not None and handler.__module__ == f"coordinator.handlers.{module}"
        assert module.startswith(f"k{int(key):02d}_"), (key, module)
        assert HANDLERS[key] is handler and load_handler(key) is handler  # loaded once


def test_a_key_without_a_handler_has_none():
    assert load_handler(9999) is None
    assert 9999 not in HANDLERS


# Loaded on first use, never by the start-up: TLS/SASL, KIP-714 payloads, the verifier's stack,
# metrics, the crc32c package's __init__ (importlib.metadata; storage/crc.py loads the extension).
_NOT_AT_START_UP = (
    "cryptography",
    "opentelemetry",
    "google.protobuf",
    "pyarrow",
    "numpy",
    "pyspark",
    "prometheus_client",
    "importlib.metadata",
    "coordinator.telemetry.payload",
)


def test_a_fresh_server_process_loads_only_what_answering_api_versions_needs_then_every_handler():
    """In a new interpreter (this one has imported everything): the server and its CLI import
    no handler but ApiVersions' and none of the heavy optional parts; after that every advertised
    key's handler module still imports and registers (no cycle that only a lazy order shows)."""
    code = f"""
import sys
import coordinator.__main__, coordinator.serve_cli
handlers = sorted(m for m in sys.modules if m.startswith("coordinator.handlers.k"))
assert handlers == ["coordinator.handlers.k18_api_versions"], handlers
early = [m for m in {_NOT_AT_START_UP!r} if m in sys.modules]
assert not early, early
from coordinator.handlers import HANDLER_MODULES, HANDLERS, load_handler
from protocol.api import SUPPORTED_VERSIONS
for key in SUPPORTED_VERSIONS:
    handler = load_handler(key)
    assert handler is not None and HANDLERS[key] is handler, key
    assert handler.__module__ == "coordinator.handlers." + HANDLER_MODULES[key], key
print(len(HANDLERS))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout) == len(SUPPORTED_VERSIONS)
