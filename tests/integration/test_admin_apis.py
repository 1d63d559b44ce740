"""The admin APIs over real sockets (coordinator/admin): CreatePartitions, DeleteRecords and the
config APIs at their advertised versions, with Kafka's answers to bad input; nothing partially
applied. Real clients: interop/test_admin_clients.py."""

from __future__ import annotations

import json
import uuid

import pytest
import trio

from coordinator.admin.config_model import AlterOp, ConfigSource, ResourceType
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.alter_configs import AlterableConfig, AlterConfigsRequest, AlterConfigsResource
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.incremental_alter_configs import AlterableConfig as IncConfig
from protocol.messages.incremental_alter_configs import AlterConfigsResource as IncResource
from protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest
from protocol.messages.list_config_resources import ListConfigResourcesRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.integration.test_data_path import _batch, _fetch, _produce, _values

DEADLINE = 30


async def _grow(client, version, *topics, validate_only=False):
    request = CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name=n, count=c, assignments=a) for n, c, a in topics],
        timeout_ms=5000,
        validate_only=validate_only,
    )
    got = await client.request(ApiKey.CREATE_PARTITIONS, version, request)
    return [(r.name, r.error_code) for r in got.results]


async def _partitions(client, topic):
    got = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
    return len(got.topics[0].partitions)


@pytest.mark.parametrize("version", [0, 3])
async def test_create_partitions_grows_a_topic_and_refuses_what_kafka_refuses(server, client, version):
    with trio.fail_after(DEADLINE):
        assert await _grow(client, version, ("orders", 5, None), validate_only=True) == [("orders", 0)]
        assert await _partitions(client, "orders") == 3  # validate_only changed nothing
        results = await _grow(
            client, version, ("orders", 5, None), ("nope", 4, None), ("dup", 2, None), ("dup", 3, None)
        )
        assert results == [
            ("orders", ErrorCode.NONE),
            ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("dup", ErrorCode.INVALID_REQUEST),
            ("dup", ErrorCode.INVALID_REQUEST),
        ]
        assert await _partitions(client, "orders") == 5
        assert await _grow(client, version, ("orders", 5, None)) == [("orders", ErrorCode.INVALID_PARTITIONS)]
        assert await _grow(client, version, ("orders", 2, None)) == [("orders", ErrorCode.INVALID_PARTITIONS)]
        one = [CreatePartitionsAssignment(broker_ids=[0])]
        assert await _grow(client, version, ("orders", 7, one)) == [("orders", ErrorCode.INVALID_REPLICA_ASSIGNMENT)]
        bad_broker = [CreatePartitionsAssignment(broker_ids=[9])]
        assert await _grow(client, version, ("orders", 6, bad_broker)) == [
            ("orders", ErrorCode.INVALID_REPLICA_ASSIGNMENT)
        ]
        assert await _grow(client, version, ("__consumer_offsets", 60, None)) == [
            ("__consumer_offsets", ErrorCode.POLICY_VIOLATION)
        ]
        assert await _partitions(client, "orders") == 5
        # The new partitions serve at once.
        sent = await client.request(ApiKey.PRODUCE, 9, _produce("orders", 4, _batch(b"new")))
        assert sent.responses[0].partition_responses[0].error_code == ErrorCode.NONE


async def _delete(client, version, topic, *offsets):
    request = DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(
                name=topic, partitions=[DeleteRecordsPartition(partition_index=p, offset=o) for p, o in offsets]
            )
        ],
        timeout_ms=5000,
    )
    got = await client.request(ApiKey.DELETE_RECORDS, version, request)
    return [(p.partition_index, p.error_code, p.low_watermark) for p in got.topics[0].partitions]


async def _earliest(client, topic, partition):
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(name=topic, partitions=[ListOffsetsPartition(partition_index=partition, timestamp=-2)])
        ],
    )
    got = await client.request(ApiKey.LIST_OFFSETS, 7, request)
    return got.topics[0].partitions[0].offset


