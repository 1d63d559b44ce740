"""Consumer-group (KIP-848) settings, by Kafka's names and with Kafka 4.2's defaults
(GroupCoordinatorConfig). Validation of operator-given values (min <= value <= max) is the
config loader's job; the group code only reads them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

INT_MAX = 2**31 - 1


class MigrationPolicy(enum.Enum):
    """group.consumer.migration.policy (Kafka ConsumerGroupMigrationPolicy)."""

    DISABLED = "disabled"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"
    BIDIRECTIONAL = "bidirectional"

    @property
    def upgrade_enabled(self) -> bool:
        return self in (MigrationPolicy.UPGRADE, MigrationPolicy.BIDIRECTIONAL)

    @property
    def downgrade_enabled(self) -> bool:
        return self in (MigrationPolicy.DOWNGRADE, MigrationPolicy.BIDIRECTIONAL)


@dataclass(frozen=True)
class ConsumerGroupSettings:
    session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms
    min_session_timeout_ms: int = 45_000  # group.consumer.min.session.timeout.ms
    max_session_timeout_ms: int = 60_000  # group.consumer.max.session.timeout.ms
    heartbeat_interval_ms: int = 5_000  # group.consumer.heartbeat.interval.ms
    min_heartbeat_interval_ms: int = 5_000  # group.consumer.min.heartbeat.interval.ms
    max_heartbeat_interval_ms: int = 15_000  # group.consumer.max.heartbeat.interval.ms
    max_size: int = INT_MAX  # group.consumer.max.size
    # group.consumer.assignors: the first one is the default when a member names none.
    assignors: tuple[str, ...] = ("uniform", "range")
    migration_policy: MigrationPolicy = MigrationPolicy.BIDIRECTIONAL  # group.consumer.migration.policy
    regex_refresh_interval_ms: int = 600_000  # group.consumer.regex.refresh.interval.ms
    # Kafka's fixed REGEX_BATCH_REFRESH_MIN_INTERVAL_MS (10 s); a setting here so tests can shorten it.
    regex_batch_refresh_min_interval_ms: int = 10_000
    # A group's dynamic configs (GroupConfigManager.value: consumer.session.timeout.ms, ...), read
    # at each use as Kafka's GroupMetadataManager does, so an AlterConfigs applies at once.
    group_overrides: Callable[[str, str], str | None] | None = field(default=None, compare=False)

    def session_timeout_for(self, group_id: str) -> int:
        return self._override(group_id, "consumer.session.timeout.ms", self.session_timeout_ms)

    def heartbeat_interval_for(self, group_id: str) -> int:
        return self._override(group_id, "consumer.heartbeat.interval.ms", self.heartbeat_interval_ms)

    def _override(self, group_id: str, name: str, default: int) -> int:
        text = None if self.group_overrides is None else self.group_overrides(group_id, name)
        return default if text is None else int(text)

    @property
    def default_assignor(self) -> str:
        return self.assignors[0]
