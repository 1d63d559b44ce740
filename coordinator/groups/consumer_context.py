"""The KIP-848 core's `ConsumerOpContext` over one runtime operation on a group shard.

`ShardConsumerContext.of(op, classic)` wraps a `GroupContext`: groups, settings and topics are the
shard's; `emit` writes a record and applies it through the shard's one replay (`OpContext.apply`,
or `persist` for a `Persisted` record); timers are the shard's, under keys ("consumer", <Kafka's
key>), and a timer's action runs later as an operation of its own with a fresh context; `explain`
is the transcript's reason. Building a context first tells the shard's groups about topic changes
since the shard last looked (topic_changes.py, Kafka onNewMetadataImage: a group subscribed to a
created, deleted or resized topic recomputes its metadata on its next heartbeat). While someone observes (transcript,
metrics), every record that changes a group's state or epoch is reported as a transition whose
reason is the operation's last note (an epoch bump's explanation) or its cause (request, timer).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, MutableMapping
from typing import Any

from coordinator.groups import topic_changes
from coordinator.groups.assignors import ASSIGNORS
from coordinator.groups.assignors.spec import PartitionAssignor
from coordinator.groups.consumer.context import NO_CLASSIC, ClassicBridge, Persisted, TimerAction
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from coordinator.groups.shard import GroupContext
from coordinator.groups.topics_image import TopicsImage
from coordinator.observe.reasons import OBSERVERS, because, cause, explain


def consumer_timer_key(key: str) -> tuple[str, str]:
    return ("consumer", key)


class ConsumerTimers:
    """The core's Timers over the shard's: each action gets a new context when it fires."""

    __slots__ = ("_op", "_classic")

    def __init__(self, op: GroupContext, classic: ClassicBridge) -> None:
        self._op = op
        self._classic = classic

    def schedule(self, key: str, deadline_ms: int, action: TimerAction) -> None:
        classic = self._classic

        def fire(op: GroupContext) -> None:
            because(f"timer {key}")
            action(ShardConsumerContext.of(op, classic))

        self._op.shard.timers.schedule(consumer_timer_key(key), deadline_ms, fire)

    def cancel(self, key: str) -> None:
        self._op.shard.timers.cancel(consumer_timer_key(key))

    def is_scheduled(self, key: str) -> bool:
        return consumer_timer_key(key) in self._op.shard.timers

    def deadline(self, key: str) -> int | None:
        return self._op.shard.timers.deadline(consumer_timer_key(key))


class ShardConsumerContext:
    __slots__ = ("op", "classic", "timers", "_note")

    def __init__(self, op: GroupContext, classic: ClassicBridge = NO_CLASSIC) -> None:
        self.op = op
        self.classic = classic
        self.timers = ConsumerTimers(op, classic)
        self._note: str | None = None

    @classmethod
    def of(cls, op: GroupContext, classic: ClassicBridge = NO_CLASSIC) -> ShardConsumerContext:
        ctx = cls(op, classic)
        deliver_topic_changes(ctx)
        return ctx

    @property
    def now_ms(self) -> int:
        return self.op.now_ms

    @property
    def groups(self) -> MutableMapping[str, Any]:
        return self.op.shard.groups

    @property
    def settings(self) -> ConsumerGroupSettings:
        return self.op.shard.config.consumer

    @property
    def topics(self) -> TopicsImage:
        return self.op.shard.topics

    @property
    def assignors(self) -> Mapping[str, PartitionAssignor]:
        return ASSIGNORS

    def emit(self, record: Any) -> None:
        if isinstance(record, Persisted):
            self.op.persist(record.record)
            return
        observers = OBSERVERS.get()
        if not observers:
            self.op.apply(record)
            return
        group_id = record.group_id
        before = _state_of(self.groups.get(group_id))
        self.op.apply(record)
        after = _state_of(self.groups.get(group_id))
        if after != before:
            for observer in observers:
                observer.transition(group_id, before[0], after[0], after[1], self._note or cause())

    def explain(self, code: int, text: str) -> None:
        if code == 0:
            self._note = text  # an epoch bump or a conversion: the reason of the transitions it makes
        explain(code, text)

    def new_uuid(self) -> uuid.UUID:
        return self.op.shard.new_uuid()


def _state_of(group: Any) -> tuple[str, int]:
    """(state, epoch or generation) as transitions report them; a missing group is Dead."""
    if group is None:
        return "Dead", -1
    if isinstance(group, ConsumerGroup):
        return str(group.state), group.group_epoch
    return str(group.state), group.generation_id


def deliver_topic_changes(ctx: ShardConsumerContext) -> None:
    """Kafka onNewMetadataImage, for this shard (topic_changes.py: consumer and share groups)."""
    topic_changes.deliver_topic_changes(ctx.op.shard)
