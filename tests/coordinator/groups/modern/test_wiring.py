"""KIP-848 records through the shard's one codec and one replay, the dump JSON of
`kgc dump --offsets-decoder`, and the topics image that follows the broker's topics."""

from __future__ import annotations

import json
import uuid

import pytest

from coordinator.__main__ import main
from coordinator.config import Config
from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.group import ConsumerGroup, IllegalStateError
from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig, assignor_names
from coordinator.groups.lifecycle import offsets_log_config
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.record_json import decode
from coordinator.groups.record_types import OffsetCommitRecord, RecordDecodeError, UnknownRecord
from coordinator.groups.records import decode_record, encode_record
from coordinator.groups.shard import GroupShard
from coordinator.groups.topics_image import TopicsImage
from coordinator.runtime.clock import FakeClock
from coordinator.runtime.partition_writer import PartitionWriter
from storage.log_manager import LogManager
from tests.coordinator.groups.modern.support import FakeRegistry, tid

T1 = tid(1)
RECORDS = [
    r.ConsumerGroupMemberMetadataRecord("g", "m1", None, None, "c", "/127.0.0.1", ("foo",), None, 5000, None),
    r.ConsumerGroupMetadataRecord("g", 1, 77),
    r.ConsumerGroupTargetAssignmentMemberRecord("g", "m1", (r.TopicPartitions(T1, (0, 1)),)),
    r.ConsumerGroupTargetAssignmentMetadataRecord("g", 1),
    r.ConsumerGroupCurrentMemberAssignmentRecord("g", "m1", 1, 0, 0, (r.TopicPartitions(T1, (0, 1)),), ()),
]


@pytest.mark.parametrize(
    "record",
    RECORDS
    + [
        r.ConsumerGroupRegularExpressionRecord("g", "f.*", ("foo",), 3, 9),
        r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m1"),
    ],
)
def test_consumer_records_go_through_the_shards_codec(record):
    key, value = encode_record(record)
    assert key[:2] == record.key_type.to_bytes(2, "big")
    assert decode_record(key, value) == record


def test_unknown_value_version_of_a_consumer_record_is_skipped():
    key, value = encode_record(RECORDS[1])
    assert decode_record(key, b"\x00\x07" + value[2:]) == UnknownRecord(3, 7)
    with pytest.raises(RecordDecodeError):
        decode_record(key, value + b"\x00")


def test_the_shard_replays_consumer_records_and_replaces_a_simple_group():
    shard = GroupShard()
    shard.replay(OffsetCommitRecord("g", "foo", 0, 5, -1, "", 1, None), 1)
    assert isinstance(shard.groups["g"], ClassicGroup) and shard.groups["g"].is_simple()
    for record in RECORDS:
        assert shard.replay(record, 2) is True
    group = shard.consumer_group("g")
    assert isinstance(group, ConsumerGroup)
    assert (group.group_epoch, group.assignment_epoch, group.metadata_hash) == (1, 1, 77)
    assert group.members["m1"].assigned_partitions == {T1: frozenset({0, 1})}
    assert shard.group("g") is None  # a consumer group is not a classic group
    assert shard.offsets.get("g", "foo", 0) is not None  # offsets stay with the id


def test_a_contradicting_record_raises_illegal_state():
    shard = GroupShard()
    for record in RECORDS:
        shard.replay(record, 0)
    with pytest.raises(IllegalStateError, match="did not receive ConsumerGroupCurrentMemberAssignmentValue"):
        shard.replay(r.ConsumerGroupMemberMetadataTombstone("g", "m1"), 0)


