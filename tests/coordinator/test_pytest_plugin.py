"""The kafka_coordinator fixture: settings marks merge from module to param, closest wins."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.kafka_settings({"group.max.size": 7, "num.partitions": 2})


@pytest.mark.kafka_settings({"group.max.size": 5})
@pytest.mark.parametrize("expected_max", [5, pytest.param(9, marks=pytest.mark.kafka_settings({"group.max.size": 9}))])
def test_settings_marks_merge_closest_last(kafka_coordinator, expected_max):
    assert kafka_coordinator.settings == {"group.max.size": expected_max, "num.partitions": 2}


def test_the_fixture_serves_and_restarts_on_the_same_port(kafka_coordinator):
    from confluent_kafka.admin import AdminClient

    kafka_coordinator.create_topic("kept", 3)
    port = kafka_coordinator.port
    kafka_coordinator.restart()
    assert kafka_coordinator.port == port
    admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})
    topics = admin.list_topics(timeout=20).topics
    assert len(topics["kept"].partitions) == 3
