"""Integration fixtures: a real server in this trio run, on a free loopback port."""

from __future__ import annotations

import pytest

from coordinator.embed.embedded import open_server
from tests.integration.raw_client import RawClient


@pytest.fixture
async def server(tmp_path):
    async with open_server(tmp_path / "data", topics={"orders": 3}) as running:
        yield running


@pytest.fixture
async def client(server):
    connection = await RawClient.connect(server.host, server.port)
    yield connection
    await connection.aclose()