@pytest.mark.parametrize("version", [0, 2])
async def test_delete_records_moves_the_low_watermark_that_fetch_and_list_offsets_honour(client, version):
    with trio.fail_after(DEADLINE):
        for value in (b"a", b"b", b"c", b"d"):
            await client.request(ApiKey.PRODUCE, 9, _produce("orders", 0, _batch(value)))
        assert await _delete(client, version, "orders", (0, 2)) == [(0, ErrorCode.NONE, 2)]
        assert await _earliest(client, "orders", 0) == 2
        below = await client.request(ApiKey.FETCH, 12, _fetch("orders", 0, 1))
        part = below.responses[0].partitions[0]
        assert (part.error_code, part.log_start_offset) == (ErrorCode.OFFSET_OUT_OF_RANGE, 2)
        at = await client.request(ApiKey.FETCH, 12, _fetch("orders", 0, 2))
        assert _values(at.responses[0].partitions[0].records) == [b"c", b"d"]
        assert await _delete(client, version, "orders", (0, 9), (1, 0), (7, 0)) == [
            (0, ErrorCode.OFFSET_OUT_OF_RANGE, -1),  # past the high watermark
            (1, ErrorCode.NONE, 0),
            (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ]
        assert await _delete(client, version, "orders", (0, -1)) == [(0, ErrorCode.NONE, 4)]  # -1: the high watermark
        assert await _delete(client, version, "nope", (0, 0)) == [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)]
        assert await _delete(client, version, "__consumer_offsets", (0, 0)) == [
            (0, ErrorCode.INVALID_TOPIC_EXCEPTION, -1)
        ]


async def _describe(client, version, rtype, name, keys=None, synonyms=True):
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=rtype, resource_name=name, configuration_keys=keys)],
        include_synonyms=synonyms,
        include_documentation=True,
    )
    got = await client.request(ApiKey.DESCRIBE_CONFIGS, version, request)
    return got.results[0]


async def _alter(client, version, resources, validate_only=False):
    request = IncrementalAlterConfigsRequest(
        resources=[
            IncResource(
                resource_type=rtype,
                resource_name=name,
                configs=[IncConfig(name=k, config_operation=op, value=v) for k, op, v in ops],
            )
            for rtype, name, ops in resources
        ],
        validate_only=validate_only,
    )
    got = await client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, request)
    return [r.error_code for r in got.responses]


def _configs(result) -> dict[str, tuple[str | None, int]]:
    return {c.name: (c.value, c.config_source) for c in result.configs}


@pytest.mark.parametrize("version", [1, 4])
async def test_topic_configs_describe_alter_and_apply_to_the_running_log(server, client, version):
    with trio.fail_after(DEADLINE):
        before = _configs(await _describe(client, version, ResourceType.TOPIC, "orders"))
        assert before["retention.ms"] == ("604800000", ConfigSource.DEFAULT_CONFIG)
        assert before["cleanup.policy"] == ("delete", ConfigSource.DEFAULT_CONFIG)
        set_ops = [("retention.ms", AlterOp.SET, "1000"), ("segment.bytes", AlterOp.SET, "2048")]
        assert await _alter(client, 1, [(ResourceType.TOPIC, "orders", set_ops)], validate_only=True) == [0]
        assert (
            _configs(await _describe(client, version, ResourceType.TOPIC, "orders"))["retention.ms"][0] == "604800000"
        )
        assert await _alter(client, 1, [(ResourceType.TOPIC, "orders", set_ops)]) == [0]
        after = await _describe(client, version, ResourceType.TOPIC, "orders", ["retention.ms"])
        [entry] = after.configs
        assert (entry.value, entry.config_source) == ("1000", ConfigSource.TOPIC_CONFIG)
        assert [(s.name, s.source) for s in entry.synonyms][:2] == [
            ("retention.ms", ConfigSource.TOPIC_CONFIG),
            ("log.retention.ms", ConfigSource.DEFAULT_CONFIG),
        ]
        if version >= 3:
            assert entry.config_type == 5 and entry.documentation  # LONG
        log = server.broker.data.partition("orders", 0).log
        assert (log.config.retention_ms, log.config.segment_bytes) == (1000, 2048)  # applied to the running log
        # One bad config fails its resource whole; the other resource of the request goes through.
        errors = await _alter(
            client,
            1,
            [
                (ResourceType.TOPIC, "orders", [("retention.ms", AlterOp.SET, "5"), ("nope.ms", AlterOp.SET, "1")]),
                (ResourceType.TOPIC, "orders2", [("retention.ms", AlterOp.SET, "5")]),
                (ResourceType.GROUP, "g1", [("consumer.session.timeout.ms", AlterOp.SET, "50000")]),
            ],
        )
        assert errors == [ErrorCode.INVALID_CONFIG, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NONE]
        assert log.config.retention_ms == 1000
        bad = [(ResourceType.TOPIC, "orders", [("retention.ms", AlterOp.SET, "soon")])]
        assert await _alter(client, 1, bad) == [ErrorCode.INVALID_CONFIG]
        append = [(ResourceType.TOPIC, "orders", [("retention.ms", AlterOp.APPEND, "1")])]
        assert await _alter(client, 1, append) == [ErrorCode.INVALID_CONFIG]
        # Legacy AlterConfigs replaces the whole set: segment.bytes goes back to its default.
        legacy = AlterConfigsRequest(
            resources=[
                AlterConfigsResource(
                    resource_type=ResourceType.TOPIC,
                    resource_name="orders",
                    configs=[AlterableConfig(name="retention.ms", value="3000")],
                )
            ]
        )
        got = await client.request(ApiKey.ALTER_CONFIGS, 2, legacy)
        assert got.responses[0].error_code == ErrorCode.NONE
        assert (log.config.retention_ms, log.config.segment_bytes) == (3000, 1 << 30)
        assert (await _describe(client, version, ResourceType.TOPIC, "nope")).error_code == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
        delete = [(ResourceType.TOPIC, "orders", [("retention.ms", AlterOp.DELETE, None)])]
        assert await _alter(client, 1, delete) == [0] and log.config.retention_ms == 604800000


