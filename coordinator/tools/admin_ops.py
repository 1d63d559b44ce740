"""The admin requests behind `kgc topics`, `kgc configs` and `kgc delete-records`, over the tools'
blocking AdminClient (kafka_client.py), against ours or any Kafka broker.

Each sends one Kafka request where Kafka's AdminClient would: topic creation, deletion and growth
and topic/group configs to any broker (KRaft forwards them to the controller), a broker's configs
to that broker, DeleteRecords to each partition's leader. Per-item errors come back as
(error name, message) for the caller to report; nothing here prints.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coordinator.tools.kafka_client import AdminClient
from coordinator.tools.kafka_connection import KafkaError, error_name
from protocol.api import ApiKey
from protocol.codec import message_module

TOPIC, BROKER, GROUP = 2, 4, 32  # ConfigResource.Type
SET, DELETE = 0, 1  # AlterConfigOp.OpType
SOURCES = {
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: str
    internal: bool
    partitions: list[PartitionInfo]


def _fixed(body: Any) -> Callable[[int], Any]:
    """A request body that does not depend on the version chosen."""
    return lambda version: body


def _failed(code: int, message: str | None) -> tuple[str, str | None] | None:
    return None if code == 0 else (error_name(code), message)


def describe_topics(admin: AdminClient, names: list[str] | None) -> list[TopicInfo]:
    """Metadata for `names` (None: every topic); an unknown name raises KafkaError."""
    meta = admin.metadata(names)
    out = []
    for t in meta.topics:
        if t.error_code:
            raise KafkaError(t.error_code, f"topic '{t.name}'")
        out.append(
            TopicInfo(
                t.name,
                base64.urlsafe_b64encode(t.topic_id.bytes).rstrip(b"=").decode("ascii"),  # Uuid.toString
                t.is_internal,
                [
                    PartitionInfo(p.partition_index, p.leader_id, list(p.replica_nodes), list(p.isr_nodes))
                    for p in sorted(t.partitions, key=lambda p: p.partition_index)
                ],
            )
        )
    return sorted(out, key=lambda t: t.name)


def create_topic(
    admin: AdminClient, name: str, partitions: int, factor: int, configs: dict[str, str]
) -> tuple[str, str | None] | None:
    m = message_module(ApiKey.CREATE_TOPICS)
    request = m.CreateTopicsRequest(
        topics=[
            m.CreatableTopic(
                name=name,
                num_partitions=partitions,
                replication_factor=factor,
                assignments=[],
                configs=[m.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
            )
        ],
        timeout_ms=30_000,
    )
    _, resp = admin.any.request(ApiKey.CREATE_TOPICS, _fixed(request))
    r = resp.topics[0]
    return _failed(r.error_code, r.error_message)


def delete_topic(admin: AdminClient, name: str) -> tuple[str, str | None] | None:
    m = message_module(ApiKey.DELETE_TOPICS)

    def build(v: int) -> Any:
        if v >= 6:
            return m.DeleteTopicsRequest(topics=[m.DeleteTopicState(name=name)], timeout_ms=30_000)
        return m.DeleteTopicsRequest(topic_names=[name], timeout_ms=30_000)

    _, resp = admin.any.request(ApiKey.DELETE_TOPICS, build)
    r = resp.responses[0]
    return _failed(r.error_code, r.error_message)


def create_partitions(admin: AdminClient, name: str, count: int) -> tuple[str, str | None] | None:
    m = message_module(ApiKey.CREATE_PARTITIONS)
    request = m.CreatePartitionsRequest(
        topics=[m.CreatePartitionsTopic(name=name, count=count, assignments=None)], timeout_ms=30_000
    )
    _, resp = admin.any.request(ApiKey.CREATE_PARTITIONS, _fixed(request))
    r = resp.results[0]
    return _failed(r.error_code, r.error_message)


def _config_connection(admin: AdminClient, rtype: int, name: str) -> Any:
    """A broker's own configs go to that broker (Kafka's AdminClient does the same)."""
    if rtype == BROKER and name:
        for broker in admin.brokers():
            if str(broker.node_id) == name:
                return admin.connection(broker.host, broker.port)
        raise KafkaError(0, f"no broker {name} in the cluster (brokers: {[b.node_id for b in admin.brokers()]})")
    return admin.any


def describe_configs(admin: AdminClient, rtype: int, name: str) -> list[Any]:
    """Every config of one resource, with synonyms; KafkaError if the broker refuses."""
    m = message_module(ApiKey.DESCRIBE_CONFIGS)
    request = m.DescribeConfigsRequest(
        resources=[m.DescribeConfigsResource(resource_type=rtype, resource_name=name, configuration_keys=None)],
        include_synonyms=True,
    )
    _, resp = _config_connection(admin, rtype, name).request(ApiKey.DESCRIBE_CONFIGS, _fixed(request))
    result = resp.results[0]
    if result.error_code:
        raise KafkaError(result.error_code, result.error_message or f"DescribeConfigs '{name}'")
    return list(result.configs)


def alter_configs(
    admin: AdminClient, rtype: int, name: str, add: dict[str, str], delete: list[str]
) -> tuple[str, str | None] | None:
    """IncrementalAlterConfigs (what kafka-configs.sh sends): SET each added, DELETE each removed."""
    m = message_module(ApiKey.INCREMENTAL_ALTER_CONFIGS)
    ops = [m.AlterableConfig(name=k, config_operation=SET, value=v) for k, v in add.items()]
    ops += [m.AlterableConfig(name=k, config_operation=DELETE, value=None) for k in delete]
    request = m.IncrementalAlterConfigsRequest(
        resources=[m.AlterConfigsResource(resource_type=rtype, resource_name=name, configs=ops)]
    )
    _, resp = _config_connection(admin, rtype, name).request(ApiKey.INCREMENTAL_ALTER_CONFIGS, _fixed(request))
    r = resp.responses[0]
    return _failed(r.error_code, r.error_message)


def config_resources(admin: AdminClient, rtype: int) -> list[str]:
    """The names of every resource of a type with configs (ListConfigResources v1)."""
    m = message_module(ApiKey.LIST_CONFIG_RESOURCES)
    _, resp = admin.any.request(
        ApiKey.LIST_CONFIG_RESOURCES, lambda v: m.ListConfigResourcesRequest(resource_types=[rtype])
    )
    if resp.error_code:
        raise KafkaError(resp.error_code, "ListConfigResources")
    return sorted(r.resource_name for r in resp.config_resources)


def delete_records(
    admin: AdminClient, offsets: dict[tuple[str, int], int]
) -> dict[tuple[str, int], tuple[int, tuple[str, str | None] | None]]:
    """(topic, partition) -> (low watermark, error), each partition asked of its leader."""
    m = message_module(ApiKey.DELETE_RECORDS)
    leaders = admin.partitions(sorted({t for t, _ in offsets}))
    nodes = {b.node_id: b for b in admin.brokers()}
    by_leader: dict[int, dict[str, list[Any]]] = {}
    out: dict[tuple[str, int], tuple[int, tuple[str, str | None] | None]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        leader = leaders.get(topic, {}).get(partition)
        if leader is None or leader not in nodes:
            out[(topic, partition)] = (-1, ("UNKNOWN_TOPIC_OR_PARTITION", "no such partition, or no leader for it"))
            continue
        by_leader.setdefault(leader, {}).setdefault(topic, []).append(
            m.DeleteRecordsPartition(partition_index=partition, offset=offset)
        )
    for leader, topics in by_leader.items():
        request = m.DeleteRecordsRequest(
            topics=[m.DeleteRecordsTopic(name=t, partitions=ps) for t, ps in topics.items()], timeout_ms=30_000
        )
        node = nodes[leader]
        _, resp = admin.connection(node.host, node.port).request(ApiKey.DELETE_RECORDS, _fixed(request))
        for t in resp.topics:
            for p in t.partitions:
                out[(t.name, p.partition_index)] = (p.low_watermark, _failed(p.error_code, None))
    return out
