"""Share groups on a real group shard, driven like GroupTestContext: a fake clock, a fake topic
registry behind the shard's TopicsImage, ShareGroupHeartbeat requests checked as the service
checks them and run through the real operations, replay and timers; and FakePersister, an
in-memory share coordinator (Kafka's Persister) that records every call and can be told to fail."""

from __future__ import annotations

import uuid
from typing import Any

from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.dynamic_config import GroupConfigManager
from coordinator.groups.shard import GroupShard
from coordinator.groups.share import ops
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.share.heartbeat import ShareHeartbeatParams, ShareHeartbeatResult, validate
from coordinator.groups.share.state_partitions import StateInit
from coordinator.groups.topics_image import TopicsImage
from coordinator.share.persister import SharePartitionKey, ShareState, StateBatch, StateSummary
from coordinator.share.settings import ShareSettings
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import FakeRegistry, tid
from tests.support.group_context import GroupTestContext

__all__ = ["FakePersister", "ShareTestContext", "tid"]

FAST = ShareSettings(session_timeout_ms=10_000, heartbeat_interval_ms=1_000, max_size=5)


class ShareTestContext(GroupTestContext):
    def __init__(self, share: ShareSettings | None = None, start_ms: int = 0) -> None:
        super().__init__(start_ms=start_ms)
        self.registry = FakeRegistry()
        self.configs = GroupConfigManager()
        self.shard.topics = TopicsImage(self.registry, self.clock)
        self.shard.topics_seen = self.shard.topics.version
        self.shard.share = share or ShareSettings(**vars(FAST))
        self.shard.group_configs = self.configs

    def fresh_shard(self) -> GroupShard:
        """A new shard with every record written so far replayed: what a restart loads."""
        shard = GroupShard(0, self.shard.config, topics=self.shard.topics, share=self.shard.share)
        for now_ms, record in self.journal:
            shard.replay(record, now_ms)
        return shard

    # -- requests ---------------------------------------------------------------------------
    def sg(
        self, member_id: str, epoch: int, group_id: str = "g", topics: list[str] | None = None, **kwargs: Any
    ) -> tuple[ShareHeartbeatResult, StateInit | None]:
        """One ShareGroupHeartbeat op (validated first, as GroupService does)."""
        kwargs.setdefault("client_id", "client")
        kwargs.setdefault("client_host", "/127.0.0.1")
        p = ShareHeartbeatParams(group_id, member_id, epoch, subscribed_topic_names=topics, **kwargs)
        try:
            validate(p)
        except ConsumerGroupError as exc:
            return ShareHeartbeatResult(error_code=exc.code, error_message=exc.message), None
        answer: tuple[ShareHeartbeatResult, StateInit | None] = self.send(lambda ctx: ops.heartbeat(ctx, p))
        return answer

    def initialized(self, init: StateInit | None) -> None:
        """What the service does once the share coordinator initialized `init`."""
        assert init is not None
        self.send(lambda ctx: ops.mark_initialized(ctx, ops.StateChange(init.group_id, init.partitions())))

    def sjoin(self, member_id: str, topics: list[str], group_id: str = "g") -> ShareHeartbeatResult:
        """Join, let the share coordinator initialize what the join asked for, heartbeat again:
        what GroupService answers the joining member."""
        result, init = self.sg(member_id, 0, group_id, topics)
        assert result.error_code == 0, result
        if init is None:
            return result
        self.initialized(init)
        again, more = self.sg(member_id, result.member_epoch, group_id, topics)
        assert more is None and again.error_code == 0, (again, more)
        return again

    # -- inspecting -------------------------------------------------------------------------
    def sgroup(self, group_id: str = "g") -> ShareGroup:
        group = self.shard.share_group(group_id)
        assert group is not None, f"no share group {group_id}"
        return group


class FakePersister:
    """An in-memory share coordinator: initialize/read/write/delete/read_summary with Kafka's
    state-epoch fencing; `fail[key] = code` makes every call for `key` answer `code`."""

    def __init__(self) -> None:
        self.states: dict[SharePartitionKey, ShareState] = {}
        self.calls: list[tuple[str, SharePartitionKey, Any]] = []
        self.fail: dict[SharePartitionKey, ErrorCode] = {}

    async def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> int:
        self.calls.append(("initialize", key, (state_epoch, start_offset)))
        if key in self.fail:
            return self.fail[key]
        old = self.states.get(key)
        if old is not None and old.state_epoch > state_epoch:
            return ErrorCode.FENCED_STATE_EPOCH
        self.states[key] = ShareState(state_epoch, start_offset, -1, 0, ())
        return ErrorCode.NONE

    async def read(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, ShareState | None]:
        self.calls.append(("read", key, leader_epoch))
        state = self.states.get(key)
        return (ErrorCode.NONE, state) if state is not None else (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)

    async def write(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: tuple[StateBatch, ...],
    ) -> int:
        self.calls.append(("write", key, (state_epoch, start_offset, delivery_complete_count)))
        if key not in self.states:
            return ErrorCode.INVALID_REQUEST
        self.states[key] = ShareState(state_epoch, start_offset, leader_epoch, delivery_complete_count, batches)
        return ErrorCode.NONE

    async def delete(self, key: SharePartitionKey) -> int:
        self.calls.append(("delete", key, None))
        if key in self.fail:
            return self.fail[key]
        self.states.pop(key, None)
        return ErrorCode.NONE

    async def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, StateSummary | None]:
        self.calls.append(("read_summary", key, leader_epoch))
        if key in self.fail:
            return self.fail[key], None
        s = self.states.get(key)
        if s is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        return ErrorCode.NONE, StateSummary(s.state_epoch, s.start_offset, s.leader_epoch, s.delivery_complete_count)

    def keys(self, call: str) -> list[tuple[uuid.UUID, int]]:
        return [(k.topic_id, k.partition) for c, k, _ in self.calls if c == call]
