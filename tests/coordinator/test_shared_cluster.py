"""cluster.processes: broker down/up and leader moves decided by one broker process reach the others
through the data dir (coordinator/cluster/shared_cluster.py), and each process follows them
(cluster_sync.py). Three Clusters on one dir stand for three processes (each its own fds, so the
flocks exclude each other as between processes); time is trio's MockClock."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from coordinator.broker.topics import Topic
from coordinator.cluster.cluster import NO_LEADER, BrokerNode, Cluster, ClusterError, LeaderChange
from coordinator.cluster.cluster_sync import ClusterSync
from coordinator.cluster.controller import Controller
from coordinator.cluster.elections import ElectionType, LeaderMoves
from coordinator.cluster.shared_cluster import SharedClusterState
from coordinator.cluster.shared_topics import CHECK_INTERVAL_S, shared_registry
from coordinator.groups.lifecycle import OFFSETS_TOPIC_ID
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.processes import CLUSTER_STATE_FILE
from protocol.errors import ErrorCode


def nodes(n: int = 3) -> list[BrokerNode]:
    return [BrokerNode(i, "127.0.0.1", 9000 + i) for i in range(n)]


class Process:
    """One broker process's Cluster and shared state over a shared data dir."""

    def __init__(self, tmp_path, index: int, n: int = 3) -> None:
        self.topics = shared_registry(tmp_path, nodes(n), index)
        self.topics.load()
        self.topics.register_internal(Topic(OFFSETS_TOPIC, 6, OFFSETS_TOPIC_ID, internal=True, replication_factor=3))
        self.cluster = Cluster(nodes(n), self.topics)
        self.shared = SharedClusterState(tmp_path, self.cluster, index)

    def view(self, topic: str) -> list[tuple[tuple[int, ...], int, int]]:
        count = self.topics.get(topic).partitions
        return [(lead.replicas, lead.leader, lead.epoch) for lead in map(self.leadership(topic), range(count))]

    def leadership(self, topic: str):
        return lambda partition: self.cluster.leadership(topic, partition)


def processes(tmp_path, n: int = 3) -> list[Process]:
    return [Process(tmp_path, i, n) for i in range(n)]


def test_a_broker_down_decided_in_one_process_gives_every_process_the_same_leaders_and_epochs(tmp_path):
    a, b, c = processes(tmp_path)
    a.topics.create("orders", 6, replication_factor=2)
    for p in (b, c):
        p.topics.catch_up()
        for topic in ("orders", OFFSETS_TOPIC):
            assert p.view(topic) == a.view(topic)  # computed alike before any change
    led_by_1 = [i for i, (_, leader, _) in enumerate(a.view("orders")) if leader == 1]
    assert led_by_1
    changes = a.shared.change(lambda: a.cluster.broker_down(1), "broker 1 went down")
    assert {(ch.topic, ch.partition) for ch in changes if ch.topic == "orders"} == {("orders", i) for i in led_by_1}
    assert all(ch.epoch == 1 and ch.old_leader == 1 and ch.new_leader != 1 for ch in changes)
    seen = b.shared.catch_up()
    assert sorted((ch.topic, ch.partition, ch.new_leader, ch.epoch) for ch in seen) == sorted(
        (ch.topic, ch.partition, ch.new_leader, ch.epoch) for ch in changes
    )
    assert b.shared.catch_up() == []  # nothing newer
    for p in (b, c):
        p.shared.catch_up()
        assert not p.cluster.node(1).up
        for topic in ("orders", OFFSETS_TOPIC):
            assert p.view(topic) == a.view(topic)

    # Back up (auto.leader.rebalance.enable): its preferred partitions return, epoch 2 everywhere.
    c.shared.change(lambda: c.cluster.broker_up(1), "broker 1 came back")
    for p in (a, b):
        back = p.shared.catch_up()
        assert {(ch.partition, ch.new_leader, ch.epoch) for ch in back if ch.topic == "orders"} == {
            (i, 1, 2) for i in led_by_1
        }
        assert p.view("orders") == c.view("orders") and p.cluster.node(1).up


def test_a_topic_seen_after_the_change_takes_the_decided_leadership(tmp_path):
    a, b, _ = processes(tmp_path)
    a.topics.create("early", 3)
    a.shared.change(lambda: a.cluster.move_leader("early", 0, 2, "moved"), "moved to broker 2 on request")
    a.shared.change(lambda: a.cluster.broker_down(0), "broker 0 went down")
    a.topics.create("late", 4, replication_factor=3)  # made while broker 0 is down
    b.shared.catch_up()  # before b knows either topic: the pins wait for them
    b.topics.catch_up()
    assert b.view("early") == a.view("early")
    assert b.view("early")[0] == ((2,), 2, 1)  # moved, epoch 1 (it was not broker 0's: no second bump)
    assert b.view("late") == a.view("late")
    assert all(leader != 0 and epoch == 0 for _, leader, epoch in b.view("late"))  # first live, never moved


