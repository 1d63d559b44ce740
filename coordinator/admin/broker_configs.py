"""The BROKER config resource: every setting of config_settings.py described with Kafka's sources,
synonyms, types and read-only flags, and the dynamic ones changed live (DynamicBrokerConfig).

Levels, highest first: the per-broker dynamic level (resource name = a broker's id), the
cluster-wide dynamic default (resource name ""), the static value the process started with
(properties file, --set), the default. The brokers of one kgc process share one set of settings
(one copy of every log, one connection limit), so a per-broker change made on any broker applies
to all and every broker describes it (a deliberate difference from Kafka, documented in
docs/admin.md). Dynamic here = what Kafka 4.2 lets an admin change at runtime and kgc honours
live (`DYNAMIC`): the log settings behind topic defaults (DynamicLogConfig), max.connections
(SocketServer) and transaction.partition.verification.enable (DynamicProducerStateManagerConfig);
every other setting is read-only: changing it is INVALID_REQUEST "Cannot update these configs
dynamically" (ConfigAdminManager). A name kgc does not know is INVALID_CONFIG (Kafka accepts
custom names for plugins; kgc has none, and would silently ignore them). Values that do not parse
are INVALID_REQUEST, as Kafka's broker-side validation answers (KAFKA-13609).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

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
from coordinator.broker.topic_config import TOPIC_SETTINGS
from coordinator.config import Config
from coordinator.config_settings import SETTINGS, Setting

_log = logging.getLogger(__name__)

# The broker settings behind topic configs (ServerTopicConfigSynonyms): dynamic, and checked as
# the topic config is.
LOG_SYNONYMS = {t.broker_setting: t for t in TOPIC_SETTINGS if t.broker_setting is not None}
DYNAMIC: frozenset[str] = frozenset({*LOG_SYNONYMS, "max.connections", "transaction.partition.verification.enable"})
_LONG = {
    "log.retention.ms",
    "log.retention.bytes",
    "log.retention.check.interval.ms",
    "log.flush.interval.ms",
    "log.cleaner.delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size",
    "offsets.retention.check.interval.ms",
    "queued.max.request.bytes",
    "connections.max.idle.ms",
}
_SHORT = {"offsets.topic.replication.factor", "transaction.state.log.replication.factor", "default.replication.factor"}
_LIST = {"group.coordinator.rebalance.protocols", "group.consumer.assignors", "group.share.assignors"}
_SECRET_WORDS = ("password", "secret", "token", "jaas", "credential")
LEVELS = ("broker", "cluster")  # highest first
_LEVEL_SOURCE = {"broker": ConfigSource.DYNAMIC_BROKER_CONFIG, "cluster": ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG}


def _type(setting: Setting) -> ConfigType:
    if setting.name in _LIST:
        return ConfigType.LIST
    if setting.name in _LONG:
        return ConfigType.LONG
    if setting.name in _SHORT:
        return ConfigType.SHORT
    if setting.parse is int:
        return ConfigType.INT
    if setting.parse is float:
        return ConfigType.DOUBLE
    if isinstance(setting.default, bool):
        return ConfigType.BOOLEAN
    return ConfigType.STRING


def is_sensitive(name: str) -> bool:
    """Kafka's PASSWORD-typed configs: their values are never described (nor logged)."""
    return any(word in name for word in _SECRET_WORDS) or name.endswith(".key")


BROKER_DEFS: dict[str, ConfigDef] = {
    s.name: ConfigDef(
        s.name,
        ConfigType.PASSWORD if is_sensitive(s.name) else _type(s),
        s.help,
        s.parse,
        None if is_sensitive(s.name) else render(s.default),
        read_only=s.name not in DYNAMIC,
        sensitive=is_sensitive(s.name),
    )
    for s in SETTINGS
}
_SETTING = {s.name: s for s in SETTINGS}


def parse_value(name: str, text: str) -> Any:
    """A dynamic setting's value parsed, or ValueError (the log ones also as their topic config)."""
    synonym = LOG_SYNONYMS.get(name)
    if synonym is not None:
        synonym.parse(text)
    value = _SETTING[name].parse(text.strip())
    if name == "max.connections" and value < 1:
        raise ValueError("Value must be at least 1")  # a limit of 0 would refuse every client, this one too
    return value


