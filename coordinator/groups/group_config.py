"""Group-coordinator settings, with Kafka's names and defaults (GroupCoordinatorConfig).

One deliberate difference: group.initial.rebalance.delay.ms defaults to 0 here (Kafka: 3000),
because this coordinator serves tests, where the delay is the top speed complaint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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

    @classmethod
    def from_config(cls, config: Any) -> GroupConfig:
        """The group settings out of the server's Config (coordinator/config.py)."""
        return cls(
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            max_size=config.group_max_size,
            offsets_retention_ms=config.offsets_retention_minutes * 60_000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            offset_metadata_max_bytes=config.offset_metadata_max_bytes,
            new_member_join_timeout_ms=config.group_classic_new_member_join_timeout_ms,
        )