async def test_broker_configs_dynamic_read_only_and_the_request_checks(server, client):
    with trio.fail_after(DEADLINE):
        result = await _describe(client, 4, ResourceType.BROKER, "0")
        configs = {c.name: c for c in result.configs}
        assert configs["log.retention.ms"].read_only is False and configs["group.max.size"].read_only is True
        assert configs["control.token"].value is None and configs["control.token"].is_sensitive
        assert (await _describe(client, 4, ResourceType.BROKER, "7")).error_code == ErrorCode.INVALID_REQUEST
        ops = [("log.retention.ms", AlterOp.SET, "123456")]
        assert await _alter(client, 1, [(ResourceType.BROKER, "", ops)]) == [0]
        assert server.broker.data.partition("orders", 0).log.config.retention_ms == 123456  # the topic default moved
        cluster = await _describe(client, 4, ResourceType.BROKER, "")
        assert _configs(cluster) == {"log.retention.ms": ("123456", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)}
        topic = _configs(await _describe(client, 4, ResourceType.TOPIC, "orders", ["retention.ms"]))
        assert topic == {"retention.ms": ("123456", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)}
        assert await _alter(client, 1, [(ResourceType.BROKER, "0", [("max.connections", AlterOp.SET, "77")])]) == [0]
        assert server.broker.configs._connections.total_tokens == 77
        for rtype, name, ops, code in [
            (ResourceType.BROKER, "0", [("group.max.size", AlterOp.SET, "3")], ErrorCode.INVALID_REQUEST),  # read-only
            (ResourceType.BROKER, "", [("log.retention.ms", AlterOp.SET, "x")], ErrorCode.INVALID_REQUEST),  # no parse
            (ResourceType.BROKER, "", [("no.such.setting", AlterOp.SET, "1")], ErrorCode.INVALID_CONFIG),
            (ResourceType.BROKER, "", [("max.connections", AlterOp.SET, "0")], ErrorCode.INVALID_REQUEST),
            (ResourceType.BROKER, "3", [("log.retention.ms", AlterOp.SET, "1")], ErrorCode.INVALID_REQUEST),
            (ResourceType.TOPIC, "orders", [("retention.ms", AlterOp.SET, None)], ErrorCode.INVALID_REQUEST),  # null
            (ResourceType.TOPIC, "", [("retention.ms", AlterOp.SET, "1")], ErrorCode.INVALID_REQUEST),
            (ResourceType.TOPIC, "bad/name", [("retention.ms", AlterOp.SET, "1")], ErrorCode.INVALID_TOPIC_EXCEPTION),
            (ResourceType.TOPIC, "orders", [("retention.ms", 7, "1")], ErrorCode.INVALID_REQUEST),  # unknown op
            (99, "x", [], ErrorCode.INVALID_REQUEST),
        ]:
            assert await _alter(client, 1, [(rtype, name, ops)]) == [code], (name, ops)
        twice = [("log.retention.ms", AlterOp.SET, "1"), ("log.retention.ms", AlterOp.DELETE, None)]
        assert await _alter(client, 1, [(ResourceType.BROKER, "0", twice)]) == [ErrorCode.INVALID_REQUEST]
        same = [("log.retention.ms", AlterOp.SET, "1")]
        assert await _alter(client, 1, [(ResourceType.BROKER, "", same), (ResourceType.BROKER, "", same)]) == [
            ErrorCode.INVALID_REQUEST,
            ErrorCode.INVALID_REQUEST,
        ]
        assert server.broker.data.partition("orders", 0).log.config.retention_ms == 123456
        assert server.broker.config.group_max_size == 2147483647


