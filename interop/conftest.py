"""Fixtures for interop tests: real Kafka clients against a real coordinator.

The server comes from the project's pytest plugin (coordinator/pytest_plugin.py): the
`kafka_coordinator` fixture starts it on an ephemeral loopback port in a temporary data dir and
yields an object with `.bootstrap`, `.host`, `.port` and `.create_topic(name, partitions)`.
Because the clients here block (or run their own asyncio loop), interop tests are plain
synchronous functions and the server must serve from another thread or process.

Client helpers live in interop/clients/; missing node, node_modules or kcat fail the test
(CI installs them with scripts/install_test_deps.sh), they never skip.
"""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A legal, test-specific Kafka topic name (letters, digits, '.', '_', '-'; <= 249 chars)."""
    name = re.sub(r"[^a-zA-Z0-9._-]+", "-", request.node.name).strip("-.")
    return f"interop-{name}"[:200]
