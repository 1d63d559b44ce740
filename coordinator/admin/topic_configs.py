"""The TOPIC config resource: a topic's settings described with Kafka's sources and synonyms, and
changed with the controller's checks, in its order (ControllerConfigurationValidator, then the
existence check of ConfigurationControlManager).

"" -> INVALID_REQUEST "Default topic resources are not allowed."; a bad name ->
INVALID_TOPIC_EXCEPTION; an unknown config name or a value that does not parse -> INVALID_CONFIG;
an unknown topic -> UNKNOWN_TOPIC_OR_PARTITION. kgc's internal topics take their configs from the
coordinators' settings (offsets.topic.segment.bytes, ...): changing them is POLICY_VIOLATION, and
they are described as their logs run. A change is written to every partition's
`topic.properties` (topics.py) and applied to the running logs (DataPath.set_topic_configs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coordinator.admin.broker_configs import BrokerSettings
from coordinator.admin.config_model import (
    ConfigDef,
    ConfigError,
    ConfigSource,
    ConfigType,
    Entry,
    Synonym,
    invalid_config,
    invalid_request,
    render,
)
from coordinator.broker.data_path import DataPath
from coordinator.broker.topic_config import TOPIC_SETTINGS, TopicConfigError, TopicSetting, validate_overrides
from coordinator.broker.topics import InvalidTopicError, Topic, validate_topic_name
from protocol.errors import ErrorCode

TOPIC_DEFS: dict[str, ConfigDef] = {
    t.name: ConfigDef(t.name, ConfigType[t.kind], t.doc, t.parse, render(t.default)) for t in TOPIC_SETTINGS
}
# LogConfig field of each topic setting, to describe the internal topics as their logs run.
_LOG_FIELD = {
    "cleanup.policy": "cleanup_policy",
    "retention.ms": "retention_ms",
    "retention.bytes": "retention_bytes",
    "segment.bytes": "segment_bytes",
    "segment.ms": "segment_ms",
    "max.message.bytes": "max_message_bytes",
    "delete.retention.ms": "delete_retention_ms",
    "min.compaction.lag.ms": "min_compaction_lag_ms",
    "min.cleanable.dirty.ratio": "min_cleanable_dirty_ratio",
}


class TopicConfigs:
    def __init__(self, data: DataPath, broker: BrokerSettings) -> None:
        self.data, self.broker = data, broker

    def topic(self, name: str) -> Topic:
        """The topic a request names, or ConfigError as Kafka answers."""
        if not name:
            raise invalid_request("Default topic resources are not allowed.")
        try:
            validate_topic_name(name)
        except InvalidTopicError as exc:
            raise ConfigError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
        topic = self.data.topics.get(name)
        if topic is None:
            raise ConfigError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
        return topic

    def overrides(self, name: str) -> dict[str, str]:
        return dict(self.topic(name).configs)

    def describe(self, name: str, names: list[str] | None, synonyms: bool, docs: bool) -> list[Entry]:
        topic = self.topic(name)
        overrides = dict(topic.configs)
        running = self._internal_values(topic) if topic.internal else {}
        wanted = set(names) if names else None
        entries = []
        for setting in TOPIC_SETTINGS:
            if wanted is not None and setting.name not in wanted:
                continue
            chain = self._synonyms(setting, overrides) if not topic.internal else []
            value: str | None
            if setting.name in running:
                value = running[setting.name]
            else:
                value = chain[0].value if chain else render(setting.default)
            source = chain[0].source if chain else ConfigSource.DEFAULT_CONFIG
            definition = TOPIC_DEFS[setting.name]
            entries.append(
                Entry(
                    setting.name,
                    value,
                    source,
                    False,
                    False,
                    definition.type,
                    definition.doc if docs else "",
                    tuple(chain) if synonyms else (),
                )
            )
        return entries

    def _synonyms(self, setting: TopicSetting, overrides: Mapping[str, str]) -> list[Synonym]:
        """ConfigHelper.createTopicConfigEntry: the override, then its broker setting's chain."""
        chain = []
        if setting.name in overrides:
            chain.append(Synonym(setting.name, overrides[setting.name], ConfigSource.TOPIC_CONFIG))
        if setting.broker_setting is not None:
            entry = self.broker.describe(None, [setting.broker_setting], True, False)[0]
            chain.extend(entry.synonyms)
        return chain

    def _internal_values(self, topic: Topic) -> dict[str, str]:
        log = self.data.logs.get(topic.name, 0)
        if log is None:
            return {}
        config: Any = log.config
        return {name: render(getattr(config, attr)) for name, attr in _LOG_FIELD.items()}

    def validate(self, name: str, new: Mapping[str, str]) -> dict[str, str]:
        """A topic's complete new override set: normalised, or ConfigError in Kafka's order."""
        if not name:
            raise invalid_request("Default topic resources are not allowed.")
        try:
            validate_topic_name(name)
        except InvalidTopicError as exc:
            raise ConfigError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
        try:
            normalised = validate_overrides(new)
        except TopicConfigError as exc:
            raise invalid_config(str(exc)) from None
        topic = self.topic(name)
        if topic.internal:
            raise ConfigError(
                ErrorCode.POLICY_VIOLATION,
                f"{name} is internal: kgc configures it from its coordinator settings (offsets.topic.*, "
                "transaction.state.log.*)",
            )
        return normalised

    def replace(self, name: str, new: Mapping[str, str]) -> None:
        self.data.set_topic_configs(name, dict(new))
