"""Dynamic per-group settings: the GROUP resource of DescribeConfigs / IncrementalAlterConfigs.

Kafka's GroupConfigManager: a group's overrides of the group settings that Kafka lets an admin set
per group (`consumer.session.timeout.ms`, `share.record.lock.duration.ms`,
`share.auto.offset.reset`, ...). Readers ask for one value (`value(group, name)`: the override, or
None to use the broker's setting); there is one manager per server, shared by every broker's
coordinators and share partitions, so a change applies at once everywhere. Validation of names
and values and persistence belong to the admin side that changes them; this holds what is set.
"""

from __future__ import annotations

from collections.abc import Mapping


class GroupConfigManager:
    def __init__(self, overrides: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self._by_group: dict[str, dict[str, str]] = {g: dict(v) for g, v in (overrides or {}).items() if v}

    def value(self, group_id: str, name: str) -> str | None:
        """The group's override of `name`, or None when the broker's setting applies."""
        group = self._by_group.get(group_id)
        return None if group is None else group.get(name)

    def overrides(self, group_id: str) -> Mapping[str, str]:
        return dict(self._by_group.get(group_id, {}))

    def groups(self) -> list[str]:
        """Every group with at least one override (Kafka's ListConfigResources for GROUP)."""
        return sorted(self._by_group)

    def update(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        """Set (a value) or delete (None) overrides of one group, all at once."""
        group = self._by_group.setdefault(group_id, {})
        for name, value in changes.items():
            if value is None:
                group.pop(name, None)
            else:
                group[name] = value
        if not group:
            del self._by_group[group_id]
