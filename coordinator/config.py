"""Server settings, named as Kafka names them.

Every setting has one definition, in config_settings.py (Kafka's property name, type, default,
one line of help); this module parses and resolves them.
Values come from, in rising precedence: the defaults, a properties file (Kafka's server.properties
works: server_properties.py maps Kafka's names and the rest are noted as ignored), and
`--set name=value` on the command line. Code reads them as attributes with dots turned into
underscores (`config.group_initial_rebalance_delay_ms`). Defaults follow Kafka's broker defaults
except where noted: this server is a test tool, so its initial rebalance delay is short (100 ms,
not 3 s) and it keeps data under the working directory. Errors name the setting, the
expected type and, for a misspelt name, the nearest ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from coordinator import server_properties
from coordinator.config_settings import SETTINGS, Setting
from coordinator.server_properties import Entry, PropertiesError

_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
# Kafka's per-listener overrides, `listener.name.<listener>.<name>` (listener in lower case), and for
# these SASL settings also `listener.name.<listener>.<mechanism>.<name>` (KafkaConfig's
# ListenerName.configPrefix, saslMechanismPrefix).
_LISTENER_PREFIX = "listener.name."
_PER_MECHANISM = frozenset({"sasl.jaas.config", "connections.max.reauth.ms"})
_PER_LISTENER = _PER_MECHANISM | {n for n in _BY_NAME if n.startswith(("ssl.", "sasl."))}


def listener_scoped(name: str) -> tuple[str, Setting] | None:
    """(the name as stored, its setting) for a per-listener override such as
    `listener.name.SASL_SSL.scram-sha-512.sasl.jaas.config`; None for any other name."""
    if not name.startswith(_LISTENER_PREFIX):
        return None
    listener, dot, key = name[len(_LISTENER_PREFIX) :].partition(".")
    if not dot or not listener:
        return None
    if key in _PER_LISTENER:
        return f"{_LISTENER_PREFIX}{listener.lower()}.{key}", _BY_NAME[key]
    mechanism, dot, key = key.partition(".")
    if dot and mechanism and key in _PER_MECHANISM:
        return f"{_LISTENER_PREFIX}{listener.lower()}.{mechanism.lower()}.{key}", _BY_NAME[key]
    return None


class ConfigError(ValueError):
    """A setting that does not exist or whose value does not parse; the text says which and why."""


class Config:
    """Resolved settings; read as attributes (`config.group_max_size`) or by Kafka name.

    `overrides` may use kgc's names, the Kafka names server_properties maps (`log.dirs`,
    `listeners`, ...) and underscores for dots (`group_max_size`); text values are parsed."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        values = {s.name: s.default for s in SETTINGS}
        values.update(resolve(overrides or {}))
        self._values = values

    def __getattr__(self, attr: str) -> Any:
        try:
            return self._values[attr.replace("_", ".")]
        except KeyError:
            raise AttributeError(attr) from None

    def get(self, name: str) -> Any:
        scoped = listener_scoped(name)
        if scoped is not None:
            return self._values.get(scoped[0], scoped[1].default)
        return self._values[_lookup(name).name]

    def for_listener(self, listener: str, name: str, mechanism: str | None = None) -> Any:
        """`name` as listener `listener` (and SASL mechanism `mechanism`) sees it: the most specific
        of listener.name.<l>.<mechanism>.<name>, listener.name.<l>.<name> and <name> that is set."""
        prefix = f"{_LISTENER_PREFIX}{listener.lower()}."
        if mechanism is not None and name in _PER_MECHANISM:
            found = self._values.get(f"{prefix}{mechanism.lower()}.{name}")
            if found is not None:
                return found
        found = self._values.get(prefix + name)
        return found if found is not None else self._values[name]

    def is_secret(self, name: str) -> bool:
        scoped = listener_scoped(name)
        setting = scoped[1] if scoped else _BY_NAME.get(name)
        return setting is not None and setting.secret

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._values.items()

    def update(self, values: Mapping[str, Any]) -> None:
        """Dynamic broker configs (coordinator/admin/broker_configs.py): parsed values every
        reader sees from now on (Kafka's DynamicBrokerConfig updating the live KafkaConfig)."""
        for name, value in values.items():
            self._values[_lookup(name).name] = value

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)


_MAPPED = server_properties.mapped_names()


def canonical_name(name: str) -> str | None:
    """The setting (or mapped Kafka name) `name` means, dots for underscores; None if none."""
    for candidate in (name, name.replace("_", ".")):
        if candidate in _BY_NAME or candidate in _MAPPED:
            return candidate
    scoped = listener_scoped(name)  # never with underscores: listener names hold them
    return scoped[0] if scoped else None


