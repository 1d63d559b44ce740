"""The config APIs' one service: describe, replace (AlterConfigs) and change by operations
(IncrementalAlterConfigs) the configs of TOPIC, BROKER, GROUP and CLIENT_METRICS resources, and
list them.

A change is all or nothing per resource and per request phase, as Kafka's: the request is checked
first (ConfigAdminManager.preprocess: a resource named twice, a config named twice, null values ->
INVALID_REQUEST), then each resource's complete new set is computed and validated, and only a
valid set is made durable (topic.properties, dynamic-configs.json) and then applied live (running
logs, the connection limit, group coordinators reading GroupConfigManager at use). A resource that
fails leaves itself unchanged and the others go on, as Kafka answers each resource on its own.
`validate_only` checks everything and changes nothing. With cluster.processes every broker process
changes and follows the same files, as Kafka's brokers replay one metadata log: a change is
computed on the newest configs under the dynamic-config file's lock (topic overrides under the
topics' generation lock), and `follow` (every 100 ms, and before every describe or list) takes up
the others' changes and applies them live here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coordinator.admin.broker_configs import BROKER_DEFS, LOG_SYNONYMS, BrokerSettings
from coordinator.admin.client_metrics_configs import CLIENT_METRICS_DEFS, ClientMetricsConfigs
from coordinator.admin.config_file import DynamicConfigFile
from coordinator.admin.config_model import (
    ConfigDef,
    ConfigError,
    ConfigSource,
    ConfigType,
    Entry,
    ResourceType,
    Synonym,
    apply_ops,
    invalid_request,
)
from coordinator.admin.topic_configs import TOPIC_DEFS, TopicConfigs
from coordinator.broker.data_path import DataPath
from coordinator.groups.dynamic_config import GROUP_SETTINGS, GroupConfigError, GroupConfigManager
from protocol.errors import ErrorCode

GROUP_DEFS: dict[str, ConfigDef] = {
    s.name: ConfigDef(s.name, ConfigType[s.kind], s.doc, s.check, None) for s in GROUP_SETTINGS
}


class ConfigService:
    def __init__(
        self,
        broker: BrokerSettings,
        groups: GroupConfigManager,
        data: DataPath,
        connections: Any = None,
        shared: DynamicConfigFile | None = None,
        client_metrics: ClientMetricsConfigs | None = None,
    ) -> None:
        """`connections`: the listeners' shared trio.CapacityLimiter (max.connections);
        `shared`: the dynamic-config file, when other broker processes change it too
        (cluster.processes); `client_metrics`: the KIP-714 subscriptions (None: none can be set)."""
        self.broker, self.groups, self.data = broker, groups, data
        self.topics = TopicConfigs(data, broker)
        self.client_metrics = client_metrics
        self._connections = connections
        self._shared = shared

    def follow(self) -> None:
        """cluster.processes: take up the broker, group and client-metrics configs another
        broker process changed, and apply them here (topic overrides: cluster/shared_topics.py)."""
        if self._shared is None or not self._shared.changed():
            return
        stored = self._shared.load()
        self._applied(self.broker.load(stored.broker))
        self.groups.load(stored.groups)
        if self.client_metrics is not None:
            self.client_metrics.load(stored.client_metrics)

    # -- DescribeConfigs ---------------------------------------------------------------------------
    def describe(
        self, rtype: int, name: str, keys: list[str] | None, synonyms: bool, docs: bool, node_id: int
    ) -> list[Entry]:
        """ConfigHelper.describeConfigs for one resource; ConfigError as Kafka answers."""
        self.follow()
        if rtype == ResourceType.TOPIC:
            return self.topics.describe(name, keys, synonyms, docs)
        if rtype == ResourceType.BROKER:
            if not name:
                return self.broker.describe("cluster", keys, synonyms, docs)
            if _broker_id(name, "Broker id must be an integer, but it is: ") != node_id:
                raise invalid_request(f"Unexpected broker id, expected {node_id} or empty string, but received {name}")
            return self.broker.describe(None, keys, synonyms, docs)
        if rtype == ResourceType.GROUP:
            if not name:
                raise invalid_request("Group name must not be empty")
            return self._describe_group(name, keys, synonyms, docs)
        if rtype == ResourceType.CLIENT_METRICS:
            if self.client_metrics is None:
                if not name:
                    raise invalid_request("Client metrics subscription name must not be empty")
                return []
            return self.client_metrics.describe(name, keys, synonyms, docs)
        raise invalid_request(f"Unsupported resource type: {_type_name(rtype)}")

    def _describe_group(self, group: str, keys: list[str] | None, synonyms: bool, docs: bool) -> list[Entry]:
        """ConfigHelper.createGroupConfigEntry: the override (GROUP_CONFIG) or the broker's value."""
        overrides = self.groups.overrides(group)
        entries = []
        for setting in GROUP_SETTINGS:
            if keys and setting.name not in keys:
                continue
            set_here = setting.name in overrides
            value = self.groups.effective(group, setting.name)
            source = ConfigSource.GROUP_CONFIG if set_here else ConfigSource.DEFAULT_CONFIG
            entries.append(
                Entry(
                    setting.name,
                    value,
                    source,
                    False,
                    False,
                    GROUP_DEFS[setting.name].type,
                    setting.doc if docs else "",
                    (Synonym(setting.name, value, source),) if synonyms else (),
                )
            )
        return entries

    # -- AlterConfigs / IncrementalAlterConfigs ----------------------------------------------------
    def replace(self, rtype: int, name: str, configs: Mapping[str, str], validate_only: bool, node_id: int) -> None:
        """AlterConfigs: the resource's overrides become exactly `configs`."""
        self._change(rtype, name, lambda current, defs: dict(configs), validate_only, node_id)

    def alter(
        self, rtype: int, name: str, ops: Sequence[tuple[str, int, str | None]], validate_only: bool, node_id: int
    ) -> None:
        """IncrementalAlterConfigs: the operations applied to the resource's current overrides."""
        self._change(rtype, name, lambda current, defs: apply_ops(current, ops, defs), validate_only, node_id)

    def _change(self, rtype: int, name: str, compute: Any, validate_only: bool, node_id: int) -> None:
        try:
            if self._shared is None:
                self._change_one(rtype, name, compute, validate_only, node_id)
                return
            with self._shared.locked():  # on the newest configs, alone among the processes
                self.follow()
                self._change_one(rtype, name, compute, validate_only, node_id)
        except OSError as exc:  # a full disk while persisting: nothing was applied
            raise ConfigError(ErrorCode.KAFKA_STORAGE_ERROR, f"the change could not be made durable: {exc}") from None

    def _change_one(self, rtype: int, name: str, compute: Any, validate_only: bool, node_id: int) -> None:
        if rtype == ResourceType.TOPIC:
            self.data.topics.catch_up()  # (cluster.processes: another process's change first)
            current = self.topics.overrides(name) if name and self.data.topics.get(name) else {}
            new = self.topics.validate(name, compute(current, TOPIC_DEFS))
            if not validate_only:
                self.topics.replace(name, new)
        elif rtype == ResourceType.BROKER:
            level = "cluster" if not name else "broker"
            if name and _broker_id(name, "Node id must be an integer, but it is: ") != node_id:
                raise invalid_request(f"Unexpected broker id, expected {node_id}, but received {name}")
            new = compute(self.broker.overrides(level), BROKER_DEFS)
            self.broker.validate(new)
            if not validate_only:
                self._applied(self.broker.replace(level, new))
        elif rtype == ResourceType.GROUP:
            if not name:
                raise invalid_request("Default group resources are not allowed.")
            try:
                new = self.groups.validate(compute(self.groups.overrides(name), GROUP_DEFS))
            except GroupConfigError as exc:
                raise ConfigError(ErrorCode.INVALID_CONFIG, str(exc)) from None
            if not validate_only:
                self.groups.replace(name, new)
        elif rtype == ResourceType.CLIENT_METRICS:
            if self.client_metrics is None:
                raise invalid_request("this server keeps no client-metrics subscriptions")
            new = self.client_metrics.validate(name, compute(self.client_metrics.overrides(name), CLIENT_METRICS_DEFS))
            if not validate_only:
                self.client_metrics.replace(name, new)
        else:
            raise invalid_request(f"Unknown resource type {rtype}")

    def _applied(self, changed: set[str]) -> None:
        """What kgc does live when a dynamic broker setting changed (DynamicBrokerConfig's
        reconfigurables): the logs take their effective configs, the connection limit moves."""
        if changed & set(LOG_SYNONYMS):
            self.data.reconfigure_logs()
        if "max.connections" in changed and self._connections is not None:
            self._connections.total_tokens = self.broker.config.max_connections

    # -- ListConfigResources -----------------------------------------------------------------------
    def list_resources(self, types: Sequence[int], brokers: Sequence[int]) -> list[tuple[str, int]]:
        """(name, type) of every resource with configs (KIP-1142); `types` empty = every type."""
        self.follow()
        wanted = set(types) or {
            ResourceType.TOPIC,
            ResourceType.BROKER,
            ResourceType.GROUP,
            ResourceType.CLIENT_METRICS,
        }
        unknown = wanted - {int(t) for t in ResourceType if t not in (ResourceType.UNKNOWN,)}
        if unknown:
            raise invalid_request(f"Unsupported resource types: {sorted(unknown)}")
        out: list[tuple[str, int]] = []
        if ResourceType.TOPIC in wanted:
            out.extend((t.name, int(ResourceType.TOPIC)) for t in self.data.topics.all())
        if ResourceType.BROKER in wanted:
            out.extend((str(b), int(ResourceType.BROKER)) for b in brokers)
        if ResourceType.GROUP in wanted:
            out.extend((g, int(ResourceType.GROUP)) for g in self.groups.groups())
        if ResourceType.CLIENT_METRICS in wanted and self.client_metrics is not None:
            out.extend((s, int(ResourceType.CLIENT_METRICS)) for s in self.client_metrics.names())
        return out  # BROKER_LOGGER: kgc has none


def _broker_id(name: str, prefix: str) -> int:
    try:
        return int(name)
    except ValueError:
        raise invalid_request(prefix + name) from None


def _type_name(rtype: int) -> str:
    try:
        return ResourceType(rtype).name
    except ValueError:
        return str(rtype)
