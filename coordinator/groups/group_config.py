"""Group-coordinator settings, with Kafka's names and defaults (GroupCoordinatorConfig).

One deliberate difference: group.initial.rebalance.delay.ms defaults to 0 here (Kafka: 3000),
because this coordinator serves tests, where the delay is the top speed complaint. The KIP-848
settings (group.consumer.*) live in `consumer` (ConsumerGroupSettings); `rebalance_protocols`
is group.coordinator.rebalance.protocols ("consumer" enables ConsumerGroupHeartbeat/Describe).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coordinator.config import ConfigError
from coordinator.groups.assignors import ASSIGNORS
from coordinator.groups.consumer.settings import ConsumerGroupSettings, MigrationPolicy

# Kafka names its server assignors by class in group.consumer.assignors; both forms are accepted.
_ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def _names(text: Any) -> tuple[str, ...]:
    items = text.split(",") if isinstance(text, str) else list(text)
    return tuple(str(item).strip() for item in items if str(item).strip())


def assignor_names(text: Any) -> tuple[str, ...]:
    """group.consumer.assignors as names; an assignor this coordinator lacks is refused at start."""
    names = tuple(_ASSIGNOR_CLASSES.get(name, name) for name in _names(text))
    unknown = [name for name in names if name not in ASSIGNORS]
    if unknown or not names:
        raise ValueError(f"group.consumer.assignors: unknown assignor(s) {unknown}; known: {', '.join(ASSIGNORS)}")
    return names


@dataclass(frozen=True)
class GroupConfig:
    min_session_timeout_ms: int = 6_000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    initial_rebalance_delay_ms: int = 0  # group.initial.rebalance.delay.ms
    max_size: int = 2**31 - 1  # group.max.size
    # Kafka's classicGroupNewMemberJoinTimeoutMs: a member that joined during a rebalance but
    # never got its answer (its socket is muted while parked) is dropped after this long.
    new_member_join_timeout_ms: int = 300_000
    offsets_retention_ms: int = 10_080 * 60_000  # offsets.retention.minutes (in ms)
    offsets_retention_check_interval_ms: int = 600_000  # offsets.retention.check.interval.ms
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    rebalance_protocols: tuple[str, ...] = ("classic", "consumer")  # group.coordinator.rebalance.protocols
    consumer: ConsumerGroupSettings = field(default_factory=ConsumerGroupSettings)

    @property
    def consumer_protocol_enabled(self) -> bool:
        return "consumer" in self.rebalance_protocols

    def __post_init__(self) -> None:
        _check_consumer_settings(self.consumer)

    @classmethod
    def from_config(cls, config: Any, group_overrides: Callable[[str, str], str | None] | None = None) -> GroupConfig:
        """The group settings out of the server's Config (coordinator/config.py);
        `group_overrides`: the dynamic GROUP configs (GroupConfigManager.value)."""
        return cls(
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            max_size=config.group_max_size,
            offsets_retention_ms=config.offsets_retention_minutes * 60_000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            offset_metadata_max_bytes=config.offset_metadata_max_bytes,
            new_member_join_timeout_ms=config.group_classic_new_member_join_timeout_ms,
            rebalance_protocols=tuple(p.lower() for p in _names(config.get("group.coordinator.rebalance.protocols"))),
            consumer=ConsumerGroupSettings(
                session_timeout_ms=config.get("group.consumer.session.timeout.ms"),
                min_session_timeout_ms=config.get("group.consumer.min.session.timeout.ms"),
                max_session_timeout_ms=config.get("group.consumer.max.session.timeout.ms"),
                heartbeat_interval_ms=config.get("group.consumer.heartbeat.interval.ms"),
                min_heartbeat_interval_ms=config.get("group.consumer.min.heartbeat.interval.ms"),
                max_heartbeat_interval_ms=config.get("group.consumer.max.heartbeat.interval.ms"),
                max_size=config.get("group.consumer.max.size"),
                assignors=assignor_names(config.get("group.consumer.assignors")),
                migration_policy=MigrationPolicy(config.get("group.consumer.migration.policy")),
                regex_refresh_interval_ms=config.get("group.consumer.regex.refresh.interval.ms"),
                regex_batch_refresh_min_interval_ms=config.get("group.consumer.regex.batch.refresh.min.interval.ms"),
                group_overrides=group_overrides,
            ),
        )


def _check_consumer_settings(c: ConsumerGroupSettings) -> None:
    """GroupCoordinatorConfig's requirements on the group.consumer.* timeouts (refused at start)."""
    checks = (
        (
            c.min_session_timeout_ms <= c.max_session_timeout_ms,
            "group.consumer.max.session.timeout.ms must be greater than or equal to "
            "group.consumer.min.session.timeout.ms",
        ),
        (
            c.min_session_timeout_ms <= c.session_timeout_ms <= c.max_session_timeout_ms,
            "group.consumer.session.timeout.ms must be between group.consumer.min.session.timeout.ms and "
            "group.consumer.max.session.timeout.ms",
        ),
        (
            c.min_heartbeat_interval_ms <= c.max_heartbeat_interval_ms,
            "group.consumer.max.heartbeat.interval.ms must be greater than or equal to "
            "group.consumer.min.heartbeat.interval.ms",
        ),
        (
            c.min_heartbeat_interval_ms <= c.heartbeat_interval_ms <= c.max_heartbeat_interval_ms,
            "group.consumer.heartbeat.interval.ms must be between group.consumer.min.heartbeat.interval.ms and "
            "group.consumer.max.heartbeat.interval.ms",
        ),
        (
            c.heartbeat_interval_ms < c.session_timeout_ms,
            "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms",
        ),
        (c.max_size >= 1, "group.consumer.max.size must be at least 1"),
    )
    for ok, message in checks:
        if not ok:  # a ConfigError: `kgc serve` says it in one line and exits 2 (it was an "internal error")
            raise ConfigError(message)
