"""The admin surface with real admin clients: confluent-kafka's AdminClient (librdkafka 2.16),
kafka-python's KafkaAdminClient and kafkajs's admin; then a real `kgc serve` process killed with
SIGKILL after DeleteRecords and AlterConfigs, restarted on its data dir: the configs and the log
start offset are there, and a new consumer from earliest starts at the new low watermark."""

from __future__ import annotations

import signal

import pytest

from interop.clients.node import run_node
from tests.support.serve_process import start_serve

pytestmark = pytest.mark.interop

TIMEOUT = 20


def _produce(bootstrap: str, topic: str, partition: int, n: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(n):
        producer.produce(topic, value=b"v%d" % i, key=b"k%d" % i, partition=partition)
    assert producer.flush(TIMEOUT) == 0


def _error_code(future) -> str:
    from confluent_kafka import KafkaException

    with pytest.raises(KafkaException) as refused:
        future.result(TIMEOUT)
    return refused.value.args[0].name()


def test_confluent_admin_client(kafka_coordinator, topic_name):
    from confluent_kafka import TopicCollection, TopicPartition
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ConfigSource,
        NewPartitions,
        ResourceType,
    )

    kafka_coordinator.create_topic(topic_name, 2)
    _produce(kafka_coordinator.bootstrap, topic_name, 0, 6)
    admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})

    admin.create_partitions([NewPartitions(topic_name, 3)], validate_only=True)[topic_name].result(TIMEOUT)
    admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name].result(TIMEOUT)
    assert _error_code(admin.create_partitions([NewPartitions(topic_name, 2)])[topic_name]) == "INVALID_PARTITIONS"
    described = admin.describe_topics(TopicCollection([topic_name]))[topic_name].result(TIMEOUT)
    assert [p.id for p in described.partitions] == [0, 1, 2] and not described.is_internal

    [(tp, future)] = admin.delete_records([TopicPartition(topic_name, 0, 4)]).items()
    assert future.result(TIMEOUT).low_watermark == 4
    [(_, beyond)] = admin.delete_records([TopicPartition(topic_name, 0, 99)]).items()
    assert _error_code(beyond) == "OFFSET_OUT_OF_RANGE"

    topic = ConfigResource(
        ResourceType.TOPIC,
        topic_name,
        incremental_configs=[ConfigEntry("retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET)],
    )
    group = ConfigResource(
        ResourceType.GROUP,
        "admin-group",
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in admin.incremental_alter_configs([topic, group]).values():
        future.result(TIMEOUT)
    bad = ConfigResource(
        ResourceType.TOPIC,
        topic_name,
        incremental_configs=[ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)],
    )
    assert _error_code(admin.incremental_alter_configs([bad])[bad]) == "INVALID_CONFIG"
    [configs] = [
        f.result(TIMEOUT) for f in admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic_name)]).values()
    ]
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == (
        "86400000",
        ConfigSource.DYNAMIC_TOPIC_CONFIG.value,
    )
    assert configs["cleanup.policy"].source == ConfigSource.DEFAULT_CONFIG.value
    [group_configs] = [
        f.result(TIMEOUT) for f in admin.describe_configs([ConfigResource(ResourceType.GROUP, "admin-group")]).values()
    ]
    assert group_configs["share.auto.offset.reset"].value == "earliest"
    [broker] = [f.result(TIMEOUT) for f in admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values()]
    assert broker["log.retention.ms"].is_read_only is False and broker["group.max.size"].is_read_only is True

    cluster = admin.describe_cluster().result(TIMEOUT)
    assert [n.id for n in cluster.nodes] == [0] and cluster.controller.id == 0 and cluster.cluster_id


