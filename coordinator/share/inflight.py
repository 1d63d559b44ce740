"""The in-flight records of a share-partition (Kafka's InFlightBatch and InFlightState).

A batch covers offsets first..last. While every offset of it shares one state, the batch holds
that one `InFlightState`; once a request touches only some of its offsets (a subset acquire or
acknowledgement, a lock that expires for part of it, the start offset moving inside it) it is
split for good into one state per offset (`offsets`), as Kafka's maybeInitializeOffsetStateUpdate
does. States change through `transition`, which applies Kafka's rules: AVAILABLE only becomes
ACQUIRED; ACQUIRED becomes AVAILABLE, ACKNOWLEDGED or ARCHIVED; ACKNOWLEDGED and ARCHIVED are
terminal; a record released (not returned unread) at the delivery count limit is ARCHIVED instead
(InFlightState.tryUpdateState). `lock_deadline_ms` is the acquisition lock of an ACQUIRED state.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator


class RecordState(enum.IntEnum):
    """Kafka RecordState, with the ids the share coordinator persists (ACQUIRED never is)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    @property
    def terminal(self) -> bool:
        return self is RecordState.ACKNOWLEDGED or self is RecordState.ARCHIVED


class DeliveryCount(enum.Enum):
    """Kafka DeliveryCountOps: what a transition does to the delivery count."""

    INCREASE = 1  # acquired: one more delivery
    DECREASE = -1  # released unread (the session closed): that delivery did not happen
    NO_OP = 0


EMPTY_MEMBER = ""

# (state, delivery count, member, lock deadline): what a rollback restores.
Saved = tuple["RecordState", int, str, "int | None"]


class InFlightState:
    __slots__ = ("state", "delivery_count", "member_id", "lock_deadline_ms")

    def __init__(
        self,
        state: RecordState,
        delivery_count: int,
        member_id: str = EMPTY_MEMBER,
        lock_deadline_ms: int | None = None,
    ) -> None:
        self.state = state
        self.delivery_count = delivery_count
        self.member_id = member_id
        self.lock_deadline_ms = lock_deadline_ms

    def copy(self) -> InFlightState:
        return InFlightState(self.state, self.delivery_count, self.member_id, self.lock_deadline_ms)

    def save(self) -> Saved:
        return (self.state, self.delivery_count, self.member_id, self.lock_deadline_ms)

    def restore(self, saved: Saved) -> None:
        self.state, self.delivery_count, self.member_id, self.lock_deadline_ms = saved

    def transition(self, new: RecordState, count: DeliveryCount, limit: int, member_id: str = EMPTY_MEMBER) -> bool:
        """Kafka InFlightState.tryUpdateState; False (and no change) for an invalid transition."""
        if new is RecordState.AVAILABLE and count is not DeliveryCount.DECREASE and self.delivery_count >= limit:
            new = RecordState.ARCHIVED  # no deliveries left
        if not _valid(self.state, new):
            return False
        if new is not RecordState.ARCHIVED:
            self.delivery_count = max(0, self.delivery_count + count.value)
        self.state = new
        self.member_id = member_id
        if new is not RecordState.ACQUIRED:
            self.lock_deadline_ms = None
        return True

    def __repr__(self) -> str:
        member = f" {self.member_id}" if self.member_id else ""
        return f"{self.state.name}x{self.delivery_count}{member}"


def _valid(old: RecordState, new: RecordState) -> bool:
    """Kafka RecordState.validateTransition."""
    if old is new or old.terminal:
        return False
    return old is not RecordState.AVAILABLE or new is RecordState.ACQUIRED


class InFlightBatch:
    __slots__ = ("first", "last", "batch_state", "offsets")

    def __init__(self, first: int, last: int, state: InFlightState) -> None:
        self.first = first
        self.last = last
        self.batch_state: InFlightState | None = state
        self.offsets: dict[int, InFlightState] | None = None  # once split: offset -> state, in order

    def split(self) -> dict[int, InFlightState]:
        """Track this batch per offset from now on (Kafka maybeInitializeOffsetStateUpdate)."""
        if self.offsets is None:
            shared = self.batch_state
            assert shared is not None
            self.offsets = {offset: shared.copy() for offset in range(self.first, self.last + 1)}
            self.batch_state = None
        return self.offsets

    def states(self) -> Iterator[tuple[int, int, InFlightState]]:
        """(first, last, state) runs: the whole batch, or one per offset once split."""
        if self.offsets is None:
            assert self.batch_state is not None
            yield self.first, self.last, self.batch_state
        else:
            for offset, state in self.offsets.items():
                yield offset, offset, state

    def all_terminal(self) -> bool:
        return all(state.state.terminal for _, _, state in self.states())

    def __len__(self) -> int:
        return self.last - self.first + 1

    def __repr__(self) -> str:
        inner = self.batch_state if self.offsets is None else list(self.offsets.values())
        return f"InFlightBatch({self.first}-{self.last} {inner})"
