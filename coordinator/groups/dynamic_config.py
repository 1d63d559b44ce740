"""Dynamic per-group settings: the GROUP resource of DescribeConfigs / (Incremental)AlterConfigs.

Kafka 4.2's GroupConfig and GroupConfigManager: the settings an admin may set per group
(`GROUP_SETTINGS`), each defaulting to a broker setting, validated as GroupConfig.validate does
(names known, values parse, within the broker's group.consumer.* / group.share.* min and max;
session timeout above heartbeat interval), refused with INVALID_CONFIG (`GroupConfigError`).
Readers ask for one value at its point of use (`value(group, name)`: the override as canonical
text, or None to use the broker's setting), so a change applies at once everywhere; there is one
manager per server, shared by every broker's coordinators and share partitions. `replace` makes a
group's new set durable first (`persist`, the admin's dynamic-config file), then serves it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.config import Config


class GroupConfigError(ValueError):
    """A group config Kafka would refuse (INVALID_CONFIG); the text is Kafka's."""


_DURATION = re.compile(r"^P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:[.,]\d{0,9})?S)?)?$", re.IGNORECASE)


def _int(at_least: int) -> Callable[[str], str]:
    def check(text: str) -> str:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError("Not a number of type INT") from None
        if not -(2**31) <= value < 2**31:
            raise ValueError("Not a number of type INT")
        if value < at_least:
            raise ValueError(f"Value must be at least {at_least}")
        return str(value)

    return check


def _auto_offset_reset(text: str) -> str:
    """ShareGroupAutoOffsetResetStrategy.fromString: latest | earliest | by_duration:<ISO-8601>."""
    value = text.strip()
    if value in ("latest", "earliest"):
        return value
    duration = value[len("by_duration:") :] if value.startswith("by_duration:") else None
    if duration is not None and _DURATION.match(duration) and duration.upper() not in ("P", "PT"):
        if not duration.upper().endswith("T"):
            return value
    raise ValueError(
        f"Invalid value `{value}` for configuration share.auto.offset.reset. The value must be either "
        "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>'."
    )


def _isolation_level(text: str) -> str:
    value = text.strip()
    if value not in ("read_committed", "read_uncommitted"):
        raise ValueError("String must be one of: read_committed, read_uncommitted")
    return value


@dataclass(frozen=True, slots=True)
class GroupSetting:
    name: str
    check: Callable[[str], str]  # canonical text, or ValueError saying why
    broker_setting: str  # its default (config_settings.py)
    bounds: tuple[str, str] | None  # the broker settings holding its min and max
    kind: str  # Kafka's ConfigDef type
    doc: str


GROUP_SETTINGS: tuple[GroupSetting, ...] = (
    GroupSetting(
        "consumer.session.timeout.ms",
        _int(1),
        "group.consumer.session.timeout.ms",
        ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
        "INT",
        "The timeout to detect client failures when using the consumer group protocol.",
    ),
    GroupSetting(
        "consumer.heartbeat.interval.ms",
        _int(1),
        "group.consumer.heartbeat.interval.ms",
        ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
        "INT",
        "The heartbeat interval given to the members of a consumer group.",
    ),
    GroupSetting(
        "share.session.timeout.ms",
        _int(1),
        "group.share.session.timeout.ms",
        ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
        "INT",
        "The timeout to detect client failures when using the share group protocol.",
    ),
    GroupSetting(
        "share.heartbeat.interval.ms",
        _int(1),
        "group.share.heartbeat.interval.ms",
        ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
        "INT",
        "The heartbeat interval given to the members of a share group.",
    ),
    GroupSetting(
        "share.record.lock.duration.ms",
        _int(1000),
        "group.share.record.lock.duration.ms",
        ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
        "INT",
        "The record acquisition lock duration in milliseconds for share groups.",
    ),
    GroupSetting(
        "share.delivery.count.limit",
        _int(2),
        "group.share.delivery.count.limit",
        ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
        "INT",
        "The maximum number of delivery attempts for a record delivered to a share group.",
    ),
    GroupSetting(
        "share.auto.offset.reset",
        _auto_offset_reset,
        "",
        None,
        "STRING",
        "The strategy to initialize the share-partition start offset: earliest, latest, or "
        "by_duration:<duration> (ISO-8601, PnDTnHnMn.nS) back from the current time.",
    ),
    GroupSetting(
        "share.isolation.level",
        _isolation_level,
        "",
        None,
        "STRING",
        "Controls how to read records written transactionally: read_committed delivers only committed "
        "transactional records, read_uncommitted every record.",
    ),
)
GROUP_SETTINGS_BY_NAME = {s.name: s for s in GROUP_SETTINGS}
# Kafka's GroupConfig defaults where no broker setting stands behind the group setting.
_FIXED_DEFAULTS = {"share.auto.offset.reset": "latest", "share.isolation.level": "read_uncommitted"}
# GroupConfig.validateValues: the session timeout must stay above the heartbeat interval.
_PAIRS = (
    ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
)


