"""The one version table and the handler table describe the same set of APIs.

An API advertised without a handler would make clients send requests the server then closes
the connection on; a handler that is not advertised is never called by a real client.
"""

from __future__ import annotations

from coordinator.handlers import HANDLERS
from protocol.api import SUPPORTED_VERSIONS


def test_every_advertised_api_has_a_handler_and_every_handler_is_advertised():
    assert set(SUPPORTED_VERSIONS) == set(HANDLERS)


def test_handlers_are_numbered_by_their_api_key():
    for key, handler in HANDLERS.items():
        module = handler.__module__.rsplit(".", 1)[-1]
        assert module.startswith(f"k{int(key):02d}_"), (key, module)
