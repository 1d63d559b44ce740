"""cluster.processes: the broker, group and client-metrics configs of one data dir, altered
through any broker process, reach the others and apply there live (admin/configs.py `follow`),
and no process overwrites another's change. Two ConfigServices on one dir stand for two
processes (topic overrides: interop/test_processes_configs.py)."""

from __future__ import annotations

from dataclasses import dataclass

import trio

from coordinator.admin.broker_configs import BrokerSettings
from coordinator.admin.client_metrics_configs import ClientMetricsConfigs
from coordinator.admin.config_file import DynamicConfigFile
from coordinator.admin.config_model import ResourceType
from coordinator.admin.configs import ConfigService
from coordinator.config import Config
from coordinator.groups.dynamic_config import GroupConfigManager
from coordinator.telemetry.subscriptions import Subscriptions


@dataclass
class Logs:
    """The data path as far as a dynamic broker default reaches it."""

    reconfigured: int = 0

    def reconfigure_logs(self) -> None:
        self.reconfigured += 1


def process(tmp_path, *, shared: bool = True) -> tuple[ConfigService, Logs, trio.CapacityLimiter]:
    config_file = DynamicConfigFile(tmp_path, shared=shared)
    stored = config_file.load()
    config = Config({"data.dir": str(tmp_path)})
    logs, limiter = Logs(), trio.CapacityLimiter(config.max_connections)
    service = ConfigService(
        BrokerSettings(config, stored.broker, config_file.save_broker),
        GroupConfigManager(config, stored.groups, config_file.save_groups),
        logs,  # type: ignore[arg-type]
        limiter,
        shared=config_file if shared else None,
        client_metrics=ClientMetricsConfigs(Subscriptions(stored.client_metrics, config_file.save_client_metrics)),
    )
    return service, logs, limiter


def test_broker_configs_altered_through_one_process_apply_live_at_the_other(tmp_path):
    first, _, _ = process(tmp_path)
    second, second_logs, second_limiter = process(tmp_path)
    first.replace(ResourceType.BROKER, "", {"log.retention.ms": "123456", "max.connections": "7"}, False, 0)
    second.follow()
    assert second.broker.config.get("log.retention.ms") == 123456
    assert second_logs.reconfigured == 1  # its open logs took the new default
    assert second_limiter.total_tokens == 7
    second.follow()  # nothing changed since: nothing applied again
    assert second_logs.reconfigured == 1


def test_group_and_client_metrics_configs_are_made_on_the_newest_file(tmp_path):
    first, _, _ = process(tmp_path)
    second, _, _ = process(tmp_path)
    first.alter(ResourceType.GROUP, "a", [("consumer.session.timeout.ms", 0, "50000")], False, 0)
    # second has not followed yet: its change is still made on the newest file, keeping first's
    second.alter(ResourceType.GROUP, "b", [("consumer.heartbeat.interval.ms", 0, "6000")], False, 0)
    second.alter(ResourceType.CLIENT_METRICS, "s", [("metrics", 0, "org.apache.kafka.")], False, 0)
    assert first.groups.value("b", "consumer.heartbeat.interval.ms") is None  # not followed yet
    described = {e.name: e.value for e in first.describe(ResourceType.GROUP, "b", None, False, False, 0)}
    assert described["consumer.heartbeat.interval.ms"] == "6000"  # a describe reads the newest
    assert first.groups.value("a", "consumer.session.timeout.ms") == "50000"
    assert first.list_resources([ResourceType.CLIENT_METRICS], [0]) == [("s", int(ResourceType.CLIENT_METRICS))]
    assert DynamicConfigFile(tmp_path).load().groups == {
        "a": {"consumer.session.timeout.ms": "50000"},
        "b": {"consumer.heartbeat.interval.ms": "6000"},
    }


def test_one_process_does_not_follow_the_file(tmp_path):
    first, _, _ = process(tmp_path, shared=False)
    second, _, _ = process(tmp_path, shared=False)
    first.alter(ResourceType.GROUP, "a", [("consumer.session.timeout.ms", 0, "50000")], False, 0)
    second.follow()
    assert second.groups.value("a", "consumer.session.timeout.ms") is None
