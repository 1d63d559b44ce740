"""What a consumer-group operation needs from the runtime: `ConsumerOpContext` and its parts.

An operation is `op(ctx, params) -> result`. It reads `ctx.groups` (consumer groups and, in the
real shard, classic groups under the same ids) and never changes them itself: it hands each
record to `ctx.emit`, which appends it to the operation's output and applies it at once through
the shard's one replay (so live state and reloaded state cannot drift). Our operations emit all
their records at the end, in order, so a failing operation emits nothing (Kafka discards the
records of an operation that throws). Timers run their action as a new operation with its own
context. `ClassicBridge` is where classic groups plug in (empty-group conversion, online
migration); `NO_CLASSIC` treats every non-consumer group as foreign. A record wrapped in
`Persisted` is written but not applied (Kafka's replayRecords=false): the conversions between
classic and consumer groups set the new group directly, as Kafka does.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from coordinator.groups.assignors.spec import PartitionAssignor
from coordinator.groups.consumer.settings import ConsumerGroupSettings

if TYPE_CHECKING:
    from coordinator.groups.consumer.group import ConsumerGroup
    from coordinator.groups.consumer.member import ConsumerGroupMember


@dataclass(frozen=True, slots=True)
class Persisted:
    """`record`, to be written without replay (its effect is already in the groups)."""

    record: Any


@dataclass(frozen=True)
class TopicMeta:
    """One topic as the coordinator sees it (Kafka CoordinatorMetadataImage.TopicMetadata)."""

    topic_id: uuid.UUID
    name: str
    num_partitions: int
    # Racks of each partition's replicas; empty when unknown (a single-node cluster has none).
    partition_racks: Mapping[int, Sequence[str]] = field(default_factory=dict)


class TopicsView(Protocol):
    """Read-only topics. `version` must grow whenever a topic is created (Kafka's
    lastMetadataImageWithNewTopics: regexes resolved before it are refreshed)."""

    @property
    def version(self) -> int: ...

    def by_name(self, name: str) -> TopicMeta | None: ...

    def by_id(self, topic_id: uuid.UUID) -> TopicMeta | None: ...

    def names(self) -> Iterable[str]: ...


TimerAction = Callable[["ConsumerOpContext"], None]


class Timers(Protocol):
    def schedule(self, key: str, deadline_ms: int, action: TimerAction) -> None:
        """Run `action` as an operation at `deadline_ms`, replacing any timer with that key."""

    def cancel(self, key: str) -> None: ...

    def is_scheduled(self, key: str) -> bool: ...


class ClassicBridge(Protocol):
    """How consumer-group code treats a non-consumer group found under its id."""

    def empty_classic_tombstones(self, group: Any) -> list[Any] | None:
        """Kafka maybeDeleteEmptyClassicGroup: the records that delete `group` if it is an empty
        classic group (a consumer-protocol join then replaces it), else None."""

    def upgrade(self, ctx: ConsumerOpContext, group: Any, records: list[Any]) -> ConsumerGroup | None:
        """Kafka validateOnlineUpgrade + convertToConsumerGroup for a non-empty classic group:
        append the conversion records and return the group the heartbeat continues with, raise
        ConsumerGroupError(GROUP_ID_NOT_FOUND) when the upgrade is refused, or return None when
        `group` is not a classic group at all."""

    def downgrade_on_leave(
        self, ctx: ConsumerOpContext, group: ConsumerGroup, leaving: Sequence[ConsumerGroupMember], records: list[Any]
    ) -> bool:
        """Kafka validateOnlineDowngradeWithFencedMembers + convertToClassicGroup: when the
        leaving members are the last consumer-protocol ones, append the conversion records and
        return True (the members are then not fenced the usual way)."""

    def replaceable_on_replay(self, group: Any) -> bool:
        """True for a classic "simple" group (offsets only, no records of its own), which a
        consumer-group record replaces (getOrMaybeCreatePersistedConsumerGroup)."""


class NoClassicBridge:
    """No classic groups: every non-consumer group answers GROUP_ID_NOT_FOUND."""

    def empty_classic_tombstones(self, group: Any) -> list[Any] | None:
        return None

    def upgrade(self, ctx: ConsumerOpContext, group: Any, records: list[Any]) -> ConsumerGroup | None:
        return None

    def downgrade_on_leave(
        self, ctx: ConsumerOpContext, group: ConsumerGroup, leaving: Sequence[ConsumerGroupMember], records: list[Any]
    ) -> bool:
        return False

    def replaceable_on_replay(self, group: Any) -> bool:
        return False


NO_CLASSIC = NoClassicBridge()


class ConsumerOpContext(Protocol):
    @property
    def now_ms(self) -> int: ...

    @property
    def groups(self) -> MutableMapping[str, Any]:
        """group id -> group (ConsumerGroup or another type); replay is its only writer."""

    @property
    def timers(self) -> Timers: ...

    @property
    def settings(self) -> ConsumerGroupSettings: ...

    @property
    def topics(self) -> TopicsView: ...

    @property
    def assignors(self) -> Mapping[str, PartitionAssignor]:
        """name -> server assignor, for every name in settings.assignors."""

    @property
    def classic(self) -> ClassicBridge: ...

    def emit(self, record: Any) -> None:
        """Append `record` to this operation's output and apply it (replay) at once; a
        `Persisted` record is appended only."""

    def explain(self, code: int, text: str) -> None:
        """Why `code` is answered (coordinator.observe.reasons.explain); code 0 for a note."""

    def new_uuid(self) -> uuid.UUID:
        """A fresh random uuid (member ids for ConsumerGroupHeartbeat v0); injected for tests."""