class BrokerSettings:
    def __init__(
        self,
        config: Config,
        stored: Mapping[str, Mapping[str, str]] | None = None,
        persist: Callable[[dict[str, dict[str, str]]], None] | None = None,
    ) -> None:
        """`config`: the process's settings as started (their static values are kept here);
        `stored`: the levels persisted; `persist(levels)` makes new levels durable. The stored
        values are applied to `config` at once, before anything reads it."""
        self.config = config
        self._static = dict(config.items())
        self._persist = persist
        self._levels: dict[str, dict[str, str]] = {level: {} for level in LEVELS}
        for level in LEVELS:
            for name, text in (stored or {}).get(level, {}).items():
                try:
                    self._check_one(name, text)
                except ConfigError as exc:  # written by an older kgc, or by hand: say so, keep going
                    _log.warning("ignoring the stored dynamic broker config %s=%s: %s", name, text, exc.message)
                    continue
                self._levels[level][name] = text
        self._apply(DYNAMIC)

    # -- reading ---------------------------------------------------------------------------------
    def overrides(self, level: str) -> dict[str, str]:
        return dict(self._levels[level])

    def describe(self, level: str | None, names: list[str] | None, synonyms: bool, docs: bool) -> list[Entry]:
        """ConfigHelper.createBrokerConfigEntry: `level` None = a broker (every setting), "cluster"
        = the cluster default resource (only what is set there)."""
        wanted = set(names) if names else None
        pool = list(BROKER_DEFS) if level is None else list(self._levels["cluster"])
        entries = []
        for name in pool:
            if wanted is not None and name not in wanted:
                continue
            definition = BROKER_DEFS[name]
            chain = self._synonyms(name, definition.sensitive)
            if level is not None:
                chain = [s for s in chain if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
            source = chain[0].source if chain else ConfigSource.DEFAULT_CONFIG
            value = None if definition.sensitive else (chain[0].value if chain else definition.default)
            entries.append(
                Entry(
                    name,
                    value,
                    source,
                    definition.read_only,
                    definition.sensitive,
                    definition.type,
                    definition.doc if docs else "",
                    tuple(chain) if synonyms else (),
                )
            )
        return entries

    def _synonyms(self, name: str, sensitive: bool) -> list[Synonym]:
        chain = []
        for level in LEVELS:
            if name in self._levels[level]:
                chain.append(Synonym(name, None if sensitive else self._levels[level][name], _LEVEL_SOURCE[level]))
        static, default = self._static[name], _SETTING[name].default
        if static != default:
            chain.append(Synonym(name, None if sensitive else render(static), ConfigSource.STATIC_BROKER_CONFIG))
        chain.append(Synonym(name, None if sensitive else render(default), ConfigSource.DEFAULT_CONFIG))
        return chain

    # -- changing --------------------------------------------------------------------------------
    def validate(self, new: Mapping[str, str]) -> None:
        """A level's complete new set (DynamicBrokerConfig.validateConfigs): every name known
        and dynamic, every value parses."""
        unknown = sorted(n for n in new if n not in BROKER_DEFS)
        if unknown:
            raise invalid_config(f"Unknown broker config name(s): {', '.join(unknown)} (`kgc settings` lists them)")
        fixed = sorted(n for n in new if n not in DYNAMIC)
        if fixed:
            raise invalid_request(f"Cannot update these configs dynamically: Set({', '.join(fixed)})")
        for name, text in new.items():
            self._check_one(name, text)

    def _check_one(self, name: str, text: str) -> None:
        if name not in BROKER_DEFS:
            raise invalid_config(f"Unknown broker config name: {name}")
        if name not in DYNAMIC:
            raise invalid_request(f"Cannot update these configs dynamically: Set({name})")
        try:
            parse_value(name, text)
        except ValueError as exc:
            raise invalid_request(f"Invalid value {text} for configuration {name}: {exc}") from None

    def replace(self, level: str, new: Mapping[str, str]) -> set[str]:
        """A level's new set (validated): persisted, then applied; returns the names whose
        effective value changed."""
        updated = {lvl: dict(values) for lvl, values in self._levels.items()}
        updated[level] = {name: text.strip() for name, text in new.items()}
        if self._persist is not None:
            self._persist(updated)
        touched = set(self._levels[level]) | set(updated[level])
        self._levels = updated
        return self._apply(touched)

    def load(self, stored: Mapping[str, Mapping[str, str]]) -> set[str]:
        """cluster.processes: the levels another broker process persisted, applied; returns the
        names whose effective value changed."""
        updated = {level: {n: t for n, t in stored.get(level, {}).items() if n in DYNAMIC} for level in LEVELS}
        touched = {n for level in LEVELS for n in set(self._levels[level]) | set(updated[level])}
        self._levels = updated
        return self._apply(touched)

    def _apply(self, names: set[str] | frozenset[str]) -> set[str]:
        changed = {}
        for name in names:
            text = next((self._levels[lvl][name] for lvl in LEVELS if name in self._levels[lvl]), None)
            value = self._static[name] if text is None else parse_value(name, text)
            if self.config.get(name) != value:
                changed[name] = value
        self.config.update(changed)
        return set(changed)
