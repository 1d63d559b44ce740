"""Live state equals a fresh replay of every record written, for histories with KIP-848 consumer
groups (Hypothesis). Random consumer-protocol joins, heartbeats (right, stale and future epochs),
leaves and static leaves, regex subscriptions, classic members joining and leaving consumer groups,
classic groups upgraded and downgraded, commits, deletes, topics created and grown, and time
(session, rebalance, join/sync timeouts, regex resolution, retention). After every step the whole
journal goes through the bytes codec into a fresh shard: every consumer group must equal the live
one (hard and derived state), offsets too, and settled classic groups their record."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from coordinator.groups.group import ClassicGroup
from coordinator.groups.offset_requests import CommitPartition, OffsetCommitParams
from coordinator.groups.records import decode_record, encode_record
from coordinator.groups.requests import DeleteGroupsParams, LeaveGroupParams, SyncGroupParams
from coordinator.groups.retention import schedule_offset_expiration
from coordinator.groups.shard import GroupShard
from coordinator.groups.state import GroupState
from protocol.consumer_protocol import ConsumerProtocolSubscription, encode_subscription
from tests.coordinator.groups.modern.support import ConsumerTestContext

GROUPS = ("g1", "g2")
MEMBERS = ("m1", "m2", "m3")
SUBSCRIPTIONS = (["foo"], ["bar"], ["foo", "bar"], [])
SETTINGS = ConsumerGroupSettings(
    session_timeout_ms=8_000,
    min_session_timeout_ms=1_000,
    heartbeat_interval_ms=1_000,
    min_heartbeat_interval_ms=100,
    regex_batch_refresh_min_interval_ms=1_000,
)


def protocols(topics: list[str]) -> list[tuple[str, bytes]]:
    return [("range", encode_subscription(ConsumerProtocolSubscription(version=1, topics=topics)))]


class ConsumerReplayMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.c = ConsumerTestContext(
            SETTINGS,
            start_ms=1_000,
            offsets_retention_ms=60_000,
            offsets_retention_check_interval_ms=20_000,
            min_session_timeout_ms=1_000,
        )
        self.c.registry.add("foo", 3)
        self.c.registry.add("bar", 2)
        schedule_offset_expiration(self.c.shard, 1_000)
        self.classic: set[tuple[str, str]] = set()  # (group, member id) joined with the classic protocol

    def member(self, group: str, member_id: str):
        g = self.c.shard.consumer_group(group)
        return None if g is None else g.members.get(member_id)

    # -- consumer protocol ------------------------------------------------------------------
    @rule(
        group=st.sampled_from(GROUPS),
        member=st.sampled_from(MEMBERS),
        topics=st.sampled_from(SUBSCRIPTIONS),
        regex=st.sampled_from([None, None, "f.*", "b.*"]),
        static=st.booleans(),
        assignor=st.sampled_from([None, "range", "uniform"]),
    )
    def join(self, group, member, topics, regex, static, assignor):
        kwargs = dict(server_assignor=assignor, instance_id=f"i-{member}" if static else None)
        if regex is not None:
            kwargs["subscribed_topic_regex"] = regex
        self.c.join_consumer(member, topics, group, **kwargs)

    @rule(
        group=st.sampled_from(GROUPS),
        member=st.sampled_from(MEMBERS),
        mode=st.sampled_from(["owned", "owned", "revoked", "none", "stale", "future", "change"]),
        topics=st.sampled_from(SUBSCRIPTIONS),
    )
    def heartbeat(self, group, member, mode, topics):
        m = self.member(group, member)
        epoch = m.member_epoch if m is not None else 1
        owned = None
        kwargs = {}
        if m is not None and mode in ("owned", "change"):
            owned = [
                (t, sorted(p | m.partitions_pending_revocation.get(t, frozenset())))
                for t, p in m.assigned_partitions.items()
            ]
        elif mode == "revoked" and m is not None:
            owned = [(t, sorted(p)) for t, p in m.assigned_partitions.items()]
        elif mode == "stale":
            epoch = m.previous_member_epoch if m is not None else 0
            owned = []
        elif mode == "future":
            epoch += 3
        if mode == "change":
            kwargs["subscribed_topic_names"] = topics
        self.c.cg_heartbeat(
            member, epoch, group, owned=owned, instance_id=m.instance_id if m is not None else None, **kwargs
        )

    @rule(group=st.sampled_from(GROUPS), member=st.sampled_from(MEMBERS), static=st.booleans())
    def leave(self, group, member, static):
        m = self.member(group, member)
        if m is None or m.use_classic_protocol:
            return
        epoch = -2 if static and m.instance_id is not None else -1
        self.c.cg_heartbeat(member, epoch, group, instance_id=m.instance_id)

    # -- classic members and classic groups -------------------------------------------------
    @rule(group=st.sampled_from(GROUPS), topics=st.sampled_from(SUBSCRIPTIONS[:3]))
    def classic_join(self, group, topics):
        first = self.c.join(
            "", group_id=group, protocols=protocols(topics), version=4, session_ms=6_000, rebalance_ms=4_000
        )
        member_id = getattr(first, "member_id", None)
        if member_id:
            answer = self.c.join(
                member_id, group_id=group, protocols=protocols(topics), version=4, session_ms=6_000, rebalance_ms=4_000
            )
            self.classic.add((group, member_id))
            self._settle_classic(group)
            if hasattr(answer, "generation_id") and answer.generation_id >= 0:
                self.c.send(SyncGroupParams(group, answer.generation_id, member_id))

    def _settle_classic(self, group):
        live = self.c.shard.group(group)
        if live is None:
            return
        if live.state is GroupState.PREPARING_REBALANCE:
            for m in list(live.members.values()):
                self.c.join(
                    m.member_id, group_id=group, protocols=list(m.protocols), session_ms=6_000, rebalance_ms=4_000
                )
        live = self.c.shard.group(group)
        if live is not None and live.state is GroupState.COMPLETING_REBALANCE:
            leader = live.leader_id
            for m in sorted(live.members, key=lambda x: x == leader):
                self.c.send(SyncGroupParams(group, live.generation_id, m, assignments=[]))

    @precondition(lambda self: self.classic)
    @rule(data=st.data(), action=st.sampled_from(["heartbeat", "rejoin", "sync", "leave"]))
    def classic_member(self, data, action):
        group, member_id = data.draw(st.sampled_from(sorted(self.classic)))
        live = self.c.shard.groups.get(group)
        generation = 0
        if isinstance(live, ConsumerGroup) and member_id in live.members:
            generation = live.members[member_id].member_epoch
        elif isinstance(live, ClassicGroup):
            generation = live.generation_id
        if action == "heartbeat":
            self.c.heartbeat(member_id, generation, group)
        elif action == "rejoin":
            self.c.join(
                member_id, group_id=group, protocols=protocols(["foo"]), version=4, session_ms=6_000, rebalance_ms=4_000
            )
        elif action == "sync":
            self.c.send(SyncGroupParams(group, generation, member_id))
        else:
            self.c.send(LeaveGroupParams.single(group, member_id, 3))
            self.classic.discard((group, member_id))

    # -- offsets, admin, topics, time ----------------------------------------------------------
    @rule(group=st.sampled_from(GROUPS), member=st.sampled_from(MEMBERS + ("",)), offset=st.integers(0, 99))
    def commit(self, group, member, offset):
        m = self.member(group, member)
        epoch = m.member_epoch if m is not None else -1
        self.c.send(OffsetCommitParams(group, [("foo", [CommitPartition(0, offset)])], epoch, member))

    @rule(group=st.sampled_from(GROUPS))
    def delete_group(self, group):
        self.c.send(DeleteGroupsParams([group]))

    @rule(name=st.sampled_from(["foo", "bar", "fab", "baz"]), partitions=st.integers(1, 4))
    def topic_changes(self, name, partitions):
        existing = self.c.registry.topics.get(name)
        if existing is None:
            self.c.registry.add(name, partitions, n=10 + len(name) + ord(name[-1]))
        elif partitions > existing.partitions:
            self.c.registry.grow(name, partitions)

    @rule(ms=st.sampled_from([0, 500, 1_500, 4_000, 9_000, 25_000]))
    def time_passes(self, ms):
        self.c.sleep(ms)

    # -- the property ----------------------------------------------------------------------
    @invariant()
    def live_equals_replay(self):
        for live in self.c.shard.groups.values():
            event(f"{type(live).__name__} {live.state}")
            if isinstance(live, ConsumerGroup) and live.num_classic_members:
                event("consumer group with classic members")
        fresh = GroupShard(0, self.c.shard.config, topics=self.c.shard.topics)
        for now_ms, record in self.c.journal:
            key, value = encode_record(record)
            fresh.replay(decode_record(key, value), now_ms)
        assert fresh.offsets.groups == self.c.shard.offsets.groups
        for group_id, live in self.c.shard.groups.items():
            replayed = fresh.groups.get(group_id)
            if isinstance(live, ConsumerGroup):
                assert replayed == live, group_id
            elif live.state in (GroupState.EMPTY, GroupState.STABLE) and not live.is_simple():
                assert isinstance(replayed, ClassicGroup), group_id
                assert replace(replayed.snapshot(), current_state_timestamp_ms=None) == replace(
                    live.snapshot(), current_state_timestamp_ms=None
                ), group_id
        for group_id, replayed in fresh.groups.items():
            if group_id not in self.c.shard.groups:
                assert (
                    isinstance(replayed, ClassicGroup)
                    and replayed.is_simple()
                    and not fresh.offsets.has_offsets(group_id)
                ), f"{group_id} would come back after a restart"


TestConsumerLiveStateEqualsReplay = ConsumerReplayMachine.TestCase
TestConsumerLiveStateEqualsReplay.settings = settings(
    max_examples=120, stateful_step_count=35, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
