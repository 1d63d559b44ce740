"""A tiny fake runtime for the consumer-group operations (like Kafka's
GroupMetadataManagerTestContext): topics, timers, a fixed-answer assignor, and `Harness` that runs
one operation per call with its own context, replays every emitted record at once (after an
encode/decode round trip, so the bytes path is exercised too) and keeps them for assertions.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from coordinator.groups.assignors.spec import AssignorError, GroupSpec, PartitionAssignor, SubscribedTopicDescriber
from coordinator.groups.consumer.codec import decode_consumer_record, encode_consumer_record
from coordinator.groups.consumer.context import NO_CLASSIC, ClassicBridge, TimerAction, TopicMeta
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.heartbeat import (
    ConsumerHeartbeatParams,
    ConsumerHeartbeatResult,
    consumer_group_heartbeat,
)
from coordinator.groups.consumer.records import TopicPartitions, is_consumer_record
from coordinator.groups.consumer.replay import replay_consumer_record
from coordinator.groups.consumer.settings import ConsumerGroupSettings


def tid(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


class FakeTopics:
    def __init__(self) -> None:
        self._by_name: dict[str, TopicMeta] = {}
        self.version = 0

    def add(
        self,
        name: str,
        partitions: int,
        topic_id: uuid.UUID | None = None,
        racks: Mapping[int, tuple[str, ...]] | None = None,
    ) -> uuid.UUID:
        topic_id = topic_id or tid(len(self._by_name) + 1)
        self._by_name[name] = TopicMeta(topic_id, name, partitions, dict(racks or {}))
        self.version += 1
        return topic_id

    def resize(self, name: str, partitions: int) -> None:
        old = self._by_name[name]
        self._by_name[name] = TopicMeta(old.topic_id, name, partitions, old.partition_racks)

    def delete(self, name: str) -> None:
        del self._by_name[name]

    def by_name(self, name: str) -> TopicMeta | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> TopicMeta | None:
        return next((t for t in self._by_name.values() if t.topic_id == topic_id), None)

    def names(self) -> Iterable[str]:
        return list(self._by_name)


class FakeTimers:
    def __init__(self) -> None:
        self.timers: dict[str, tuple[int, TimerAction]] = {}

    def schedule(self, key: str, deadline_ms: int, action: TimerAction) -> None:
        self.timers.pop(key, None)
        self.timers[key] = (deadline_ms, action)

    def cancel(self, key: str) -> None:
        self.timers.pop(key, None)

    def is_scheduled(self, key: str) -> bool:
        return key in self.timers

    def deadline(self, key: str) -> int | None:
        entry = self.timers.get(key)
        return None if entry is None else entry[0]

    def pop_due(self, now_ms: int) -> tuple[str, TimerAction] | None:
        due = [(deadline, i, key) for i, (key, (deadline, _)) in enumerate(self.timers.items()) if deadline <= now_ms]
        if not due:
            return None
        _, _, key = min(due)
        return key, self.timers.pop(key)[1]


class PreparedAssignor(PartitionAssignor):
    """Kafka's MockPartitionAssignor: answers the prepared assignment if any, else gives each
    topic's partitions round-robin to its subscribers in member-id order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.prepared: dict[str, dict[uuid.UUID, frozenset[int]]] | None = None
        self.error: str | None = None
        self.calls: list[GroupSpec] = []

    def prepare(self, assignment: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> None:
        self.prepared = {m: {t: frozenset(p) for t, p in a.items()} for m, a in assignment.items()}

    def assign(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
        self.calls.append(spec)
        if self.error is not None:
            raise AssignorError(self.error)
        if self.prepared is not None:
            return {m: dict(self.prepared.get(m, {})) for m in spec.members}
        out: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in spec.members}
        all_topics = sorted({t for s in spec.members.values() for t in s.subscribed_topic_ids}, key=lambda u: u.bytes)
        for topic_id in all_topics:
            subscribers = sorted(m for m, s in spec.members.items() if topic_id in s.subscribed_topic_ids)
            for p in range(max(topics.num_partitions(topic_id), 0)):
                out[subscribers[p % len(subscribers)]].setdefault(topic_id, set()).add(p)
        return {m: {t: frozenset(p) for t, p in a.items()} for m, a in out.items()}


@dataclass
class OpCtx:
    harness: Harness
    now_ms: int
    records: list[Any] = field(default_factory=list)
    reasons: list[tuple[int, str]] = field(default_factory=list)

    @property
    def groups(self) -> dict[str, Any]:
        return self.harness.groups

    @property
    def timers(self) -> FakeTimers:
        return self.harness.timers

    @property
    def settings(self) -> ConsumerGroupSettings:
        return self.harness.settings

    @property
    def topics(self) -> FakeTopics:
        return self.harness.topics

    @property
    def assignors(self) -> Mapping[str, PartitionAssignor]:
        return self.harness.assignors

    @property
    def classic(self) -> ClassicBridge:
        return self.harness.classic

    def emit(self, record: Any) -> None:
        self.records.append(record)
        self.harness.apply(record)

    def explain(self, code: int, text: str) -> None:
        self.reasons.append((int(code), text))

    def new_uuid(self) -> uuid.UUID:
        return uuid.UUID(int=next(self.harness.uuids))


class Harness:
    def __init__(
        self, settings: ConsumerGroupSettings | None = None, classic: ClassicBridge = NO_CLASSIC, now_ms: int = 0
    ) -> None:
        self.settings = settings or ConsumerGroupSettings()
        self.groups: dict[str, Any] = {}
        self.timers = FakeTimers()
        self.topics = FakeTopics()
        self.assignors: dict[str, PreparedAssignor] = {n: PreparedAssignor(n) for n in self.settings.assignors}
        self.classic = classic
        self.now_ms = now_ms
        self.uuids = itertools.count(0xABC0)
        self.log: list[Any] = []  # every record emitted so far, in order
        self.last: OpCtx | None = None  # the context of the last operation

    def apply(self, record: Any) -> None:
        if is_consumer_record(record):
            key, value = encode_consumer_record(record)
            decoded = decode_consumer_record(record.key_type, key, value)
            assert decoded == record, (decoded, record)
            replay_consumer_record(self.groups, decoded, self.classic)
        else:
            apply_other = getattr(self.classic, "apply", None)
            assert apply_other is not None, f"unexpected record {record!r}"
            apply_other(self.groups, record)
        self.log.append(record)

    def run(self, op: Callable[[OpCtx], Any]) -> Any:
        ctx = OpCtx(self, self.now_ms)
        self.last = ctx
        return op(ctx)

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        *,
        owned: Iterable[tuple[uuid.UUID, Iterable[int]]] | None = None,
        **kwargs: Any,
    ) -> ConsumerHeartbeatResult:
        tps = None if owned is None else tuple(TopicPartitions(t, tuple(p)) for t, p in owned)
        params = ConsumerHeartbeatParams(
            group_id=group_id,
            member_id=member_id,
            member_epoch=member_epoch,
            topic_partitions=tps,
            client_id=kwargs.pop("client_id", "client"),
            client_host=kwargs.pop("client_host", "/127.0.0.1"),
            **kwargs,
        )
        return self.run(lambda ctx: consumer_group_heartbeat(ctx, params))

    def join(self, group_id: str, member_id: str, topics: Iterable[str] = (), **kwargs: Any) -> ConsumerHeartbeatResult:
        kwargs.setdefault("rebalance_timeout_ms", 5000)
        kwargs.setdefault("subscribed_topic_names", list(topics))
        return self.heartbeat(group_id, member_id, 0, owned=(), **kwargs)

    @property
    def records(self) -> list[Any]:
        """The records of the last operation."""
        assert self.last is not None
        return self.last.records

    def advance(self, ms: int) -> list[Any]:
        """Move the clock and fire every due timer (each as its own operation); their records."""
        self.now_ms += ms
        out: list[Any] = []
        while (due := self.timers.pop_due(self.now_ms)) is not None:
            _, action = due
            ctx = OpCtx(self, self.now_ms)
            action(ctx)
            out += ctx.records
        return out

    def group(self, group_id: str) -> ConsumerGroup:
        group = self.groups[group_id]
        assert isinstance(group, ConsumerGroup)
        return group

    def rebuilt(self) -> dict[str, Any]:
        """Groups rebuilt from scratch by replaying every record emitted so far."""
        groups: dict[str, Any] = {}
        for record in self.log:
            if is_consumer_record(record):
                replay_consumer_record(groups, record, self.classic)
            else:
                self.classic.apply(groups, record)
        return groups


