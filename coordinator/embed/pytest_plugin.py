"""pytest plugin (entry point `pytest11`): a real coordinator per test, on a free loopback port.

    def test_consume(kafka_coordinator):
        kafka_coordinator.create_topic("orders", 3)
        consumer = Consumer({"bootstrap.servers": kafka_coordinator.bootstrap, ...})

The server runs on its own thread (see `coordinator.embed.embedded`), so the fixture serves sync tests,
asyncio clients and subprocess clients alike. Its data dir lives in the test's tmp_path;
`kafka_coordinator.restart()` restarts it on the same data dir and port.
Settings can be given per test with `@pytest.mark.kafka_settings({"group.max.size": 3})`, on a
module, class, function or `pytest.param`; the closer mark wins for a setting both give.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from coordinator.embed.embedded import EmbeddedServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kafka_settings(mapping): settings for the kafka_coordinator fixture")


@pytest.fixture
def kafka_coordinator(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    settings: dict = {}
    for node in request.node.listchain():  # module -> class -> function (decorators, then param marks)
        for mark in node.own_markers:
            if mark.name == "kafka_settings":
                settings.update(mark.args[0])
    server = EmbeddedServer(tmp_path_factory.mktemp("kgc-data"), settings=settings)
    with server:
        yield server
