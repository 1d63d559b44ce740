"""GroupCoordinator: every classic group of this coordinator, its timers and settings.

It is the in-memory state one runtime (the single writer) mutates. Operations are the functions
in join.py, sync.py, ...; `execute` dispatches a request dataclass to its operation. Member ids
come from an injectable UUID source so tests can predict them.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

from coordinator.runtime.clock import Clock
from coordinator.runtime.timers import Timers
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.operation import OpContext
from coordinator.groups.group import ClassicGroup
from coordinator.groups.offset_store import OffsetStore


class GroupCoordinator:
    def __init__(
        self,
        config: GroupConfig | None = None,
        timers: Timers | None = None,
        uuid_source: Callable[[], str] | None = None,
    ) -> None:
        self.config = config or GroupConfig()
        self.timers = timers or Timers()
        self.groups: dict[str, ClassicGroup] = {}
        # Committed offsets (offsets.py); the server shares the loader's store here.
        self.offsets = OffsetStore()
        # Whether a group's __consumer_offsets partition takes writes now (the server sets it;
        # retention skips the others). None: always.
        self.group_writable: Callable[[str], bool] | None = None
        self._uuid = uuid_source or (lambda: str(uuid.uuid4()))

    def new_member_id(self, prefix: str) -> str:
        """Kafka ClassicGroup.generateMemberId: `<group.instance.id or client.id>-<uuid>`."""
        return f"{prefix}-{self._uuid()}"

    def group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def create_group(self, group_id: str, now_ms: int) -> ClassicGroup:
        group = ClassicGroup(group_id, now_ms)
        self.groups[group_id] = group
        return group

    def context(self, clock: Clock) -> OpContext:
        return OpContext(self, clock.time_ms())


def execute(ctx: OpContext, request: Any) -> Any:
    """Run one operation: a request dataclass (JoinGroupParams, ...) or a callable(ctx)."""
    from coordinator.groups.operations import OPERATIONS

    if callable(request) and not hasattr(request, "__dataclass_fields__"):
        return request(ctx)
    operation = OPERATIONS.get(type(request))
    if operation is None:
        raise TypeError(f"no group operation for {type(request).__name__}")
    return operation(ctx, request)
