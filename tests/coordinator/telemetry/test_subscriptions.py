"""Client-metrics subscriptions: ClientMetricsConfigs.validate's answers (Kafka's
ClientMetricsConfigsTest cases as data), the CLIENT_METRICS description, kgc's default
subscription, and persistence in dynamic-configs.json across a restart (a real file)."""

from __future__ import annotations

import json

import pytest

from coordinator.admin.client_metrics_configs import ClientMetricsConfigs
from coordinator.admin.config_file import DynamicConfigFile
from coordinator.admin.config_model import ConfigError, ConfigSource
from coordinator.config import Config
from coordinator.config import ConfigError as SettingError
from coordinator.runtime.clock import FakeClock
from coordinator.telemetry.subscriptions import (
    DEFAULT_NAME,
    SubscriptionError,
    Subscriptions,
    default_subscription,
    validate,
)
from coordinator.telemetry.wiring import telemetry_parts
from protocol.errors import ErrorCode as E

REFUSED = [
    ("", {"metrics": "*"}, E.INVALID_REQUEST, "Subscription name can't be empty"),
    ("s", {"random": "x"}, E.INVALID_REQUEST, "Unknown client metrics configuration: random"),
    ("s", {"interval.ms": "soon"}, E.INVALID_CONFIG, "Not a number of type INT"),
    ("s", {"interval.ms": "99"}, E.INVALID_REQUEST, "interval must be between 100 and 3600000"),
    ("s", {"interval.ms": "3600001"}, E.INVALID_REQUEST, "interval must be between 100 and 3600000"),
    ("s", {"match": "client_software_name"}, E.INVALID_CONFIG, "Illegal client matching pattern"),
    ("s", {"match": "a=b=c"}, E.INVALID_CONFIG, "Illegal client matching pattern"),
    ("s", {"match": "client_colour=red"}, E.INVALID_CONFIG, "Illegal client matching pattern"),
    ("s", {"match": "client_id=(unclosed"}, E.INVALID_CONFIG, "Illegal client matching pattern"),
    ("s", {"match": r"client_id=(a)\1"}, E.INVALID_CONFIG, "Illegal client matching pattern"),  # no backrefs in RE2
]


@pytest.mark.parametrize(
    ("name", "configs", "code", "text"), REFUSED, ids=[r[3][:30] + str(i) for i, r in enumerate(REFUSED)]
)
def test_refused_as_kafka_refuses(name, configs, code, text):
    with pytest.raises(SubscriptionError) as refused:
        validate(name, configs)
    assert refused.value.code == code and text in str(refused.value)


def test_accepted_values_become_canonical_text():
    got = validate("s", {"match": " client_id = p.* ", "interval.ms": " 100 ", "metrics": "a. , b."})
    assert got == {"metrics": "a.,b.", "interval.ms": "100", "match": "client_id = p.*"}
    assert validate("s", {"interval.ms": "3600000"}) == {"interval.ms": "3600000"}


def test_described_with_defaults_and_what_was_set():
    subs = Subscriptions()
    subs.replace("s", validate("s", {"interval.ms": "500"}))
    described = {
        e.name: (e.value, e.source, e.synonyms) for e in ClientMetricsConfigs(subs).describe("s", None, True, False)
    }
    assert described["interval.ms"][:2] == ("500", ConfigSource.CLIENT_METRICS_CONFIG)
    assert described["interval.ms"][2][0].source == ConfigSource.CLIENT_METRICS_CONFIG
    assert described["metrics"] == ("", ConfigSource.DEFAULT_CONFIG, ())
    assert described["match"] == ("", ConfigSource.DEFAULT_CONFIG, ())
    never = ClientMetricsConfigs(subs).describe("never-set", ["interval.ms"], False, True)
    assert [(e.name, e.value, e.doc) for e in never] == [
        ("interval.ms", "300000", "Metrics push interval in milliseconds")
    ]
    with pytest.raises(ConfigError) as refused:
        ClientMetricsConfigs(subs).describe("", None, False, False)
    assert refused.value.code == E.INVALID_REQUEST


def test_the_default_subscription_matches_everyone_and_is_no_config_resource():
    default = default_subscription("org.apache.kafka.producer.", 500)
    subs = Subscriptions(default=default)
    assert [s.name for s in subs.all()] == [DEFAULT_NAME] and subs.names() == []
    assert default.matches({"client_id": None}) and default.interval_ms == 500
    assert default_subscription("  ", 500) is None


def test_bad_settings_refuse_to_start_with_one_line():
    for settings, text in [
        ({"client.metrics.default.metrics": "*", "client.metrics.default.interval.ms": 50}, "between 100 and 3600000"),
        ({"telemetry.max.bytes": 0}, "telemetry.max.bytes must be at least 1"),
    ]:
        with pytest.raises(SettingError) as refused:
            telemetry_parts(Config(settings), FakeClock(), [0], {}, None)
        assert text in str(refused.value)


def test_subscriptions_survive_a_restart_in_dynamic_configs_json(tmp_path):
    config_file = DynamicConfigFile(tmp_path)
    config_file.load()
    config_file.save_groups({"g": {"consumer.session.timeout.ms": "50000"}})
    subs = Subscriptions(config_file.load().client_metrics, config_file.save_client_metrics)
    subs.replace("producers", validate("producers", {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"}))
    subs.replace("gone", validate("gone", {"metrics": "*"}))
    subs.replace("gone", {})
    raw = json.loads((tmp_path / "dynamic-configs.json").read_text())
    assert raw["client_metrics"] == {"producers": {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"}}
    assert raw["groups"] == {"g": {"consumer.session.timeout.ms": "50000"}}  # the other sections are kept
    reloaded = DynamicConfigFile(tmp_path).load()
    again = Subscriptions(reloaded.client_metrics)
    assert again.names() == ["producers"] and again.all()[0].interval_ms == 1000


def test_a_file_written_before_telemetry_reads_as_no_subscriptions(tmp_path):
    (tmp_path / "dynamic-configs.json").write_text(json.dumps({"version": 1, "broker": {}, "groups": {}}))
    assert DynamicConfigFile(tmp_path).load().client_metrics == {}


def test_a_failed_write_changes_nothing():
    def broken(_):
        raise OSError("disk full")

    subs = Subscriptions(persist=broken)
    with pytest.raises(OSError):
        subs.replace("s", validate("s", {"metrics": "*"}))
    assert subs.names() == [] and subs.version == 0
