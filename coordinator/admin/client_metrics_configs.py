"""The CLIENT_METRICS config resource (KIP-714): client-metrics subscriptions by name.

Described as Kafka 4.x's ConfigHelper describes one: its three configs (metrics, interval.ms,
match), each with the value set (source CLIENT_METRICS_CONFIG) or ClientMetricsConfigs' default
(DEFAULT_CONFIG); a name that was never set describes as defaults, an empty name is
INVALID_REQUEST. Changed as the controller validates it (ClientMetricsConfigs.validate:
INVALID_REQUEST or INVALID_CONFIG, coordinator/telemetry/subscriptions.py); deleting every
config removes the subscription. The subscriptions are durable in dynamic-configs.json.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.admin.config_model import (
    ConfigDef,
    ConfigError,
    ConfigSource,
    ConfigType,
    Entry,
    Synonym,
    invalid_request,
)
from coordinator.telemetry import subscriptions as subs
from coordinator.telemetry.subscriptions import SubscriptionError, Subscriptions

CLIENT_METRICS_DEFS: dict[str, ConfigDef] = {
    subs.METRICS: ConfigDef(subs.METRICS, ConfigType.LIST, subs.DOCS[subs.METRICS], subs.parse_list, ""),
    subs.INTERVAL_MS: ConfigDef(
        subs.INTERVAL_MS, ConfigType.INT, subs.DOCS[subs.INTERVAL_MS], int, str(subs.INTERVAL_MS_DEFAULT)
    ),
    subs.MATCH: ConfigDef(subs.MATCH, ConfigType.LIST, subs.DOCS[subs.MATCH], subs.parse_list, ""),
}


class ClientMetricsConfigs:
    def __init__(self, subscriptions: Subscriptions) -> None:
        self.subscriptions = subscriptions

    def describe(self, name: str, keys: list[str] | None, synonyms: bool, docs: bool) -> list[Entry]:
        if not name:
            raise invalid_request("Client metrics subscription name must not be empty")
        configs = self.subscriptions.configs(name)
        entries = []
        for key, definition in CLIENT_METRICS_DEFS.items():
            if keys and key not in keys:
                continue
            set_here = key in configs
            value = configs[key] if set_here else definition.default
            source = ConfigSource.CLIENT_METRICS_CONFIG if set_here else ConfigSource.DEFAULT_CONFIG
            chain = (Synonym(key, value, source),) if synonyms and set_here else ()
            entries.append(
                Entry(key, value, source, False, False, definition.type, definition.doc if docs else "", chain)
            )
        return entries

    def overrides(self, name: str) -> dict[str, str]:
        return self.subscriptions.configs(name)

    def validate(self, name: str, configs: Mapping[str, str]) -> dict[str, str]:
        try:
            return subs.validate(name, configs)
        except SubscriptionError as exc:
            raise ConfigError(exc.code, str(exc)) from None

    def replace(self, name: str, configs: Mapping[str, str]) -> None:
        self.subscriptions.replace(name, configs)

    def load(self, stored: Mapping[str, Mapping[str, str]]) -> None:
        self.subscriptions.load(stored)

    def names(self) -> list[str]:
        return self.subscriptions.names()