def test_dump_prints_consumer_records_as_kafkas_parser(tmp_path, capsys):
    writer = PartitionWriter(
        OFFSETS_TOPIC,
        LogManager(tmp_path, FakeClock(5_000)),
        50,
        offsets_log_config(Config({"data.dir": str(tmp_path)})),
        FakeClock(5_000),
        encode_record,
    )
    writer.append(partition_for("g"), RECORDS + [r.ConsumerGroupMetadataTombstone("g")])
    writer.close()
    with pytest.raises(SystemExit):
        main(["dump", str(tmp_path / f"__consumer_offsets-{partition_for('g')}"), "--offsets-decoder"])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| offset:")]
    payloads = [(line.split(" key: ", 1)[1].split(" payload: ", 1)) for line in lines]
    assert json.loads(payloads[0][0]) == {"type": "5", "data": {"groupId": "g", "memberId": "m1"}}
    assert json.loads(payloads[0][1]) == {
        "version": "0",
        "data": {
            "instanceId": None,
            "rackId": None,
            "clientId": "c",
            "clientHost": "/127.0.0.1",
            "subscribedTopicNames": ["foo"],
            "subscribedTopicRegex": None,
            "rebalanceTimeoutMs": 5000,
            "serverAssignor": None,
        },
    }
    assert json.loads(payloads[1][1]) == {"version": "0", "data": {"epoch": 1, "metadataHash": 77}}
    assert json.loads(payloads[4][1])["data"]["assignedPartitions"] == [
        {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [0, 1]}
    ]
    assert payloads[5] == ['{"type":"3","data":{"groupId":"g"}}', "<DELETE>"]


def test_decode_of_an_assignment_tombstone():
    key, _ = encode_record(r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m1"))
    assert decode(0, key, None) == ('{"type":"8","data":{"groupId":"g","memberId":"m1"}}', "<DELETE>")


# -- the topics image -------------------------------------------------------------------------


def test_topics_image_follows_the_registry_and_logs_what_changed():
    registry, clock = FakeRegistry(), FakeClock(1_000)
    registry.add("a", 2)
    image = TopicsImage(registry, clock)
    start = image.version
    assert start == 1_000 and image.changed_since(start) == frozenset()
    assert image.by_name("a").num_partitions == 2 and image.by_id(tid(1)).name == "a"
    image.refresh()
    assert image.version == start  # nothing changed: same version
    registry.add("b", 1)
    registry.grow("a", 3)
    image.refresh()
    assert image.version == start + 1  # never less than the last version + 1
    assert image.changed_since(start) == {"a", "b"}
    clock.advance(500)
    registry.delete("b")
    image.refresh()
    assert image.version == 1_500 and image.changed_since(start + 1) == {"b"} and image.by_name("b") is None
    assert sorted(image.names()) == ["a"]


def test_settings_come_from_kafka_names():
    config = GroupConfig.from_config(
        Config(
            {
                "group.consumer.session.timeout.ms": "12000",
                "group.consumer.min.session.timeout.ms": "10000",
                "group.consumer.heartbeat.interval.ms": "700",
                "group.consumer.min.heartbeat.interval.ms": "500",
                "group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.RangeAssignor,uniform",
                "group.consumer.migration.policy": "upgrade",
                "group.coordinator.rebalance.protocols": "classic",
                "group.consumer.max.size": "3",
            }
        )
    )
    assert (config.consumer.session_timeout_ms, config.consumer.heartbeat_interval_ms) == (12_000, 700)
    assert config.consumer.assignors == ("range", "uniform") and config.consumer.default_assignor == "range"
    assert config.consumer.migration_policy.upgrade_enabled and not config.consumer.migration_policy.downgrade_enabled
    assert config.consumer.max_size == 3 and not config.consumer_protocol_enabled
    assert GroupConfig.from_config(Config()).consumer_protocol_enabled  # Kafka 4: classic,consumer
    with pytest.raises(ValueError, match="unknown assignor"):
        assignor_names("sticky")
    # GroupCoordinatorConfig's requirements: refused at start.
    with pytest.raises(ValueError, match="session.timeout.ms must be between"):
        GroupConfig.from_config(Config({"group.consumer.session.timeout.ms": "1000"}))
    with pytest.raises(ValueError, match="heartbeat.interval.ms must be less than"):
        GroupConfig.from_config(
            Config(
                {
                    "group.consumer.min.session.timeout.ms": "1000",
                    "group.consumer.session.timeout.ms": "2000",
                    "group.consumer.min.heartbeat.interval.ms": "100",
                    "group.consumer.heartbeat.interval.ms": "3000",
                }
            )
        )


def test_uuid_source_gives_predictable_member_ids():
    shard = GroupShard(uuid_source=lambda: "00000000-0000-0000-0000-00000000002a")
    assert shard.new_uuid() == uuid.UUID(int=42)