class GroupConfigManager:
    def __init__(
        self,
        settings: Any = None,
        overrides: Mapping[str, Mapping[str, str]] | None = None,
        persist: Callable[[dict[str, dict[str, str]]], None] | None = None,
    ) -> None:
        """`settings`: the server's Config (the broker defaults and bounds; None: Kafka's
        defaults from config_settings.py); `overrides`: what was persisted; `persist(all)`
        makes every group's overrides durable (the admin's dynamic-config file)."""
        self._settings = settings if settings is not None else Config()
        self._persist = persist
        self._by_group: dict[str, dict[str, str]] = {g: dict(v) for g, v in (overrides or {}).items() if v}

    # -- reading (at the point of use) -------------------------------------------------------------
    def value(self, group_id: str, name: str) -> str | None:
        """The group's override of `name`, or None when the broker's setting applies."""
        group = self._by_group.get(group_id)
        return None if group is None else group.get(name)

    def overrides(self, group_id: str) -> Mapping[str, str]:
        return dict(self._by_group.get(group_id, {}))

    def groups(self) -> list[str]:
        """Every group with at least one override (Kafka's ListConfigResources for GROUP)."""
        return sorted(self._by_group)

    def default(self, name: str) -> str:
        """The broker's value for a group setting (GroupCoordinatorConfig.extractGroupConfigMap)."""
        setting = GROUP_SETTINGS_BY_NAME[name]
        if not setting.broker_setting:
            return _FIXED_DEFAULTS[name]
        return str(self._settings.get(setting.broker_setting))

    def effective(self, group_id: str, name: str) -> str:
        override = self.value(group_id, name)
        return self.default(name) if override is None else override

    # -- changing ----------------------------------------------------------------------------------
    def validate(self, overrides: Mapping[str, str]) -> dict[str, str]:
        """GroupConfig.validate: a group's complete new override set, merged over the broker's
        values, must name known settings with values that parse and lie within the broker's
        bounds. Returns the overrides as canonical text; raises GroupConfigError."""
        canonical: dict[str, str] = {}
        for name, text in overrides.items():
            setting = GROUP_SETTINGS_BY_NAME.get(name)
            if setting is None:
                raise GroupConfigError(f"Unknown group config name: {name}")
            try:
                canonical[name] = setting.check(text)
            except ValueError as exc:
                reason = str(exc)
                raise GroupConfigError(
                    reason
                    if reason.startswith("Invalid value")
                    else f"Invalid value {text} for configuration {name}: {reason}"
                ) from None
        merged = {s.name: canonical.get(s.name, self.default(s.name)) for s in GROUP_SETTINGS}
        for setting in GROUP_SETTINGS:
            if setting.bounds is None or setting.name not in canonical:
                continue
            value, (low_name, high_name) = int(merged[setting.name]), setting.bounds
            if value < int(self._settings.get(low_name)):
                raise GroupConfigError(f"{setting.name} must be greater than or equal to {low_name}")
            if value > int(self._settings.get(high_name)):
                raise GroupConfigError(f"{setting.name} must be less than or equal to {high_name}")
        for session, heartbeat in _PAIRS:
            if (session in canonical or heartbeat in canonical) and int(merged[session]) <= int(merged[heartbeat]):
                raise GroupConfigError(f"{session} must be greater than {heartbeat}")
        return canonical

    def replace(self, group_id: str, overrides: Mapping[str, str]) -> None:
        """The group's complete new override set (validated by `validate`): persisted, then served."""
        updated = {g: dict(v) for g, v in self._by_group.items() if g != group_id}
        if overrides:
            updated[group_id] = dict(overrides)
        if self._persist is not None:
            self._persist(updated)
        self._by_group = updated

    def load(self, stored: Mapping[str, Mapping[str, str]]) -> None:
        """cluster.processes: every group's overrides as another broker process persisted them."""
        self._by_group = {g: dict(v) for g, v in stored.items() if v}

    def update(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        """Set (a value) or delete (None) overrides of one group, all at once (unvalidated)."""
        group = dict(self._by_group.get(group_id, {}))
        for name, value in changes.items():
            if value is None:
                group.pop(name, None)
            else:
                group[name] = value
        self.replace(group_id, group)
