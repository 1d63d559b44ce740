"""GroupTestContext: drive the group state machine by hand, no sockets, files or event loop.

Like Kafka's GroupMetadataManagerTestContext: a FakeClock, one GroupShard, `send(request)`
runs the request's operation the way the runtime does (records collected, parked replies
delivered at the end), `sleep(ms)` advances the clock and fires due timers through the same path.
Tests assert the exact answers, `records` and `timers`. Helpers build typical requests and whole
rebalances.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from coordinator.groups.describe import delete_groups, describe_groups, list_groups
from coordinator.groups.group import ClassicGroup
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.heartbeat import heartbeat
from coordinator.groups.join import join_group
from coordinator.groups.leave import leave_group
from coordinator.groups.offset_requests import OffsetCommitParams, OffsetDeleteParams, OffsetFetchParams
from coordinator.groups.offsets import commit_offsets, delete_offsets, fetch_offsets
from coordinator.groups.rebalance import heartbeat_key, join_key, sync_key
from coordinator.groups.requests import (
    DeleteGroupsParams,
    DescribeGroupsParams,
    HeartbeatParams,
    JoinGroupParams,
    JoinGroupResult,
    LeaveGroupParams,
    ListGroupsParams,
    SyncGroupParams,
)
from coordinator.groups.shard import GroupShard
from coordinator.groups.sync import sync_group
from coordinator.runtime.clock import FakeClock
from coordinator.runtime.operation import OpContext, ParkedReply
from protocol.errors import ErrorCode

PROTOCOLS = [("range", b"range-meta")]


@dataclass(frozen=True)
class InTxn:
    """A journal entry: a record of a transactional batch of this producer."""

    producer_id: int
    record: Any


@dataclass(frozen=True)
class EndMark:
    """A journal entry: the producer's COMMIT (or ABORT) marker."""

    producer_id: int
    commit: bool


def replay_journal(shard: GroupShard, journal: list[tuple[int, Any]]) -> GroupShard:
    """Replay a journal into `shard` the way the loader replays a log, in order."""
    for now_ms, entry in journal:
        if isinstance(entry, InTxn):
            shard.replay_transactional(entry.record, entry.producer_id, now_ms)
        elif isinstance(entry, EndMark):
            shard.replay_end_transaction(entry.producer_id, entry.commit, now_ms)
        else:
            shard.replay(entry, now_ms)
    return shard


# The test's own routing from request type to operation (production code calls each op by name).
OPERATIONS: dict[type, Any] = {
    JoinGroupParams: join_group,
    SyncGroupParams: sync_group,
    HeartbeatParams: heartbeat,
    LeaveGroupParams: leave_group,
    DescribeGroupsParams: describe_groups,
    ListGroupsParams: list_groups,
    DeleteGroupsParams: delete_groups,
    OffsetCommitParams: commit_offsets,
    OffsetFetchParams: fetch_offsets,
    OffsetDeleteParams: delete_offsets,
}


