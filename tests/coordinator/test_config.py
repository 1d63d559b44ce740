"""Settings: Kafka names, defaults, properties files, command-line precedence."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator.__main__ import build_parser, resolve_config
from coordinator.config import Config, ConfigError, read_properties, settings_from_file


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
    args = build_parser().parse_args(
        [
            "serve",
            "--config",
            str(props),
            "--set",
            "group.initial.rebalance.delay.ms=10",
            "--port",
            "0",
            "--create-topic",
            "a:3",
            "--create-topic",
            "b.c:1",
        ]
    )
    config = resolve_config(args)
    assert config.group_initial_rebalance_delay_ms == 10  # --set wins over the file
    assert config.auto_create_topics_enable is False
    assert config.port == 0  # --port wins over both
    assert args.create_topic == [("a", 3), ("b.c", 1)]


def test_create_topic_spec_is_checked():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--create-topic", "nopartitions"])


# -- Kafka's names and files -----------------------------------------------------------------------
DATA = Path(__file__).parent / "data"  # Kafka's own config files, unchanged (apache/kafka, Oct 2024)


def test_kafkas_kraft_server_properties_is_read_as_kafka_means_it():
    settings, notes = settings_from_file(DATA / "kafka-kraft-server.properties")
    config = Config(settings)
    assert (config.host, config.port) == ("localhost", 9092)  # the PLAINTEXT listener, advertised as localhost
    assert config.data_dir == "/tmp/kraft-combined-logs"  # log.dirs
    assert (config.node_id, config.num_partitions, config.offsets_topic_replication_factor) == (1, 1, 1)
    assert config.log_retention_ms == 168 * 3600 * 1000  # log.retention.hours
    assert config.socket_request_max_bytes == 104857600
    ignored = [n for n in notes if n.endswith("is not a kgc setting: ignored")]
    assert "kafka-kraft-server.properties:24: process.roles is not a kgc setting: ignored" in ignored
    names = [n.split(": ")[1].split()[0] for n in ignored]
    assert len(names) == len(set(names)) == 7  # once each
    assert config.transaction_state_log_replication_factor == 1  # settings kgc shares with Kafka
    assert config.share_coordinator_state_topic_replication_factor == 1
    assert "num.io.threads" in names and "listeners" not in names
    assert (
        "kafka-kraft-server.properties:42: listeners: serving PLAINTEXT -> port=9092 host=localhost "
        "(not serving CONTROLLER)" in notes
    )


def test_kafkas_zookeeper_era_server_properties_too():
    settings, notes = settings_from_file(DATA / "kafka-zk-server.properties")
    config = Config(settings)
    assert (config.node_id, config.data_dir) == (0, "/tmp/kafka-logs")  # broker.id, log.dirs
    assert any(n.endswith("zookeeper.connect is not a kgc setting: ignored") for n in notes)


def test_a_real_kafka_file_serves_unchanged(tmp_path):
    command = [
        str(Path(sys.executable).with_name("kgc")),
        "serve",
        "--config",
        str(DATA / "kafka-kraft-server.properties"),
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--data-dir",
        str(tmp_path / "d"),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert first.startswith("kgc: serving bootstrap=127.0.0.1:"), (first, err)
    assert proc.returncode == 0
    assert "kgc: kafka-kraft-server.properties:24: process.roles is not a kgc setting: ignored" in err


def test_bad_values_name_file_line_key_and_type(tmp_path):
    props = tmp_path / "my.properties"
    props.write_text("# mine\ngroup.max.size = many\n")
    with pytest.raises(
        ConfigError,
        match=r"^my.properties:2: bad value for group.max.size: expected an integer, "
        r"got 'many'$",
    ):
        settings_from_file(props)
    props.write_text("auto.create.topics.enable=perhaps\n")
    with pytest.raises(
        ConfigError, match="my.properties:1: bad value for auto.create.topics.enable: expected true or false"
    ):
        settings_from_file(props)


def test_a_near_miss_in_a_file_is_ignored_with_did_you_mean(tmp_path):
    props = tmp_path / "my.properties"
    props.write_text("group.max.sise=3\n")
    settings, notes = settings_from_file(props)
    assert settings == {}
    assert notes == [
        "my.properties:1: group.max.sise is not a kgc setting: ignored; "
        "did you mean group.max.size or group.share.max.size?"
    ]


def test_a_misspelt_name_in_python_or_on_the_command_line_is_an_error():
    misspelt = r"unknown setting 'group_max_sise'; did you mean group.max.size or group.share.max.size\?"
    with pytest.raises(ConfigError, match=misspelt):
        Config({"group_max_sise": 3})
    with pytest.raises(ConfigError, match="unknown setting 'num.io.threads'"):
        Config({"num.io.threads": "8"})


def test_kafka_names_and_underscores_work_in_python_settings_too():
    config = Config({"log.dirs": "/a,/b", "broker_id": 4, "group_max_size": "3", "log.retention.minutes": "2"})
    assert (config.data_dir, config.node_id, config.group_max_size, config.log_retention_ms) == ("/a", 4, 3, 120000)


def test_our_own_name_beats_kafkas_in_the_same_place_whatever_the_order(tmp_path):
    props = tmp_path / "p.properties"
    props.write_text(
        "log.retention.ms=5\nlog.retention.hours=1\ndata.dir=mine\nlog.dirs=kafkas\n"
        "listeners=PLAINTEXT://:9000\nport=9001\n"
    )
    settings, _ = settings_from_file(props)
    assert (settings["log.retention.ms"], settings["data.dir"], settings["port"]) == (5, "mine", 9001)


def test_every_client_listener_is_served_the_first_names_host_and_port(tmp_path):
    props = tmp_path / "p.properties"
    props.write_text("listeners=SASL_SSL://:9093\n")
    settings, notes = settings_from_file(props)
    assert settings["port"] == 9093 and settings["listeners"] == "SASL_SSL://:9093"
    props.write_text(
        "listeners=INTERNAL://0.0.0.0:9094,EXTERNAL://:9095,CONTROLLER://:9096\ncontroller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=INTERNAL:SSL,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT\nlog.dirs=/x,/y\n"
        "listener.name.INTERNAL.ssl.client.auth=required\nlistener.name.external.plain.sasl.jaas.config=x\n"
    )
    settings, notes = settings_from_file(props)
    assert settings["port"] == 9094 and "host" not in settings
    assert any("serving INTERNAL, then EXTERNAL -> port=9094 (not serving CONTROLLER)" in n for n in notes)
    assert "p.properties:4: log.dirs: kgc keeps one data dir: using /x, not /y" in notes
    config = Config(settings)
    assert config.for_listener("INTERNAL", "ssl.client.auth") == "required"
    assert config.for_listener("EXTERNAL", "ssl.client.auth") == "none"
    assert config.for_listener("EXTERNAL", "sasl.jaas.config", "PLAIN") == "x"
    assert config.is_secret("listener.name.external.plain.sasl.jaas.config")
    props.write_text("listeners=ODD://:9093\n")
    with pytest.raises(ConfigError, match="listener ODD has no security protocol"):
        settings_from_file(props)
    props.write_text("listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n")
    with pytest.raises(ConfigError, match="no client listener"):
        settings_from_file(props)
    with pytest.raises(ConfigError, match="unknown setting"):
        Config({"listener.name.x.unknown.thing": "1"})


def test_the_java_properties_format(tmp_path):
    props = tmp_path / "p.properties"
    props.write_text(
        "! a comment\n  group.max.size   7\ncluster.id:a\\\n   b\\u0063\ntranscript.file = x\\ty\ngroup.max.size=8\n"
    )
    assert read_properties(props) == {"group.max.size": "8", "cluster.id": "abc", "transcript.file": "x\ty"}
    settings, _ = settings_from_file(props)
    assert settings["group.max.size"] == 8  # a repeated key: the last one wins


def test_an_unreadable_config_file_is_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read --config .*absent.properties"):
        settings_from_file(tmp_path / "absent.properties")