def seed_group(
    h: Harness,
    group_id: str,
    epoch: int,
    members: Iterable[Any],
    targets: Mapping[str, Mapping[uuid.UUID, Iterable[int]]] | None = None,
    assignment_epoch: int | None = None,
) -> None:
    """Kafka's ConsumerGroupBuilder: replay the records of an existing group (the epoch record
    carries the hash of the members' topics, so a first heartbeat finds nothing changed)."""
    from coordinator.groups.consumer.member import normalize, to_topic_partitions
    from coordinator.groups.consumer.metadata_hash import metadata_hash
    from coordinator.groups.consumer.records import (
        ConsumerGroupMetadataRecord,
        ConsumerGroupTargetAssignmentMemberRecord,
        ConsumerGroupTargetAssignmentMetadataRecord,
    )

    members = list(members)
    for m in members:
        h.apply(m.metadata_record(group_id))
        h.apply(m.assignment_record(group_id))
    names = {n for m in members for n in m.subscribed_topic_names}
    h.apply(ConsumerGroupMetadataRecord(group_id, epoch, metadata_hash(names, h.topics)))
    for member_id, target in (targets or {}).items():
        h.apply(ConsumerGroupTargetAssignmentMemberRecord(group_id, member_id, to_topic_partitions(normalize(target))))
    target_epoch = epoch if assignment_epoch is None else assignment_epoch
    h.apply(ConsumerGroupTargetAssignmentMetadataRecord(group_id, target_epoch))
