"""What an operation runs against: `OpContext` (time, records out, deferred replies) and
`ParkedReply` (an answer a later operation or timer gives).

Operations never answer a parked request directly: they call `ctx.complete(reply, value)`, and
whoever runs the op (the runtime or a test context) delivers those values only after the op's
records are durable. This keeps the rule "no reply before the append is durable" in one place.
`ParkedReply` is plain Python; the runtime adds the trio waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from coordinator.observe.reasons import current_bucket
if TYPE_CHECKING:
    from coordinator.groups.record_types import GroupRecord
    from coordinator.groups.shard import GroupCoordinator

T = TypeVar("T")
_UNSET: Any = object()


class ParkedReply(Generic[T]):
    """A reply that is not known yet (a JoinGroup in the join phase, a follower's SyncGroup)."""

    def __init__(self) -> None:
        self._value: T = _UNSET
        self._listeners: list[Callable[[T], None]] = []
        # The parking request's reasons list (coordinator/reasons.py), so whoever answers it can
        # say why; None when nobody is collecting.
        self.reasons = current_bucket()

    @property
    def done(self) -> bool:
        return self._value is not _UNSET

    @property
    def value(self) -> T:
        if not self.done:
            raise RuntimeError("reply is still parked")
        return self._value

    def resolve(self, value: T) -> None:
        """Deliver the value (runtime / test context only; ops use ctx.complete)."""
        if self.done:
            raise RuntimeError("reply already resolved")
        self._value = value
        for listener in self._listeners:
            listener(value)
        self._listeners.clear()

    def add_listener(self, listener: Callable[[T], None]) -> None:
        if self.done:
            listener(self._value)
        else:
            self._listeners.append(listener)

    def __repr__(self) -> str:
        return f"ParkedReply({self._value!r})" if self.done else "ParkedReply(<parked>)"


@dataclass
class OpContext:
    """One operation's view: the groups, the time it runs at, and what it produced."""

    coordinator: GroupCoordinator
    now_ms: int
    records: list[GroupRecord] = field(default_factory=list)
    completions: list[tuple[ParkedReply[Any], Any]] = field(default_factory=list)

    def emit(self, record: GroupRecord) -> None:
        self.records.append(record)

    def complete(self, reply: ParkedReply[T] | None, value: T) -> None:
        if reply is not None:
            self.completions.append((reply, value))

    def deliver(self) -> None:
        """Resolve every completed reply (call once the records are durable)."""
        for reply, value in self.completions:
            reply.resolve(value)
        self.completions.clear()