def test_kafka_python_admin_client(kafka_coordinator, topic_name):
    from kafka import TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewPartitions
    from kafka.errors import InvalidPartitionsError

    kafka_coordinator.create_topic(topic_name, 2)
    _produce(kafka_coordinator.bootstrap, topic_name, 1, 5)
    admin = KafkaAdminClient(bootstrap_servers=kafka_coordinator.bootstrap, client_id="kgc-interop-kafka-python")
    try:
        admin.create_partitions({topic_name: NewPartitions(total_count=4)})
        with pytest.raises(InvalidPartitionsError):
            admin.create_partitions({topic_name: NewPartitions(total_count=3)})
        deleted = admin.delete_records({TopicPartition(topic_name, 1): 2})
        assert deleted[TopicPartition(topic_name, 1)]["low_watermark"] == 2
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic_name, configs={"retention.ms": "7200000"})])
        modified = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic_name)])
        [(name, entry)] = modified["topic"][topic_name].items()  # config_filter='modified': only what is set
        assert (name, entry["value"], entry["config_source"]) == ("retention.ms", "7200000", "DYNAMIC_TOPIC_CONFIG")
        cluster = admin.describe_cluster()
        assert [b["broker_id"] for b in cluster["brokers"]] == [0] and cluster["controller_id"] == 0
        [broker] = admin.describe_log_dirs()
        sizes = {
            (t["name"], p["partition_index"]): p["partition_size"]
            for d in broker["log_dirs"]
            for t in d["topics"]
            for p in t["partitions"]
        }
        assert sizes[(topic_name, 1)] > 0 and len([k for k in sizes if k[0] == topic_name]) == 4
    finally:
        admin.close()


def test_kafkajs_admin(kafka_coordinator, topic_name):
    kafka_coordinator.create_topic(topic_name, 2)
    _produce(kafka_coordinator.bootstrap, topic_name, 0, 5)
    result, _ = run_node("kafkajs-admin.mjs", kafka_coordinator.bootstrap, topic_name)
    assert result["partitions"] == 4 and result["lowWatermark"] == "3"
    assert result["configs"] == {"retention.ms": ["86400000", False], "cleanup.policy": ["delete", True]}
    assert result["bad"] == {"shrink": "INVALID_PARTITIONS", "unknownConfig": "INVALID_CONFIG"}
    assert result["brokers"] == [0] and result["controller"] == 0


def test_delete_records_and_configs_survive_kill_9(tmp_path):
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    data = str(tmp_path / "data")
    proc, bootstrap = start_serve(data, "--create-topic", "kept:2")
    try:
        _produce(bootstrap, "kept", 0, 10)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        [(_, deleted)] = admin.delete_records([TopicPartition("kept", 0, 6)]).items()
        assert deleted.result(TIMEOUT).low_watermark == 6

        def inc(rtype, name, key, value):
            return ConfigResource(
                rtype, name, incremental_configs=[ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)]
            )

        changes = [
            inc(ResourceType.TOPIC, "kept", "retention.ms", "3600000"),
            inc(ResourceType.BROKER, "0", "log.retention.ms", "7200000"),  # librdkafka names a broker
            inc(ResourceType.GROUP, "kept-group", "consumer.session.timeout.ms", "50000"),
        ]
        for future in admin.incremental_alter_configs(changes).values():
            future.result(TIMEOUT)
        proc.send_signal(signal.SIGKILL)  # right after the answers: no clean shutdown
        proc.wait(TIMEOUT)
        proc, bootstrap = start_serve(data)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        wanted = [
            (ConfigResource(ResourceType.TOPIC, "kept"), "retention.ms", "3600000"),
            (ConfigResource(ResourceType.BROKER, "0"), "log.retention.ms", "7200000"),
            (ConfigResource(ResourceType.GROUP, "kept-group"), "consumer.session.timeout.ms", "50000"),
        ]
        for resource, key, value in wanted:
            got = admin.describe_configs([resource])[resource].result(TIMEOUT)
            assert got[key].value == value, (resource, got[key])
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "after-kill", "auto.offset.reset": "earliest"})
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition("kept", 0), timeout=TIMEOUT)
            assert (low, high) == (6, 10)
            consumer.assign([TopicPartition("kept", 0)])
            first = None
            for _ in range(100):
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    first = message
                    break
            assert first is not None and (first.offset(), first.value()) == (6, b"v6")
        finally:
            consumer.close()
    finally:
        proc.kill()
        proc.wait(TIMEOUT)
