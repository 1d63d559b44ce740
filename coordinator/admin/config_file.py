"""The dynamic configs of a data dir: `<data dir>/dynamic-configs.json`, what (Incremental)
AlterConfigs set on BROKER, GROUP and CLIENT_METRICS resources (TOPIC overrides live in each
topic's `topic.properties`, coordinator/broker/topics.py).

    {"version": 1,
     "broker": {"cluster": {name: value}, "broker": {name: value}},
     "groups": {group id: {name: value}},
     "client_metrics": {subscription name: {name: value}}}

("client_metrics" is absent from files written before kgc served KIP-714: read as empty.)

`cluster` is the cluster-wide default level (resource name ""), `broker` the per-broker level
(a broker's id: the brokers of one kgc process share one set of settings, so one level serves
them all). Every change rewrites the whole file crash-safely (temp file, fsync, rename, directory
fsync: storage.fsutil.atomic_write) before it is applied, so after kill -9 the file holds the
last change answered, or the one before it. A missing file is empty; an unreadable one is
refused at start (ConfigFileError), never silently dropped. With cluster.processes every broker
process changes and follows the one file (cluster/shared_file.py: `locked`, `changed`).
docs/admin.md describes it.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from coordinator.cluster.shared_file import SharedFile
from coordinator.datadir import DataDirError
from storage import fsutil

FILE_NAME = "dynamic-configs.json"
VERSION = 1

Levels = dict[str, dict[str, str]]


class ConfigFileError(DataDirError):
    """The file exists but does not parse: the server refuses to start rather than lose configs."""


@dataclass
class DynamicConfigs:
    broker: Levels = field(default_factory=lambda: {"cluster": {}, "broker": {}})
    groups: Levels = field(default_factory=dict)
    client_metrics: Levels = field(default_factory=dict)


class DynamicConfigFile:
    def __init__(self, data_dir: str | Path, *, shared: bool = False) -> None:
        """`shared`: other broker processes change the file too (cluster.processes)."""
        self.path = Path(data_dir) / FILE_NAME
        self._file = SharedFile(self.path, shared=shared)
        self._state = DynamicConfigs()

    def changed(self) -> bool:
        """Another broker process changed the file since this one read or wrote it."""
        return self._file.changed()

    def locked(self) -> AbstractContextManager[None]:
        """Alone among the processes changing the file (nothing in one process)."""
        return self._file.locked()

    def load(self) -> DynamicConfigs:
        data = self._file.read()
        if data is None:
            self._state = DynamicConfigs()
            return self._state
        try:
            raw = json.loads(data.decode("utf-8"))
            if raw.get("version") != VERSION:
                raise ValueError(f"version {raw.get('version')!r}, expected {VERSION}")
            broker = {level: _strings(raw["broker"].get(level, {})) for level in ("cluster", "broker")}
            groups = {str(g): _strings(v) for g, v in raw.get("groups", {}).items()}
            client_metrics = {str(s): _strings(v) for s, v in raw.get("client_metrics", {}).items()}
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise ConfigFileError(
                f"{self.path} does not parse ({exc}): fix or remove it (it holds the configs set with "
                "AlterConfigs / kgc configs)"
            ) from None
        self._state = DynamicConfigs(broker, groups, client_metrics)
        return self._state

    def save_broker(self, levels: Levels) -> None:
        self._write(replace(self._state, broker={k: dict(v) for k, v in levels.items()}))

    def save_groups(self, groups: Levels) -> None:
        self._write(replace(self._state, groups={g: dict(v) for g, v in groups.items()}))

    def save_client_metrics(self, subscriptions: Levels) -> None:
        self._write(replace(self._state, client_metrics={s: dict(v) for s, v in subscriptions.items()}))

    def _write(self, state: DynamicConfigs) -> None:
        body = {"version": VERSION, "broker": state.broker, "groups": state.groups}
        if state.client_metrics:
            body["client_metrics"] = state.client_metrics
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fsutil.atomic_write(self.path, (json.dumps(body, indent=1, sort_keys=True) + "\n").encode("utf-8"))
        self._file.wrote()
        self._state = state  # only once durable


def _strings(values: Any) -> dict[str, str]:
    if not isinstance(values, dict):
        raise TypeError("expected an object of name: value")
    return {str(k): str(v) for k, v in values.items()}
