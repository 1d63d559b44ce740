"""librdkafka pushes its own metrics (KIP-714) to kgc, with confluent-kafka's default settings
(`enable.metrics.push` is on by default), and they are visible through the control plane.

kgc's default subscription (`client.metrics.default.metrics=*`, a 500 ms interval) asks every
client for every metric, so no admin call is needed. A producer and a consumer each ask for
their subscription, push at the interval (each push compressed as librdkafka chooses, decoded
with the OpenTelemetry protobuf classes), and push once more, terminating, when they close.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer

from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

SETTINGS = {"client.metrics.default.metrics": "*", "client.metrics.default.interval.ms": 500}


@pytest.mark.kafka_settings(SETTINGS)
def test_librdkafka_pushes_its_metrics_and_the_control_plane_shows_them(kafka_coordinator, topic_name):
    server, control = kafka_coordinator, kafka_coordinator.control
    server.create_topic(topic_name, 1)
    producer = Producer({"bootstrap.servers": server.bootstrap, "client.id": "telemetry-producer"})
    consumer = Consumer(
        {
            "bootstrap.servers": server.bootstrap,
            "client.id": "telemetry-consumer",
            "group.id": "telemetry-group",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic_name])
    producer.produce(topic_name, b"measured")
    assert producer.flush(10) == 0

    def pushed(client_id: str) -> dict | None:
        found = {c["client_id"]: c for c in control.telemetry()}.get(client_id)
        return found if found is not None and found["pushes"] >= 1 else None

    def both_pushed() -> bool:
        consumer.poll(0.05)  # the consumer's own thread pushes; polling keeps the group going
        return bool(pushed("telemetry-producer") and pushed("telemetry-consumer"))

    wait_until(both_pushed, 15, message=lambda: f"no pushes yet: {control.telemetry()}")
    seen = control.telemetry("telemetry-producer")
    assert seen["requested_metrics"] == ["*"] and seen["push_interval_ms"] == 500
    assert seen["subscriptions"] == ["kgc-default"] and seen["last_error"] is None
    assert seen["software"].startswith("confluent-kafka-python/")
    names = {m["name"] for m in seen["metrics"]}
    assert "org.apache.kafka.producer.node.request.latency.avg" in names, sorted(names)
    assert all(n.startswith("org.apache.kafka.producer.") for n in names)
    latency = [m for m in seen["metrics"] if m["name"] == "org.apache.kafka.producer.node.request.latency.avg"]
    assert latency and all("node.id" in m["attributes"] for m in latency)
    consumer_names = {m["name"] for m in control.telemetry("telemetry-consumer")["metrics"]}
    assert any(n.startswith("org.apache.kafka.consumer.") for n in consumer_names), sorted(consumer_names)

    pushes = pushed("telemetry-producer")["pushes"]
    producer.flush(10)
    del producer  # rd_kafka_destroy: a last, terminating push
    wait_until(lambda: control.telemetry("telemetry-producer")["terminating"], 10, message="no terminating push")
    assert control.telemetry("telemetry-producer")["pushes"] > pushes
    consumer.close()