def suggest(name: str) -> str:
    """'; did you mean x or y?' for a misspelt setting name, or ''."""
    close = difflib.get_close_matches(name.replace("_", "."), sorted({*_BY_NAME, *_MAPPED}), n=3, cutoff=0.75)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _lookup(name: str) -> Setting:
    canonical = canonical_name(name)
    if canonical is None or canonical not in _BY_NAME:
        raise ConfigError(f"unknown setting {name!r}{suggest(name)} (`kgc settings` lists them all)")
    return _BY_NAME[canonical]


_EXPECTED = {int: "an integer", float: "a number"}


def _parse(setting: Setting, text: str, where: str = "") -> Any:
    try:
        return setting.parse(text.strip())
    except ValueError as exc:
        expected = _EXPECTED.get(setting.parse)  # type: ignore[call-overload]
        why = f"expected {expected}, got {text.strip()!r}" if expected else str(exc)
        raise ConfigError(f"{where}bad value for {setting.name}: {why}") from None


def resolve(values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """kgc settings from one source of name -> value (our names, mapped Kafka names, underscores);
    text values parsed. An unknown name is an error: only a properties file may hold Kafka's
    other settings (`settings_from_file`)."""
    for name in values:
        if canonical_name(name) is None:
            raise ConfigError(f"{where}unknown setting {name!r}{suggest(name)} (`kgc settings` lists them all)")
    settings, _notes = _translate([Entry(canonical_name(n) or n, v, where) for n, v in values.items()])
    return settings


def _translate(entries: list[Entry]) -> tuple[dict[str, Any], list[str]]:
    """Parsed kgc settings and the mapping notes of one source; Kafka names mapped, ours win."""
    scoped = {e.name: listener_scoped(e.name) for e in entries}
    ours = {e.name: e for e in entries if e.name in _BY_NAME or scoped[e.name]}
    # The listener settings are ours and also mapped: `listeners` names the host and port.
    kafka = [
        Entry(e.name, str(e.value), e.where)
        for e in entries
        if (e.name not in ours or e.name in server_properties.LISTENER_SETTINGS) and not scoped[e.name]
    ]
    try:
        mapped = server_properties.translate(kafka, _BY_NAME)
    except PropertiesError as exc:
        raise ConfigError(str(exc)) from None
    settings: dict[str, Any] = {}
    where = {e.name: e.where for e in kafka}
    for name, value in mapped.settings.items():
        if name not in ours:
            settings[name] = _parse(_BY_NAME[name], value, where.get(name, ""))
    for name, entry in ours.items():
        value, found = entry.value, scoped[name]
        key, setting = found if found else (name, _BY_NAME[name])
        settings[key] = _parse(setting, value, entry.where) if isinstance(value, str) else value
    return settings, mapped.notes


def settings_from_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Settings from a properties file (Kafka's server.properties included) and one note per
    line worth saying: each Kafka name mapped, and each name kgc does not use (ignored, as Kafka
    ignores unknown names; a near miss of one of ours says which). Bad values are errors."""
    try:
        entries = server_properties.read(path)
    except OSError as exc:
        raise ConfigError(f"cannot read --config {path}: {exc.strerror or exc}") from None
    known = [Entry(canonical_name(e.name) or e.name, e.value, e.where) for e in entries if canonical_name(e.name)]
    settings, notes = _translate(known)
    for e in entries:
        if canonical_name(e.name) is None:
            notes.append(f"{e.where}{e.name} is not a kgc setting: ignored{suggest(e.name)}")
    order = {e.where: i for i, e in enumerate(entries)}
    notes.sort(key=lambda note: order.get(note[: note.find(": ") + 2], len(order)))
    return settings, notes


def read_properties(path: Path) -> dict[str, str]:
    """A properties file as name -> text (Java's format; a repeated name: the last one)."""
    return {e.name: e.value for e in server_properties.read(path)}


def parse_assignment(text: str) -> tuple[str, str]:
    """Parses one `--set name=value` argument."""
    if "=" not in text:
        raise ConfigError(f"--set expects name=value, got {text!r}")
    name, value = text.split("=", 1)
    return name.strip(), value


MAX_BROKERS = 64


def check_cluster(config: Config) -> None:
    """cluster.brokers in 1..64, and every broker's port (port + i) a real one (port 0: free ports)."""
    n, port = config.cluster_brokers, config.port
    if not 1 <= n <= MAX_BROKERS:
        raise ConfigError(f"cluster.brokers (--brokers) must be between 1 and {MAX_BROKERS}, got {n}")
    if config.cluster_processes and config.clock_mode == "manual":
        raise ConfigError(
            "clock.mode=manual needs every broker in one process (the control plane moves one clock): "
            "it cannot run with cluster.processes (--processes)"
        )
    if port != 0 and not (1 <= port and port + n - 1 <= 65535):
        last = f"..{port + n - 1}" if n > 1 else ""
        raise ConfigError(f"port {port}{last} is outside 1..65535 (port 0 picks free ports)")
