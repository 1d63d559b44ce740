"""Share groups on the control plane: their broker settings changed at run time, and what each
share-partition holds now.

The settings are librdkafka's rd_kafka_mock_sharegroup_set_* (session timeout, heartbeat
interval, max delivery attempts, record lock duration, isolation level, max size, max fetch
sessions, max record locks, auto offset reset) under Kafka's names; a change applies from the
next use of the value (the next heartbeat, acquisition, session, ...), as a dynamic config does.
A group's own GROUP configs (IncrementalAlterConfigs) still win over these defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coordinator.control.errors import bad_request
from coordinator.share.manager import in_flight_summary
from coordinator.share.service import ShareService
from coordinator.share.settings import ShareSettings

# Kafka name -> (ShareSettings field, parser with its allowed values)
_INT = int


def _choice(*allowed: str) -> Any:
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return text

    return parse


def _reset(value: Any) -> str:
    text = str(value).strip().lower()
    if text in ("latest", "earliest") or text.startswith("by_duration:"):
        return text
    raise ValueError("expected latest, earliest or by_duration:<ISO-8601 duration>")


SETTINGS: dict[str, tuple[str, Any]] = {
    "group.share.session.timeout.ms": ("session_timeout_ms", _INT),
    "group.share.heartbeat.interval.ms": ("heartbeat_interval_ms", _INT),
    "group.share.delivery.count.limit": ("delivery_count_limit", _INT),
    "group.share.record.lock.duration.ms": ("record_lock_duration_ms", _INT),
    "group.share.max.size": ("max_size", _INT),
    "group.share.max.share.sessions": ("max_share_sessions", _INT),
    "group.share.partition.max.record.locks": ("partition_max_record_locks", _INT),
    "share.isolation.level": ("isolation_level", _choice("read_uncommitted", "read_committed")),
    "share.auto.offset.reset": ("auto_offset_reset", _reset),
}


def settings_view(settings: ShareSettings) -> dict[str, Any]:
    return {name: getattr(settings, field) for name, (field, _) in SETTINGS.items()}


def apply_settings(settings: ShareSettings, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Validate every change first, then apply them all (nothing half-applied)."""
    parsed: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in SETTINGS:
            raise bad_request(f"unknown share setting {name!r}; known: {', '.join(SETTINGS)}")
        field, parse = SETTINGS[name]
        try:
            parsed[field] = parse(value)
        except (TypeError, ValueError) as exc:
            raise bad_request(f"{name}: {exc}") from None
        if parse is _INT and parsed[field] < 1:
            raise bad_request(f"{name} must be at least 1")
    for field, value in parsed.items():
        setattr(settings, field, value)
    return settings_view(settings)


def share_partitions(shares: Mapping[int, ShareService], group_id: str) -> list[dict[str, Any]]:
    """Every loaded share-partition of the group, on the broker that leads it."""
    out = []
    for node_id, share in sorted(shares.items()):
        for key, sp in sorted(share.manager.partitions_of(group_id).items(), key=lambda kv: (kv[1].topic, kv[0][2])):
            out.append(
                {
                    "broker": node_id,
                    "topic": sp.topic,
                    "partition": key.partition,
                    "state": sp.state.value,
                    "start_offset": sp.start_offset,
                    "end_offset": sp.end_offset,
                    "in_flight": [
                        {"first": f, "last": ln, "state": state, "delivery_count": count, "member": member or None}
                        for f, ln, state, count, member in in_flight_summary(sp)
                    ],
                }
            )
    return out