async def test_group_configs_validate_apply_live_and_list(server, client):
    with trio.fail_after(DEADLINE):
        ok = [
            ("consumer.session.timeout.ms", AlterOp.SET, "50000"),
            ("consumer.heartbeat.interval.ms", AlterOp.SET, "6000"),
            ("share.auto.offset.reset", AlterOp.SET, "by_duration:PT1H"),
            ("share.isolation.level", AlterOp.SET, "read_committed"),
        ]
        assert await _alter(client, 1, [(ResourceType.GROUP, "g1", ok)]) == [0]
        assert server.group_configs.value("g1", "share.auto.offset.reset") == "by_duration:PT1H"
        join = ConsumerGroupHeartbeatRequest(
            group_id="g1",
            member_id=str(uuid.uuid4()),
            member_epoch=0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=["orders"],
            topic_partitions=[],
        )
        beat = await client.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join)
        assert (beat.error_code, beat.heartbeat_interval_ms) == (0, 6000)  # the group's override, live
        described = _configs(await _describe(client, 4, ResourceType.GROUP, "g1"))
        assert described["consumer.session.timeout.ms"] == ("50000", ConfigSource.GROUP_CONFIG)
        assert described["consumer.heartbeat.interval.ms"] == ("6000", ConfigSource.GROUP_CONFIG)
        assert described["share.delivery.count.limit"] == ("5", ConfigSource.DEFAULT_CONFIG)
        for name, value in [
            ("consumer.session.timeout.ms", "1000"),  # below group.consumer.min.session.timeout.ms
            ("share.auto.offset.reset", "sometimes"),
            ("share.isolation.level", "READ_COMMITTED"),
            ("share.delivery.count.limit", "eleven"),
            ("share.record.lock.duration.ms", "500"),
            ("unknown.config", "1"),
        ]:
            assert await _alter(client, 1, [(ResourceType.GROUP, "g1", [(name, AlterOp.SET, value)])]) == [
                ErrorCode.INVALID_CONFIG
            ], name
        assert await _alter(client, 1, [(ResourceType.GROUP, "", ok)]) == [ErrorCode.INVALID_REQUEST]
        got = await client.request(ApiKey.LIST_CONFIG_RESOURCES, 1, ListConfigResourcesRequest(resource_types=[32]))
        assert [(r.resource_name, r.resource_type) for r in got.config_resources] == [("g1", 32)]
        everything = await client.request(ApiKey.LIST_CONFIG_RESOURCES, 1, ListConfigResourcesRequest())
        assert ("orders", 2) in {(r.resource_name, r.resource_type) for r in everything.config_resources}
        v0 = await client.request(ApiKey.LIST_CONFIG_RESOURCES, 0, ListConfigResourcesRequest())
        assert (v0.error_code, v0.config_resources) == (0, [])
        stored = json.loads((server.broker.topics.data_dir / "dynamic-configs.json").read_text())
        assert stored["groups"]["g1"]["share.isolation.level"] == "read_committed"
