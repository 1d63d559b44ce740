"""Share-group settings with Kafka 4.2's names and defaults, and the per-group overrides.

`ShareSettings` holds the broker settings (group.share.*, see coordinator/config_settings.py);
it is one mutable object per server so the control plane can change a setting at run time, the
way librdkafka's rd_kafka_mock_sharegroup_set_* do, and every reader sees the new value on its
next use (nothing copies these values). `for_group` folds in a group's dynamic overrides
(GroupConfigManager: share.record.lock.duration.ms, share.auto.offset.reset, ...), which win.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Protocol


class GroupOverrides(Protocol):
    def value(self, group_id: str, name: str) -> str | None: ...


@dataclass
class ShareSettings:
    enabled: bool = True  # group.share.enable (Kafka 4.2: the share.version feature)
    session_timeout_ms: int = 45_000  # group.share.session.timeout.ms
    heartbeat_interval_ms: int = 5_000  # group.share.heartbeat.interval.ms
    max_size: int = 200  # group.share.max.size
    record_lock_duration_ms: int = 30_000  # group.share.record.lock.duration.ms
    delivery_count_limit: int = 5  # group.share.delivery.count.limit
    partition_max_record_locks: int = 2_000  # group.share.partition.max.record.locks
    max_share_sessions: int = 2_000  # group.share.max.share.sessions
    auto_offset_reset: str = "latest"  # share.auto.offset.reset (a GROUP config; this is its default)
    isolation_level: str = "read_uncommitted"  # share.isolation.level (likewise)

    @classmethod
    def from_config(cls, config: Any) -> ShareSettings:
        return cls(
            enabled=config.get("group.share.enable"),
            session_timeout_ms=config.get("group.share.session.timeout.ms"),
            heartbeat_interval_ms=config.get("group.share.heartbeat.interval.ms"),
            max_size=config.get("group.share.max.size"),
            record_lock_duration_ms=config.get("group.share.record.lock.duration.ms"),
            delivery_count_limit=config.get("group.share.delivery.count.limit"),
            partition_max_record_locks=config.get("group.share.partition.max.record.locks"),
            max_share_sessions=config.get("group.share.max.share.sessions"),
        )

    def names(self) -> list[str]:
        return [f.name for f in fields(self)]


@dataclass(frozen=True)
class GroupShareSettings:
    """The settings one share group sees now: the broker's, with its GROUP-config overrides."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    record_lock_duration_ms: int
    delivery_count_limit: int
    auto_offset_reset: str  # "latest", "earliest" or "by_duration:<ISO-8601 duration>"
    isolation_level: str  # "read_uncommitted" or "read_committed"


def for_group(settings: ShareSettings, overrides: GroupOverrides | None, group_id: str) -> GroupShareSettings:
    """Kafka reads each group config at its point of use (GroupConfigManager.groupConfig): the
    override when set, else the broker setting."""

    def value(name: str, default: Any) -> Any:
        text = None if overrides is None else overrides.value(group_id, name)
        if text is None:
            return default
        return int(text) if isinstance(default, int) else text

    return GroupShareSettings(
        session_timeout_ms=value("share.session.timeout.ms", settings.session_timeout_ms),
        heartbeat_interval_ms=value("share.heartbeat.interval.ms", settings.heartbeat_interval_ms),
        record_lock_duration_ms=value("share.record.lock.duration.ms", settings.record_lock_duration_ms),
        delivery_count_limit=value("share.delivery.count.limit", settings.delivery_count_limit),
        auto_offset_reset=value("share.auto.offset.reset", settings.auto_offset_reset),
        isolation_level=value("share.isolation.level", settings.isolation_level),
    )
