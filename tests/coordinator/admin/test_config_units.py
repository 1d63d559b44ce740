"""The config pieces on their own: IncrementalAlterConfigs' operations, Kafka's GroupConfig
validation, and the crash-safe files (dynamic-configs.json, topic.properties, a grown topic's
dirs) on real files, each failure mode once."""

from __future__ import annotations

import errno
import json
import re

import pytest

import storage.fsutil
from coordinator.admin.config_file import ConfigFileError, DynamicConfigFile
from coordinator.admin.config_model import AlterOp, ConfigError, apply_ops
from coordinator.admin.topic_configs import TOPIC_DEFS
from coordinator.broker.topic_config import CONFIG_FILE
from coordinator.broker.topics import TopicRegistry
from coordinator.config import Config
from coordinator.groups.dynamic_config import GroupConfigError, GroupConfigManager
from protocol.errors import ErrorCode


def test_apply_ops_set_delete_append_subtract():
    current = {"retention.ms": "1", "cleanup.policy": "delete"}
    ops = [
        ("retention.ms", AlterOp.DELETE, None),
        ("segment.bytes", AlterOp.SET, "2048"),
        ("cleanup.policy", AlterOp.APPEND, "compact,delete"),
    ]
    assert apply_ops(current, ops, TOPIC_DEFS) == {"segment.bytes": "2048", "cleanup.policy": "delete,compact"}
    assert apply_ops({}, [("cleanup.policy", AlterOp.SUBTRACT, "delete")], TOPIC_DEFS) == {"cleanup.policy": ""}
    with pytest.raises(ConfigError) as refused:
        apply_ops({}, [("retention.ms", AlterOp.APPEND, "1")], TOPIC_DEFS)
    assert refused.value.code == ErrorCode.INVALID_CONFIG
    with pytest.raises(ConfigError) as unknown_op:
        apply_ops({}, [("retention.ms", 9, "1")], TOPIC_DEFS)
    assert unknown_op.value.code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nope": "1"}, "Unknown group config name: nope"),
        ({"consumer.session.timeout.ms": "x"}, "Invalid value x for configuration consumer.session.timeout.ms"),
        ({"consumer.session.timeout.ms": "70000"}, "must be less than or equal to group.consumer.max.session"),
        ({"share.heartbeat.interval.ms": "100"}, "must be greater than or equal to group.share.min.heartbeat"),
        ({"share.record.lock.duration.ms": "999"}, "Value must be at least 1000"),
        ({"share.delivery.count.limit": "11"}, "must be less than or equal to group.share.max.delivery.count.limit"),
        ({"share.auto.offset.reset": "by_duration:-PT1H"}, "'earliest', 'latest' or of the format"),
        ({"share.auto.offset.reset": "by_duration:PT"}, "'earliest', 'latest' or of the format"),
        ({"share.isolation.level": "READ_COMMITTED"}, "read_committed, read_uncommitted"),
    ],
)
def test_group_config_validation_follows_kafka(overrides, message):
    with pytest.raises(GroupConfigError, match=re.escape(message)):
        GroupConfigManager().validate(overrides)


def test_group_configs_within_lowered_bounds_and_session_above_heartbeat():
    config = Config({"group.consumer.min.session.timeout.ms": 1000, "group.consumer.min.heartbeat.interval.ms": 100})
    manager = GroupConfigManager(config)
    assert manager.validate({"consumer.session.timeout.ms": " 2000 ", "consumer.heartbeat.interval.ms": "500"}) == {
        "consumer.session.timeout.ms": "2000",
        "consumer.heartbeat.interval.ms": "500",
    }
    with pytest.raises(GroupConfigError, match="consumer.session.timeout.ms must be greater than"):
        manager.validate({"consumer.session.timeout.ms": "1000", "consumer.heartbeat.interval.ms": "1000"})
    assert manager.validate({"share.auto.offset.reset": "by_duration:P1DT2H3M4.5S"})
    assert manager.effective("g", "share.auto.offset.reset") == "latest" and manager.value("g", "x") is None


def test_dynamic_config_file_round_trip_and_refusals(tmp_path, monkeypatch):
    store = DynamicConfigFile(tmp_path)
    manager = GroupConfigManager(None, store.load().groups, store.save_groups)
    manager.replace("g", {"share.isolation.level": "read_committed"})
    store.save_broker({"cluster": {"log.retention.ms": "5"}, "broker": {}})
    again = DynamicConfigFile(tmp_path).load()
    assert again.groups == {"g": {"share.isolation.level": "read_committed"}}
    assert again.broker["cluster"] == {"log.retention.ms": "5"}

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage.fsutil.os, "write", full)
    with pytest.raises(OSError):
        manager.replace("g", {})
    monkeypatch.undo()
    assert manager.value("g", "share.isolation.level") == "read_committed"  # not served: it is not durable
    assert DynamicConfigFile(tmp_path).load().groups == again.groups
    assert not list(tmp_path.glob("*.tmp"))
    for text in ("{", json.dumps({"version": 9}), json.dumps({"version": 1, "broker": []})):
        (tmp_path / "dynamic-configs.json").write_text(text)
        with pytest.raises(ConfigFileError, match="dynamic-configs.json does not parse"):
            DynamicConfigFile(tmp_path).load()


def test_topic_configs_cut_short_leave_partition_0s_set(tmp_path):
    registry = TopicRegistry(tmp_path)
    registry.load()
    registry.create("t", 3, {"retention.ms": "1"})
    registry.set_configs("t", {"retention.ms": "2", "segment.bytes": "4096"})
    (tmp_path / "t-2" / CONFIG_FILE).write_text("retention.ms=1\n")  # as if the crash came before t-2
    reloaded = TopicRegistry(tmp_path)
    reloaded.load()
    assert dict(reloaded.get("t").configs) == {"retention.ms": "2", "segment.bytes": "4096"}
    assert (tmp_path / "t-2" / CONFIG_FILE).read_text() == (tmp_path / "t-0" / CONFIG_FILE).read_text()


def test_a_grown_topic_whose_growth_was_cut_short_comes_back_whole(tmp_path):
    registry = TopicRegistry(tmp_path)
    registry.load()
    topic = registry.create("t", 2, {"retention.ms": "1"})
    (tmp_path / "t-5").mkdir()  # the growth's commit point made durable, then the crash
    reloaded = TopicRegistry(tmp_path)
    reloaded.load()
    grown = reloaded.get("t")
    assert grown.partitions == 6 and grown.topic_id == topic.topic_id
    for p in range(6):
        assert (tmp_path / f"t-{p}" / "partition.metadata").exists()
        assert (tmp_path / f"t-{p}" / CONFIG_FILE).read_text() == "retention.ms=1\n"
    assert reloaded.grow("t", 8).partitions == 8 and (tmp_path / "t-7").is_dir()