class GroupTestContext:
    def __init__(self, config: GroupConfig | None = None, start_ms: int = 0) -> None:
        self.clock = FakeClock(start_ms)
        counter = itertools.count(1)
        self.shard = GroupShard(0, config, uuid_source=lambda: f"uuid{next(counter)}")
        self.timers = self.shard.timers
        self.records: list[Any] = []
        # Every record written, with the time its op ran: what a fresh replay needs.
        self.journal: list[tuple[int, Any]] = []

    # -- driving ----------------------------------------------------------------------------

    def send(self, request: Any) -> Any:
        """Run one operation; returns its answer (a value or a ParkedReply)."""
        ctx = OpContext(self.shard, self.clock.time_ms())
        answer = request(ctx) if callable(request) else OPERATIONS[type(request)](ctx, request)
        self._finish(ctx)
        return answer

    def sleep(self, ms: int) -> int:
        """Advance the clock and fire every timer now due; returns how many fired."""
        self.clock.advance(ms)
        fired = 0
        queue = self.timers._timers  # the runtime's queue behind this shard's view
        while (timer := queue.pop_expired(self.clock.time_ms())) is not None:
            ctx = OpContext(self.shard, self.clock.time_ms())
            timer.action(ctx)
            self._finish(ctx)
            fired += 1
        return fired

    def _finish(self, ctx: OpContext) -> None:
        self.records.extend(ctx.records)
        if ctx.marker is not None:
            self.journal.append((ctx.now_ms, EndMark(ctx.marker.producer_id, ctx.marker.commit)))
        elif ctx.producer is not None:
            self.journal.extend((ctx.now_ms, InTxn(ctx.producer[0], record)) for record in ctx.records)
        else:
            self.journal.extend((ctx.now_ms, record) for record in ctx.records)
        ctx.deliver()

    def take_records(self) -> list[Any]:
        records, self.records = self.records, []
        return records

    # -- inspecting -------------------------------------------------------------------------

    def group(self, group_id: str = "g") -> ClassicGroup:
        group = self.shard.group(group_id)
        assert group is not None, f"no group {group_id}"
        return group

    def heartbeat_deadline(self, member_id: str, group_id: str = "g") -> int | None:
        return self.timers.deadline(heartbeat_key(group_id, member_id))

    def join_deadline(self, group_id: str = "g") -> int | None:
        return self.timers.deadline(join_key(group_id))

    def sync_deadline(self, group_id: str = "g") -> int | None:
        return self.timers.deadline(sync_key(group_id))

    # -- request builders -------------------------------------------------------------------

    @staticmethod
    def join_params(
        member_id: str = "",
        *,
        group_id: str = "g",
        instance_id: str | None = None,
        client_id: str = "client",
        session_ms: int = 10_000,
        rebalance_ms: int = 60_000,
        protocols: list[tuple[str, bytes]] | None = None,
        protocol_type: str = "consumer",
        version: int = 9,
    ) -> JoinGroupParams:
        return JoinGroupParams(
            group_id=group_id,
            member_id=member_id,
            group_instance_id=instance_id,
            client_id=client_id,
            client_host="/127.0.0.1",
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=rebalance_ms,
            protocol_type=protocol_type,
            protocols=PROTOCOLS if protocols is None else protocols,
            request_version=version,
        )

    def join(self, member_id: str = "", **kwargs: Any) -> Any:
        return self.send(self.join_params(member_id, **kwargs))

    def join_dynamic(self, client_id: str = "client", **kwargs: Any) -> ParkedReply[JoinGroupResult]:
        """KIP-394 dance: empty id -> MEMBER_ID_REQUIRED -> rejoin with the given id."""
        first = self.join("", client_id=client_id, **kwargs)
        assert first.error == ErrorCode.MEMBER_ID_REQUIRED, first
        return self.join(first.member_id, client_id=client_id, **kwargs)

    def sync(
        self, member_id: str, generation: int, assignments=None, group_id: str = "g", instance_id: str | None = None
    ) -> Any:
        return self.send(
            SyncGroupParams(group_id, generation, member_id, instance_id, assignments=list(assignments or []))
        )

    def heartbeat(
        self, member_id: str, generation: int, group_id: str = "g", instance_id: str | None = None
    ) -> ErrorCode:
        return self.send(HeartbeatParams(group_id, generation, member_id, instance_id)).error

    def stable_group(self, n: int, group_id: str = "g", **kwargs: Any) -> list[str]:
        """Build a Stable group of n dynamic members (generation 1 for n == 1; each later
        joiner triggers a rebalance that everyone rejoins). Returns member ids, leader first."""
        ids: list[str] = []
        for i in range(n):
            reply = self.join_dynamic(client_id=f"c{i}", group_id=group_id, **kwargs)
            rejoins = [self.join(m, client_id=f"c{j}", group_id=group_id, **kwargs) for j, m in enumerate(ids)]
            assert reply.done, "join phase should complete once everyone rejoined"
            ids.append(reply.value.member_id)
            for r in rejoins:
                assert r.done
        group = self.group(group_id)
        assignments = [(m, f"assign-{m}".encode()) for m in ids]
        leader = group.leader_id
        followers = [m for m in ids if m != leader]
        for m in followers:
            self.sync(m, group.generation_id, group_id=group_id)
        self.sync(leader, group.generation_id, assignments, group_id=group_id)
        assert str(group.state) == "Stable"
        return [leader] + followers
