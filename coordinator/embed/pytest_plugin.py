"""pytest plugin (entry point `pytest11`): a real coordinator per test, on a free loopback port.

    def test_consume(kafka_coordinator):
        kafka_coordinator.create_topic("orders", 3)
        consumer = Consumer({"bootstrap.servers": kafka_coordinator.bootstrap, ...})

The server runs on its own thread (coordinator/embed/embedded.py), so the fixture serves sync tests,
asyncio clients and subprocess clients alike; its data dir and transcript live in a fresh tmp dir.
Settings per test: `@pytest.mark.kafka_settings({"group.max.size": 3})` or
`@pytest.mark.kafka_settings(group_max_size=3)` (underscores for dots), on a module, class,
function or `pytest.param`; the closer mark wins. `@pytest.mark.kafka_security(protocol="SASL_SSL",
users={"alice": "alice-secret"}, authorizer=True, ...)` gives the server one TLS and/or SASL
listener (coordinator/embed/security.py: throwaway certificates in `.certs`, SCRAM credentials
for every user, `.client_settings("alice")` for a client). When a test using the fixture fails, its report
gets a "kgc timeline" section: the transcript as `kgc transcript` renders it, and the file's path
(ini `kafka_coordinator_transcript = false` turns the transcript off). Loading this plugin imports
nothing of the server: that happens when a test first asks for the fixture.
"""

from __future__ import annotations

import io
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

TIMELINE_LINES = 200  # the last events of a long transcript; the file holds them all
_SERVER = pytest.StashKey[Any]()
_REPORTED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "kafka_coordinator_transcript",
        type="bool",
        default=True,
        help="kafka_coordinator: write a transcript and show it as a timeline when a test fails",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka_settings(mapping=None, /, **settings): settings for the kafka_coordinator fixture, "
        "by Kafka name (a mapping) or as keywords with underscores for dots",
    )
    config.addinivalue_line(
        "markers",
        "kafka_security(**options): one TLS and/or SASL listener for the kafka_coordinator fixture "
        "(SecurityOptions: protocol, users, mechanisms, client_auth, authorizer, super_users, reauth_ms)",
    )


def marked_settings(node: pytest.Item) -> dict[str, Any]:
    """Settings from every kafka_settings mark, module first, the test's own (and its param's) last."""
    settings: dict[str, Any] = {}
    for item in node.listchain():
        for mark in item.own_markers:
            if mark.name != "kafka_settings":
                continue
            if len(mark.args) > 1 or (mark.args and not isinstance(mark.args[0], dict)):
                raise pytest.UsageError(
                    f"{node.nodeid}: kafka_settings takes one dict and/or keywords, got {mark.args!r}"
                )
            settings.update(mark.args[0] if mark.args else {})
            settings.update({name.replace("_", "."): value for name, value in mark.kwargs.items()})
    return settings


@pytest.fixture
def kafka_coordinator(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A running coordinator: `.bootstrap`, `.host`, `.port`, `.brokers`, `.create_topic(name, n)`,
    `.stop()`, `.start()`, `.restart()`, `.settings`, `.data_dir`, `.transcript`; with
    kafka_security, `.certs`, `.client_settings(user)`, `.add_acl(...)`, `.add_scram_user(...)`."""
    from coordinator.config import ConfigError, canonical_name
    from coordinator.embed.embedded import CoordinatorStartError, EmbeddedServer

    settings = {canonical_name(k) or k: v for k, v in marked_settings(request.node).items()}
    base = tmp_path_factory.mktemp("kgc")
    if request.config.getini("kafka_coordinator_transcript"):
        settings.setdefault("transcript.file", str(base / "transcript.jsonl"))
    security = None
    mark = request.node.get_closest_marker("kafka_security")
    if mark is not None:
        from coordinator.embed.security import SecurityOptions

        security = SecurityOptions(*mark.args, **mark.kwargs)
    try:
        server = EmbeddedServer(base / "data", settings=settings, security=security).start()
    except (ConfigError, CoordinatorStartError) as exc:
        failure = f"kafka_coordinator did not start: {exc}"
    else:
        failure = ""
    if failure:
        pytest.fail(failure, pytrace=False)
    request.node.stash[_SERVER] = server
    try:
        yield server
    finally:
        server.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    server = item.stash.get(_SERVER, None)
    if server is not None and report.failed and not item.stash.get(_REPORTED, False):
        item.stash[_REPORTED] = True
        report.sections.append(("kgc timeline", timeline(server.transcript)))
    return report


def timeline(path: Path | None) -> str:
    """The transcript as `kgc transcript` shows it, its last TIMELINE_LINES events, and its path."""
    if path is None:
        return "no transcript (transcript.file is off for this test)"
    from coordinator.tools.transcript_events import BadTranscript
    from coordinator.tools.transcript_render import render

    out = io.StringIO()
    try:
        with open(path, encoding="utf-8") as lines:
            render(lines, None, out, str(path))
    except (OSError, BadTranscript) as exc:
        return f"transcript {path}: cannot be shown ({exc})"
    shown = out.getvalue().splitlines()
    cut = max(0, len(shown) - TIMELINE_LINES)
    head = [f"transcript: {path}", f"(whole: kgc transcript {path}; a page: kgc transcript {path} --html OUT.html)"]
    if cut:
        head.append(f"... {cut} earlier events not shown ...")
    return "\n".join(head + (shown[cut:] or ["(no events)"]))
