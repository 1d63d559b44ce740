"""What a share-group operation runs against: `ShareContext`, over one runtime operation on a group
shard (GroupContext).

Groups and topics are the shard's; `settings(group_id)` is the group's view of the server's
ShareSettings with its dynamic GROUP-config overrides, read at use time (a change through the
control plane or IncrementalAlterConfigs applies to the next heartbeat). `emit` writes a record
and applies it through the shard's one replay at once; operations emit all their records at the
end, so one that fails emits nothing. Timers are the shard's, under keys ("share", <Kafka's key>);
a timer's action runs later as an operation of its own with a fresh context. Building a context
first tells the shard's groups about topic changes (Kafka onNewMetadataImage). While someone
observes (transcript, metrics), every record that changes a share group's state or epoch is
reported as a transition whose reason is the operation's last note or its cause.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from coordinator.groups.shard import GroupContext
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.topic_changes import deliver_topic_changes
from coordinator.groups.topics_image import TopicsImage
from coordinator.observe.reasons import OBSERVERS, because, cause, explain
from coordinator.share.settings import GroupShareSettings, for_group


def share_timer_key(key: str) -> tuple[str, str]:
    return ("share", key)


ShareTimerAction = Callable[["ShareContext"], None]


class ShareContext:
    __slots__ = ("op", "_note")

    def __init__(self, op: GroupContext) -> None:
        self.op = op
        self._note: str | None = None

    @classmethod
    def of(cls, op: GroupContext) -> ShareContext:
        deliver_topic_changes(op.shard)
        return cls(op)

    @property
    def now_ms(self) -> int:
        return self.op.now_ms

    @property
    def groups(self) -> MutableMapping[str, Any]:
        return self.op.shard.groups

    @property
    def topics(self) -> TopicsImage:
        return self.op.shard.topics

    @property
    def max_size(self) -> int:
        """group.share.max.size (a broker setting; no group may override it)."""
        return self.op.shard.share.max_size

    def settings(self, group_id: str) -> GroupShareSettings:
        shard = self.op.shard
        return for_group(shard.share, shard.group_configs, group_id)

    def emit(self, record: Any) -> None:
        if not OBSERVERS.get():
            self.op.apply(record)  # nobody listening: no list, no state comparison
            return
        self.emit_all([record])

    def emit_all(self, records: list[Any]) -> None:
        """Apply the records of one change; observers hear each group's state once, after all of
        them (a member's tombstones and the epoch bump are one transition, not two)."""
        observers = OBSERVERS.get()
        if not observers:
            for record in records:
                self.op.apply(record)
            return
        before: dict[str, tuple[str, int]] = {}
        for record in records:
            before.setdefault(record.group_id, _state_of(self.groups.get(record.group_id)))
            self.op.apply(record)
        for group_id, was in before.items():
            now = _state_of(self.groups.get(group_id))
            if now != was:
                for observer in observers:
                    observer.transition(group_id, was[0], now[0], now[1], self._note or cause())

    def explain(self, code: int, text: str) -> None:
        if code == 0:
            self._note = text  # an epoch bump: the reason of the transitions it makes
        explain(code, text)

    # -- timers -----------------------------------------------------------------------------

    def schedule(self, key: str, deadline_ms: int, action: ShareTimerAction) -> None:
        """Run `action` as an operation at `deadline_ms`, replacing any timer with that key."""

        def fire(op: GroupContext) -> None:
            because(f"timer {key}")
            action(ShareContext.of(op))

        self.op.shard.timers.schedule(share_timer_key(key), deadline_ms, fire)

    def cancel(self, key: str) -> None:
        self.op.shard.timers.cancel(share_timer_key(key))


def _state_of(group: Any) -> tuple[str, int]:
    """(state, epoch) as transitions report them; a missing group is Dead."""
    if isinstance(group, ShareGroup):
        return str(group.state), group.group_epoch
    return ("Dead", -1) if group is None else (str(group.state), -1)
