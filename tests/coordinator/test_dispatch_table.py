"""The one version table and the handler table describe the same set of APIs.

An API advertised without a handler would make clients send requests the server then closes
the connection on; a handler that is not advertised is never called by a real client.
"""

from __future__ import annotations

from coordinator.handlers import HANDLER_MODULES, HANDLERS, load_handler
from protocol.api import SUPPORTED_VERSIONS


def test_every_advertised_api_has_a_handler_and_every_handler_is_advertised():
    assert set(SUPPORTED_VERSIONS) == set(HANDLER_MODULES)


def test_handlers_are_numbered_by_their_api_key_and_load_on_first_use():
    for key, module in HANDLER_MODULES.items():
        handler = load_handler(key)
        assert handler is not None and handler.__module__ == f"coordinator.handlers.{module}"
        assert module.startswith(f"k{int(key):02d}_"), (key, module)
        assert HANDLERS[key] is handler and load_handler(key) is handler  # loaded once


def test_a_key_without_a_handler_has_none():
    assert load_handler(27) is None  # WriteTxnMarkers: broker to broker, not served
    assert 27 not in HANDLERS
