"""A group shard with KIP-848 consumer groups, driven like GroupTestContext (tests/support): a fake
clock, a fake topic registry behind the shard's TopicsImage, and builders for ConsumerGroupHeartbeat
requests run through the real operations (consumer_ops.py), the real replay and the real timers.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any

from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from coordinator.groups.consumer_context import consumer_timer_key
from coordinator.groups.consumer_ops import (
    ConsumerDescribeParams,
    ConsumerHeartbeatParams,
    ConsumerHeartbeatResult,
    consumer_group_describe,
    consumer_heartbeat,
    validate_heartbeat,
)
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.shard import GroupShard
from coordinator.groups.topics_image import TopicsImage
from tests.support.group_context import GroupTestContext

FAST = ConsumerGroupSettings(
    session_timeout_ms=10_000, min_session_timeout_ms=1_000, heartbeat_interval_ms=1_000, min_heartbeat_interval_ms=100
)


def tid(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


@dataclass(frozen=True)
class FakeTopic:
    name: str
    partitions: int
    topic_id: uuid.UUID


class FakeRegistry:
    """What TopicsImage reads of the broker's TopicRegistry: `all()`."""

    def __init__(self) -> None:
        self.topics: dict[str, FakeTopic] = {}

    def add(self, name: str, partitions: int, n: int | None = None) -> uuid.UUID:
        topic = FakeTopic(name, partitions, tid(n if n is not None else len(self.topics) + 1))
        self.topics[name] = topic
        return topic.topic_id

    def grow(self, name: str, partitions: int) -> None:
        self.topics[name] = replace(self.topics[name], partitions=partitions)

    def delete(self, name: str) -> None:
        del self.topics[name]

    def all(self) -> list[FakeTopic]:
        return sorted(self.topics.values(), key=lambda t: t.name)


class ConsumerTestContext(GroupTestContext):
    def __init__(self, consumer: ConsumerGroupSettings = FAST, start_ms: int = 0, **config: Any) -> None:
        super().__init__(GroupConfig(consumer=consumer, **config), start_ms)
        self.registry = FakeRegistry()
        self.shard.topics = TopicsImage(self.registry, self.clock)
        self.shard.topics_seen = self.shard.topics.version

    def fresh_shard(self) -> GroupShard:
        """A new shard with every record written so far replayed: what a restart loads."""
        shard = GroupShard(0, self.shard.config, topics=self.shard.topics)
        for now_ms, record in self.journal:
            shard.replay(record, now_ms)
        return shard

    # -- requests ---------------------------------------------------------------------------
    def cg_heartbeat(
        self,
        member_id: str,
        epoch: int,
        group_id: str = "g",
        *,
        owned: list[tuple[uuid.UUID, list[int]]] | None = None,
        **kwargs: Any,
    ) -> ConsumerHeartbeatResult:
        kwargs.setdefault("client_id", "client")
        kwargs.setdefault("client_host", "/127.0.0.1")
        tps = None if owned is None else tuple(TopicPartitions(t, tuple(p)) for t, p in owned)
        params = ConsumerHeartbeatParams(
            group_id=group_id, member_id=member_id, member_epoch=epoch, topic_partitions=tps, **kwargs
        )
        invalid = validate_heartbeat(self.shard.config, params)  # what GroupService checks first
        if invalid is not None:
            return invalid
        result: ConsumerHeartbeatResult = self.send(lambda ctx: consumer_heartbeat(ctx, params))
        return result

    def join_consumer(
        self, member_id: str, topics: list[str] | None = None, group_id: str = "g", **kwargs: Any
    ) -> ConsumerHeartbeatResult:
        kwargs.setdefault("rebalance_timeout_ms", 5_000)
        if "subscribed_topic_regex" not in kwargs:
            kwargs.setdefault("subscribed_topic_names", list(topics or []))
        return self.cg_heartbeat(member_id, 0, group_id, owned=[], **kwargs)

    def describe_consumer(self, *group_ids: str) -> list[Any]:
        return self.send(lambda ctx: consumer_group_describe(ctx, ConsumerDescribeParams(list(group_ids))))

    # -- inspecting -------------------------------------------------------------------------
    def cgroup(self, group_id: str = "g") -> ConsumerGroup:
        group = self.shard.consumer_group(group_id)
        assert group is not None, f"no consumer group {group_id}"
        return group

    def consumer_deadline(self, key: str) -> int | None:
        return self.timers.deadline(consumer_timer_key(key))


def owned(result: ConsumerHeartbeatResult) -> list[tuple[uuid.UUID, list[int]]]:
    """The assignment of a heartbeat answer, as the `owned` of the member's next heartbeat."""
    assert result.assignment is not None
    return [(tp.topic_id, list(tp.partitions)) for tp in result.assignment]


def assignment(result: ConsumerHeartbeatResult) -> dict[uuid.UUID, list[int]] | None:
    if result.assignment is None:
        return None
    return {tp.topic_id: list(tp.partitions) for tp in result.assignment}