def test_a_refused_command_publishes_nothing(tmp_path):
    a, b, _ = processes(tmp_path)
    a.topics.create("orders", 2)
    a.shared.change(lambda: a.cluster.broker_down(2), "broker 2 went down")
    generation = a.shared.generation.read()
    with pytest.raises(ClusterError):
        b.shared.change(lambda: b.cluster.move_leader("orders", 0, 2, "moved"), "moved to broker 2 on request")
    assert a.shared.generation.read() == generation
    assert not b.cluster.node(2).up  # b caught up before it tried


def test_pins_of_a_topic_the_writer_does_not_know_are_kept(tmp_path):
    a, b, _ = processes(tmp_path)
    a.topics.create("orders", 2)
    a.shared.change(lambda: a.cluster.move_leader("orders", 1, 0, "moved"), "moved to broker 0 on request")
    assert "orders" not in [t.name for t in b.topics.all()]  # b has not learned of the topic yet
    b.shared.change(lambda: b.cluster.broker_down(2), "broker 2 went down")
    state = json.loads((tmp_path / CLUSTER_STATE_FILE).read_text())
    assert ["orders", 1, 0, 1] in [[pin[0], pin[2], pin[4], pin[5]] for pin in state["pins"]]
    assert state["down"] == [2]


def test_acknowledgements_say_when_every_process_applied_a_generation(tmp_path):
    a, b, c = processes(tmp_path)
    a.shared.change(lambda: a.cluster.broker_down(1), "broker 1 went down")
    generation = a.shared.seen
    a.shared.ack()
    assert not a.shared.applied_everywhere(generation)
    for p in (b, c):
        p.shared.catch_up()
        p.shared.ack()
    assert a.shared.applied(3) == [generation] * 3 and a.shared.applied_everywhere(generation)


# -- ClusterSync: what one process does about a change ------------------------------------------


class FakeRuntime:
    num_partitions = 6

    def __init__(self) -> None:
        self.relocated: list[tuple[int, bool]] = []

        self.held: list[int] = []

    def relocate(self, partition: int, *, led: bool) -> None:
        self.relocated.append((partition, led))

    def hold(self, partition: int) -> None:
        self.held.append(partition)


class FakeData:
    def __init__(self) -> None:
        self.closed: list[tuple[str, int]] = []
        self.opened: list[tuple[str, int]] = []

    def close_partition(self, topic: str, partition: int) -> None:
        self.closed.append((topic, partition))

    def partition(self, topic: str, partition: int) -> None:
        self.opened.append((topic, partition))


class FakeLogs:
    def __init__(self) -> None:
        self.closed: list[tuple[str, int]] = []

    def close_log(self, topic: str, partition: int) -> None:
        self.closed.append((topic, partition))


class FakeListener:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def down(self) -> None:
        self.calls.append("down")

    async def up(self) -> None:
        self.calls.append("up")


class Followed:
    def __init__(self, p: Process) -> None:
        self.p, self.runtime, self.data, self.logs = p, FakeRuntime(), FakeData(), FakeLogs()
        self.listener = FakeListener()
        me = p.shared.index
        moves = LeaderMoves(p.cluster, {OFFSETS_TOPIC: self.runtime})
        self.sync = ClusterSync(p.shared, moves, self.data, self.logs, p.topics, listener=self.listener)
        p.cluster.follow = self.sync.catch_up
        moves.publish = self.sync.change
        self.controller = Controller(moves, {me: self.listener}, shared=self.sync)
        p.view(OFFSETS_TOPIC)  # the server looks at every internal partition's leader at start


def offsets_led_by(p: Process, node: int) -> list[int]:
    return [i for i in range(6) if p.cluster.leader(OFFSETS_TOPIC, i) == node]


