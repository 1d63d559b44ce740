"""Many members joining, heartbeating, leaving and timing out at random, each acting like a
KIP-848 client (it owns what the last assignment gave it). Every few operations a replay of all
records from scratch equals the live groups; in the end the group converges to Stable with every
partition owned exactly once."""

from __future__ import annotations

import random
import uuid

import pytest

from coordinator.groups.consumer.group import ConsumerGroupState
from coordinator.groups.consumer.regex_refresh import on_topics_changed
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness

G = "g"


class Client:
    def __init__(self, member_id: str, instance_id: str | None = None) -> None:
        self.member_id = member_id
        self.instance_id = instance_id
        self.epoch = 0
        self.owned: dict[uuid.UUID, tuple[int, ...]] = {}

    def heartbeat(self, h: Harness) -> None:
        if self.epoch == 0:
            r = h.heartbeat(
                G,
                self.member_id,
                0,
                owned=(),
                rebalance_timeout_ms=30_000,
                subscribed_topic_names=["a", "b"],
                instance_id=self.instance_id,
            )
        else:
            r = h.heartbeat(G, self.member_id, self.epoch, owned=self.owned.items(), instance_id=self.instance_id)
        if r.error_code in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
            self.epoch, self.owned = 0, {}  # fenced: drop everything and rejoin
            return
        assert r.error_code == 0, r
        self.epoch = r.member_epoch
        if r.assignment is not None:
            self.owned = {tp.topic_id: tp.partitions for tp in r.assignment}


@pytest.mark.parametrize("seed", range(12))
def test_random_membership_converges_and_replays(seed: int) -> None:
    rnd = random.Random(seed)
    h = Harness()
    h.topics.add("a", 7)
    h.topics.add("b", 3)
    clients: list[Client] = []
    counter = 0
    for step in range(120):
        action = rnd.random()
        if action < 0.15 or not clients:
            counter += 1
            static = rnd.random() < 0.3
            clients.append(Client(f"m{counter}", f"i{counter}" if static else None))
            clients[-1].heartbeat(h)
        elif action < 0.22:
            c = clients.pop(rnd.randrange(len(clients)))
            epoch = -2 if c.instance_id and rnd.random() < 0.5 else -1
            h.heartbeat(G, c.member_id, epoch, instance_id=c.instance_id)
        elif action < 0.25:
            h.topics.resize("a", h.topics.by_name("a").num_partitions + 1)  # type: ignore[union-attr]
            h.run(lambda ctx: on_topics_changed(ctx, ["a"]))
        elif action < 0.28:
            h.advance(rnd.choice([1000, 20_000]))  # fenced clients learn it on their next heartbeat
        else:
            rnd.choice(clients).heartbeat(h)
        if step % 4 == 0:
            assert h.rebuilt() == h.groups
    # Everyone keeps heartbeating (faster than the session timeout) until the group settles; a
    # static member that left with -2 keeps its place until its session expires (45 s).
    for _ in range(60):
        for c in clients:
            c.heartbeat(h)
        h.advance(1000)
    group = h.group(G)
    live = {c.member_id for c in clients}
    assert set(group.members) == live
    assert group.state == ConsumerGroupState.STABLE if live else ConsumerGroupState.EMPTY
    owners: dict[tuple[uuid.UUID, int], str] = {}
    for c in clients:
        member = group.members[c.member_id]
        assert member.assigned_partitions == group.target_assignment[c.member_id]
        assert member.member_epoch == c.epoch == group.assignment_epoch
        for topic_id, parts in c.owned.items():
            for p in parts:
                assert (topic_id, p) not in owners
                owners[(topic_id, p)] = c.member_id
    if live:
        expected = {(t.topic_id, p) for t in map(h.topics.by_name, ["a", "b"]) if t for p in range(t.num_partitions)}
        assert set(owners) == expected
    assert h.rebuilt() == h.groups
