"""Live state equals a fresh replay of every record written (Hypothesis, random histories).

Operations change a shard only through records (offsets, tombstones) or write the record that
describes what they changed (a classic group's GroupMetadata snapshot). If one forgets, a
restart would load something else than what clients were answered. This machine drives random
joins, rejoins, syncs, heartbeats, leaves, commits, offset deletes, group deletes and time
(session, rebalance and pending-sync timeouts, the initial delay, retention), transactional
offset commits of two producers and their COMMIT/ABORT markers, and after every step replays the
whole journal into a fresh shard (in order, as the loader replays a log with transactional
batches) and compares: committed offsets and the offsets pending in open transactions exactly,
and every group that is settled (Empty or Stable: what Kafka persists) exactly as its record
says. Groups in PreparingRebalance/CompletingRebalance are between records, as in Kafka.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from coordinator.groups.group_config import GroupConfig
from coordinator.groups.offset_requests import CommitPartition, OffsetCommitParams, OffsetDeleteParams
from coordinator.groups.requests import DeleteGroupsParams, LeaveGroupParams, SyncGroupParams
from coordinator.groups.shard import GroupShard
from coordinator.groups.state import GroupState
from coordinator.groups.txn_offset_commit import (
    MarkerParams,
    TxnOffsetCommitParams,
    commit_transactional_offsets,
    write_txn_marker,
)
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext, replay_journal

GROUPS = ("g1", "g2")
PRODUCERS = (100, 101)
SETTLED = (GroupState.EMPTY, GroupState.STABLE)
CONFIG = GroupConfig(
    initial_rebalance_delay_ms=500,
    offsets_retention_ms=120_000,
    offsets_retention_check_interval_ms=30_000,
    new_member_join_timeout_ms=300_000,
)


def persisted_view(shard: GroupShard) -> tuple[dict, dict]:
    """What a restart would rebuild: offsets, and each settled group's record."""
    groups = {gid: _comparable(g.snapshot(), g.state) for gid, g in shard.groups.items() if g.state in SETTLED}
    return shard.offsets.groups, groups


def _comparable(snapshot, state):
    """A Stable group's record carries the timestamp of CompletingRebalance: Kafka writes it at
    the leader's SyncGroup and moves to Stable after the append (classicGroupSyncGroup), so
    only an Empty group's timestamp (from which its offsets expire) must survive a restart."""
    return snapshot if state is GroupState.EMPTY else replace(snapshot, current_state_timestamp_ms=None)


class ReplayMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.c = GroupTestContext(CONFIG, start_ms=1_000)
        self.members: list[tuple[str, str, str | None]] = []  # (group, member id, instance id)
        self.instances = 0

    # -- membership -----------------------------------------------------------------------
    @rule(
        group=st.sampled_from(GROUPS),
        static=st.booleans(),
        version=st.sampled_from([3, 9]),
        session=st.sampled_from([6_000, 20_000]),
    )
    def join_new_member(self, group, static, version, session):
        instance = None
        if static:
            self.instances += 1
            instance = f"i{self.instances % 3}"  # instances come back: static replacement
        kwargs = dict(group_id=group, instance_id=instance, version=version, session_ms=session, rebalance_ms=10_000)
        before = self._member_ids(group)
        answer = self.c.join("", **kwargs)
        if getattr(answer, "error", None) == ErrorCode.MEMBER_ID_REQUIRED:  # KIP-394: rejoin with it
            self.c.join(answer.member_id, **kwargs)
        for member_id in self._member_ids(group) - before:
            self.members.append((group, member_id, instance))

    def _member_ids(self, group: str) -> set[str]:
        live = self.c.shard.group(group)
        return set(live.members) if live is not None else set()

    @precondition(lambda self: self.members)
    @rule(data=st.data(), changed=st.booleans())
    def rejoin(self, data, changed):
        group, member_id, instance = data.draw(st.sampled_from(self.members))
        protocols = [("range", b"changed" if changed else b"range-meta")]
        self.c.join(member_id, group_id=group, instance_id=instance, protocols=protocols, rebalance_ms=10_000)

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def sync(self, data):
        group, member_id, instance = data.draw(st.sampled_from(self.members))
        live = self.c.shard.group(group)
        generation = live.generation_id if live is not None else 0
        assignments = []
        if live is not None and live.leader_id == member_id:
            assignments = [(m, f"a-{m}".encode()) for m in live.members]
        self.c.send(SyncGroupParams(group, generation, member_id, instance, assignments=assignments))

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def heartbeat(self, data):
        group, member_id, instance = data.draw(st.sampled_from(self.members))
        live = self.c.shard.group(group)
        self.c.heartbeat(member_id, live.generation_id if live else 0, group, instance)

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def leave(self, data):
        member = data.draw(st.sampled_from(self.members))
        self.c.send(LeaveGroupParams.single(member[0], member[1], 3))
        self.members.remove(member)

    @rule(group=st.sampled_from(GROUPS))
    def settle(self, group):
        """Every member rejoins and syncs (leader last): the group reaches Stable, where Kafka
        persists the most (assignments, static replacements)."""
        live = self.c.shard.group(group)
        if live is not None and live.state is GroupState.PREPARING_REBALANCE:
            for m in list(live.members.values()):
                self.c.join(
                    m.member_id,
                    group_id=group,
                    instance_id=m.group_instance_id,
                    protocols=list(m.protocols),
                    session_ms=m.session_timeout_ms,
                    rebalance_ms=10_000,
                )
        live = self.c.shard.group(group)
        if live is not None and live.state is GroupState.COMPLETING_REBALANCE:
            order = sorted(live.members.values(), key=lambda m: m.member_id == live.leader_id)
            for m in order:
                assignments = [(x, f"a-{x}".encode()) for x in live.members] if m.member_id == live.leader_id else []
                self.c.send(
                    SyncGroupParams(
                        group, live.generation_id, m.member_id, m.group_instance_id, assignments=assignments
                    )
                )

    # -- offsets and admin ----------------------------------------------------------------
    @rule(
        data=st.data(),
        partitions=st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True),
        offset=st.integers(0, 1_000),
        simple=st.booleans(),
    )
    def commit(self, data, partitions, offset, simple):
        if simple or not self.members:
            group, member_id, instance, generation = data.draw(st.sampled_from(GROUPS)), "", None, -1
        else:
            group, member_id, instance = data.draw(st.sampled_from(self.members))
            live = self.c.shard.group(group)
            generation = live.generation_id if live else 0
        parts = [CommitPartition(n, offset) for n in partitions]
        self.c.send(OffsetCommitParams(group, [("t", parts)], generation, member_id, instance))

    @rule(group=st.sampled_from(GROUPS), partitions=st.lists(st.integers(0, 2), max_size=3, unique=True))
    def delete_offsets(self, group, partitions):
        self.c.send(OffsetDeleteParams(group, [("t", partitions)]))

    @rule(group=st.sampled_from(GROUPS))
    def delete_group(self, group):
        self.c.send(DeleteGroupsParams([group]))

    # -- transactions (KIP-447 TxnOffsetCommit, then the coordinator's marker) -----------------
    @rule(
        data=st.data(),
        producer=st.sampled_from(PRODUCERS),
        partitions=st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True),
        offset=st.integers(0, 1_000),
        with_member=st.booleans(),
    )
    def txn_commit(self, data, producer, partitions, offset, with_member):
        if with_member and self.members:
            group, member_id, instance = data.draw(st.sampled_from(self.members))
            live = self.c.shard.group(group)
            generation = live.generation_id if live else 0
        else:
            group, member_id, instance, generation = data.draw(st.sampled_from(GROUPS)), "", None, -1
        params = TxnOffsetCommitParams(
            f"tx-{producer}",
            group,
            producer,
            0,
            [("t", [CommitPartition(n, offset) for n in partitions])],
            generation,
            member_id,
            instance,
        )
        self.c.send(lambda ctx: commit_transactional_offsets(ctx, params))

    @rule(producer=st.sampled_from(PRODUCERS), commit=st.booleans())
    def txn_end(self, producer, commit):
        self.c.send(lambda ctx: write_txn_marker(ctx, MarkerParams(producer, 0, commit, 0)))

    @rule(ms=st.sampled_from([100, 700, 3_000, 7_000, 12_000, 40_000, 150_000]))
    def time_passes(self, ms):
        self.c.sleep(ms)

    # -- the property ----------------------------------------------------------------------
    @invariant()
    def live_equals_replay(self):
        fresh = replay_journal(GroupShard(0, CONFIG), self.c.journal)
        live_offsets, live_groups = persisted_view(self.c.shard)
        assert fresh.offsets.groups == live_offsets
        assert fresh.txn_offsets.snapshot() == self.c.shard.txn_offsets.snapshot()
        assert fresh.txn_offsets.open_by_group == self.c.shard.txn_offsets.open_by_group
        replayed_groups = {gid: _comparable(g.snapshot(), g.state) for gid, g in fresh.groups.items()}
        for group_id, snapshot in live_groups.items():
            assert replayed_groups.get(group_id) == snapshot, group_id
        for group_id in replayed_groups.keys() - self.c.shard.groups.keys():
            raise AssertionError(f"group {group_id!r} is gone live but a restart would bring it back")


TestLiveStateEqualsReplay = ReplayMachine.TestCase
TestLiveStateEqualsReplay.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