def test_a_process_lets_go_of_what_it_lost_and_takes_what_it_gained_once_every_process_let_go(tmp_path):
    async def main() -> None:
        procs = processes(tmp_path)
        procs[0].topics.create("orders", 3, replication_factor=3)
        for p in procs[1:]:
            p.topics.catch_up()
        zero, one, two = (Followed(p) for p in procs)
        for f in (zero, one, two):
            f.p.shared.ack()
        lost = offsets_led_by(one.p, 1)
        orders_lost = [i for i in range(3) if one.p.cluster.leader("orders", i) == 1]

        async with trio.open_nursery() as nursery:
            for f in (one, two):  # the other processes follow on their ticks
                await nursery.start(f.sync.run)
            with trio.fail_after(5):
                changes = await zero.controller.broker_down(1)  # returns once every process applied it
            assert all(isinstance(ch, LeaderChange) for ch in changes)
            # Broker 1's process: listener down, its coordinator partitions dropped and their logs closed.
            assert one.listener.calls == ["down"]
            assert sorted(one.logs.closed) == [(OFFSETS_TOPIC, i) for i in lost]
            assert sorted(one.data.closed) == [("orders", i) for i in orders_lost]
            assert {(i, False) for i in lost} <= set(one.runtime.relocated)
            # Their new leaders load them once every process let go (broker 1's included).
            gained = {
                f: [i for i in lost if f.p.cluster.leader(OFFSETS_TOPIC, i) == f.p.shared.index] for f in (zero, two)
            }
            assert sum(map(len, gained.values())) == len(lost)
            with trio.fail_after(5):
                while any(f.sync.pending for f in (zero, two)):
                    await trio.sleep(CHECK_INTERVAL_S)
            for f, partitions in gained.items():
                assert [(i, True) for i in partitions] == [r for r in f.runtime.relocated if r[1]]
            assert not one.runtime.relocated or not any(led for _, led in one.runtime.relocated)
            for f in (zero, one, two):
                assert f.p.view(OFFSETS_TOPIC) == zero.p.view(OFFSETS_TOPIC)

            with trio.fail_after(5):
                await zero.controller.broker_up(1)
            assert one.listener.calls == ["down", "up"]
            with trio.fail_after(5):
                while one.sync.pending:
                    await trio.sleep(CHECK_INTERVAL_S)
            assert sorted(i for i, led in one.runtime.relocated if led) == lost  # preferred again: reloaded
            assert sorted(one.data.opened) == [("orders", i) for i in orders_lost]
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_gained_partition_waits_for_a_process_that_has_not_caught_up(tmp_path):
    async def main() -> None:
        procs = processes(tmp_path, 2)
        zero, one = (Followed(p) for p in procs)
        zero.p.shared.ack()
        one.p.shared.ack()
        partition = offsets_led_by(one.p, 1)[0]
        change = zero.controller.move_leader(OFFSETS_TOPIC, partition, 0)
        assert change.new_leader == 0 and zero.sync.pending == {(OFFSETS_TOPIC, partition): zero.p.shared.seen}
        assert not zero.sync.owns(OFFSETS_TOPIC, partition)
        assert zero.runtime.held == [partition]  # COORDINATOR_LOAD_IN_PROGRESS meanwhile, not NOT_COORDINATOR
        await zero.sync.tick()
        assert zero.sync.pending  # broker 1's process still holds it
        await one.sync.tick()  # it catches up: drops the shard, closes the log, says so
        assert one.logs.closed == [(OFFSETS_TOPIC, partition)]
        await zero.sync.tick()
        assert not zero.sync.pending and (partition, True) in zero.runtime.relocated

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_one_process_mode_has_no_follower(tmp_path):
    p = Process(tmp_path, 0)
    assert p.cluster.follow is None
    p.cluster.catch_up()  # nothing to do
    assert p.cluster.leader(OFFSETS_TOPIC, 0) != NO_LEADER


def test_a_deleted_topic_dir_is_removed_by_the_process_that_led_it_last(tmp_path):
    procs = processes(tmp_path)
    a = procs[0]
    a.topics.create("gone", 1)
    for p in procs[1:]:
        p.topics.catch_up()
    static = a.cluster.leader("gone", 0)
    target = (static + 1) % 3
    a.shared.change(lambda: a.cluster.move_leader("gone", 0, target, "moved"), f"moved to broker {target}")
    for p in procs:
        p.shared.catch_up()
        assert p.cluster.leader("gone", 0) == target
    a.topics.delete("gone")
    for p in procs:
        p.topics.catch_up()
        assert p.shared.holds_dir("gone", 0) == (p.shared.me == target)  # not the static leader's


def test_an_election_in_one_process_is_published_to_the_others(tmp_path):
    zero, one = (Followed(p) for p in processes(tmp_path, 2))
    partition = offsets_led_by(zero.p, 0)[0]
    zero.controller.move_leader(OFFSETS_TOPIC, partition, 1)  # away from its preferred replica
    assert one.sync.catch_up() and one.p.cluster.leader(OFFSETS_TOPIC, partition) == 1
    assert one.sync.moves.elect(OFFSETS_TOPIC, partition, ElectionType.PREFERRED) == (ErrorCode.NONE, None)
    zero.sync.catch_up()
    assert zero.p.view(OFFSETS_TOPIC) == one.p.view(OFFSETS_TOPIC)
    assert zero.p.cluster.leadership(OFFSETS_TOPIC, partition).leader == 0
    assert zero.p.cluster.leadership(OFFSETS_TOPIC, partition).epoch == 2
    assert zero.sync.pending == {(OFFSETS_TOPIC, partition): zero.p.shared.seen}  # taken once 1 lets go
