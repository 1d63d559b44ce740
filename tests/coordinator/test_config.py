"""Settings: Kafka names, defaults, properties files, command-line precedence."""
from __future__ import annotations

import pytest

from coordinator.__main__ import build_parser, resolve_config
from coordinator.config import Config, ConfigError, read_properties


def test_defaults_use_kafka_names_and_values():
    config = Config()
    assert config.group_min_session_timeout_ms == 6000
    assert config.group_max_session_timeout_ms == 1800000
    assert config.offsets_retention_minutes == 10080
    assert config.group_initial_rebalance_delay_ms == 100  # measured: bench/group_bench.py
    assert config.get("offsets.topic.num.partitions") == 50


def test_unknown_setting_is_an_error():
    with pytest.raises(ConfigError, match="unknown setting"):
        Config({"group.no.such.thing": "1"})


def test_bad_value_is_an_error():
    with pytest.raises(ConfigError, match="group.max.size"):
        Config({"group.max.size": "many"})


def test_properties_file_then_command_line(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("# comment\ngroup.initial.rebalance.delay.ms=3000\nauto.create.topics.enable: false\nport=1234\n")
    assert read_properties(props)["port"] == "1234"
    args = build_parser().parse_args([
        "serve", "--config", str(props), "--set", "group.initial.rebalance.delay.ms=10", "--port", "0",
        "--create-topic", "a:3", "--create-topic", "b.c:1",
    ])
    config = resolve_config(args)
    assert config.group_initial_rebalance_delay_ms == 10  # --set wins over the file
    assert config.auto_create_topics_enable is False
    assert config.port == 0  # --port wins over both
    assert args.create_topic == [("a", 3), ("b.c", 1)]


def test_create_topic_spec_is_checked():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--create-topic", "nopartitions"])
