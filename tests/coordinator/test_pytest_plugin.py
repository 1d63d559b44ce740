"""The kafka_coordinator fixture: settings marks (a mapping or keywords) merge from module to param,
closest wins; create_topic, stop/start/restart; the timeline on a failing test; a free import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from coordinator.embed.embedded import CoordinatorStopped

pytestmark = pytest.mark.kafka_settings({"group.max.size": 7, "num.partitions": 2})

pytest_plugins = ["pytester"]


def given(server) -> dict:
    """The settings the marks gave (the fixture adds the transcript's file)."""
    return {k: v for k, v in server.settings.items() if k != "transcript.file"}


@pytest.mark.kafka_settings({"group.max.size": 5})
@pytest.mark.parametrize("expected_max", [5, pytest.param(9, marks=pytest.mark.kafka_settings({"group.max.size": 9}))])
def test_settings_marks_merge_closest_last(kafka_coordinator, expected_max):
    assert given(kafka_coordinator) == {"group.max.size": expected_max, "num.partitions": 2}
    assert kafka_coordinator.config.group_max_size == expected_max


@pytest.mark.kafka_settings(group_max_size=3, log_retention_ms=60000)
def test_settings_as_keywords_with_underscores_for_dots(kafka_coordinator):
    assert given(kafka_coordinator) == {"group.max.size": 3, "num.partitions": 2, "log.retention.ms": 60000}
    assert kafka_coordinator.config.group_max_size == 3


def test_the_fixture_serves_and_restarts_on_the_same_port(kafka_coordinator):
    from confluent_kafka.admin import AdminClient

    kafka_coordinator.create_topic("kept", 3)
    port = kafka_coordinator.port
    kafka_coordinator.restart()
    assert kafka_coordinator.port == port
    admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})
    topics = admin.list_topics(timeout=20).topics
    assert len(topics["kept"].partitions) == 3


def test_create_topic_is_idempotent_grows_and_never_shrinks(kafka_coordinator):
    from confluent_kafka.admin import AdminClient

    kafka_coordinator.create_topic("orders", 3)
    kafka_coordinator.create_topic("orders", 3)
    kafka_coordinator.create_topic("orders", 5)
    admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})
    assert len(admin.list_topics("orders", timeout=20).topics["orders"].partitions) == 5
    with pytest.raises(ValueError, match="topic 'orders' already has 5 partitions, not 2: a topic only grows"):
        kafka_coordinator.create_topic("orders", 2)


@pytest.mark.kafka_settings(max_partitions=10)
def test_create_topic_beyond_max_partitions_is_refused(kafka_coordinator):
    kafka_coordinator.create_topic("a", 6)
    with pytest.raises(Exception, match="would make 11 user-topic partitions, more than max.partitions=10"):
        kafka_coordinator.create_topic("b", 5)


def test_stopped_means_a_clear_error_until_started_again(kafka_coordinator):
    kafka_coordinator.create_topic("before", 1)
    kafka_coordinator.stop()
    assert not kafka_coordinator.running
    with pytest.raises(CoordinatorStopped, match=r"stopped: create_topic\('after', 1\) needs it running.*start\(\)"):
        kafka_coordinator.create_topic("after", 1)
    with pytest.raises(CoordinatorStopped):
        kafka_coordinator.brokers  # noqa: B018 - the property is the call under test
    kafka_coordinator.start()
    kafka_coordinator.create_topic("after", 1)
    assert [b[0] for b in kafka_coordinator.brokers] == [0]


@pytest.mark.kafka_settings(cluster_brokers=3)
def test_brokers_of_a_cluster(kafka_coordinator):
    assert [node for node, _host, _port in kafka_coordinator.brokers] == [0, 1, 2]
    assert kafka_coordinator.bootstrap.count(",") == 2


FAILING = """
from confluent_kafka.admin import AdminClient

def test_sees_no_topic(kafka_coordinator):
    kafka_coordinator.create_topic("orders", 2)
    topics = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap}).list_topics(timeout=20).topics
    assert "payments" in topics
"""


def test_a_failing_test_shows_the_servers_timeline(pytester):
    pytester.makepyfile(FAILING)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- kgc timeline -*",
            "transcript: */transcript.jsonl",
            "(whole: kgc transcript */transcript.jsonl; a page: *--html OUT.html)",
            "*-> Metadata v*",
            "*<- Metadata  ok",
        ]
    )


def test_the_timeline_can_be_turned_off(pytester):
    pytester.makepyfile(FAILING)
    pytester.makeini("[pytest]\nkafka_coordinator_transcript = false\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*- kgc timeline -*", "no transcript (transcript.file is off for this test)"])


def test_a_misspelt_setting_fails_the_test_in_one_line(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.kafka_settings(group_max_sise=3)
def test_it(kafka_coordinator):
    pass
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*kafka_coordinator did not start: unknown setting 'group.max.sise'; did you mean group.max.size?*"]
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_loading_the_plugin_imports_nothing_of_the_server():
    probe = (
        "import sys, coordinator.embed.pytest_plugin, coordinator.embed; "
        "print(sorted(m for m in sys.modules if m.startswith(('coordinator.', 'trio'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['coordinator.embed', 'coordinator.embed.pytest_plugin']"


@pytest.mark.kafka_security("SASL_SSL", users={"alice": "alice-secret"}, mechanisms=("SCRAM-SHA-512",))
def test_a_security_mark_gives_a_tls_sasl_listener_and_client_settings(kafka_coordinator):
    from confluent_kafka.admin import AdminClient

    settings = kafka_coordinator.client_settings("alice", mechanism="SCRAM-SHA-512")
    assert settings["security.protocol"] == "SASL_SSL" and settings["ssl.ca.location"] == str(
        kafka_coordinator.certs.ca
    )
    kafka_coordinator.create_topic("secured", 1)
    assert "secured" in AdminClient(settings).list_topics(timeout=20).topics
