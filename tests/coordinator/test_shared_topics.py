"""cluster.processes: topic changes made by one broker process reach the others through the data dir
(coordinator/cluster/shared_topics.py). Two registries on one dir stand for two processes (each
its own fd, so the flocks exclude each other as between processes); time is trio's MockClock."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import trio
import trio.testing

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import DELETED_MARKER, TopicRegistry
from coordinator.cluster.cluster import BrokerNode, Cluster
from coordinator.cluster.shared_topics import (
    CHECK_INTERVAL_S,
    GENERATION_FILE,
    SharedTopicRegistry,
    TopicPendingDeletion,
    TopicSync,
    shared_registry,
    static_leader,
)
from coordinator.config import Config
from coordinator.handlers import k19_create_topics
from coordinator.runtime.clock import FakeClock
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from tests.coordinator.broker.conftest import batch

NODES = [BrokerNode(0, "127.0.0.1", 1), BrokerNode(1, "127.0.0.1", 2)]


def two_processes(tmp_path) -> tuple[SharedTopicRegistry, SharedTopicRegistry]:
    registries = (shared_registry(tmp_path, NODES, 0), shared_registry(tmp_path, NODES, 1))
    for registry in registries:
        registry.load()
    return registries


def dirs(tmp_path, name: str) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(f"{name}-"))


class ClosedTopics:
    def __init__(self) -> None:
        self.closed: list[str] = []

    def close_topic(self, name: str, topic_id: uuid.UUID) -> None:
        self.closed.append(name)


def test_every_process_computes_the_leaders_the_cluster_places(tmp_path):
    for n in (1, 2, 3, 5):
        nodes = [BrokerNode(10 + i, "h", i) for i in range(n)]
        registry = TopicRegistry(tmp_path / str(n))
        for name in ("orders", "payments", "a", "topic-with-a-long-name"):
            registry.create(name, 7)
        cluster = Cluster(nodes, registry)
        for topic in registry.all():
            for p in range(topic.partitions):
                assert static_leader(topic.name, p, [node.node_id for node in nodes]) == cluster.leader(topic.name, p)


def test_a_topic_created_by_one_process_is_found_by_the_other_on_its_name(tmp_path):
    first, second = two_processes(tmp_path)
    assert second.catch_up() is False  # nothing changed: no rescan
    created = first.create("orders", 3, {"cleanup.policy": "compact"})
    changes = second.changes
    found = second.get("orders")  # unknown here: caught up on the miss
    assert found == created
    assert second.changes == changes + 1
    assert second.catch_up() is False
    assert (tmp_path / GENERATION_FILE).read_text().strip() == "1"


def test_growth_reaches_the_other_process_when_it_catches_up(tmp_path):
    first, second = two_processes(tmp_path)
    first.create("orders", 2)
    assert second.get("orders").partitions == 2
    first.grow("orders", 5)
    assert second.get("orders").partitions == 2  # a known name: the stale view until the next check
    assert second.catch_up() is True
    assert second.get("orders").partitions == 5


def test_creating_a_name_another_process_created_meanwhile_fails_as_existing(tmp_path):
    first, second = two_processes(tmp_path)
    first.create("orders", 1)
    try:
        second.create("orders", 4)
    except FileExistsError as exc:
        assert not isinstance(exc, TopicPendingDeletion)
    else:
        raise AssertionError("created twice")
    assert second.get("orders").partitions == 1


def test_a_deletion_is_finished_by_each_leader_and_frees_the_name(tmp_path):
    first, second = two_processes(tmp_path)
    old = first.create("orders", 4)
    assert second.get("orders") == old
    mine = {p for p in range(4) if static_leader("orders", p, [0, 1]) == 1}
    assert mine and len(mine) < 4  # both processes lead some partitions
    first.delete("orders")
    assert dirs(tmp_path, "orders") == [f"orders-{p}" for p in sorted(mine)]  # the other's, marked
    assert all((tmp_path / f"orders-{p}" / DELETED_MARKER).exists() for p in mine)
    assert first.get("orders") is None
    try:
        first.create("orders", 2)
    except TopicPendingDeletion:
        pass
    else:
        raise AssertionError("created while the other process holds the old logs")
    data = ClosedTopics()
    assert TopicSync(second, data).tick() == ["orders"]
    assert data.closed == ["orders"] and dirs(tmp_path, "orders") == []
    assert second.get("orders") is None
    again = first.create("orders", 2)
    assert again.topic_id != old.topic_id
    assert second.get("orders") == again


def test_a_leader_removes_its_dirs_of_a_topic_it_never_knew(tmp_path):
    first, second = two_processes(tmp_path)
    first.create("brief", 4)
    first.delete("brief")  # created and deleted between two of the second's checks
    assert dirs(tmp_path, "brief")
    assert TopicSync(second, ClosedTopics()).tick() == []  # no log of it was open here
    assert dirs(tmp_path, "brief") == []
    first.create("brief", 1)


def test_a_restart_finishes_a_deletion_the_leaders_had_not(tmp_path):
    first, _ = two_processes(tmp_path)
    first.create("orders", 4)
    first.create("kept", 1)
    first.delete("orders")
    assert dirs(tmp_path, "orders")  # the other process never caught up
    registry = TopicRegistry(tmp_path)
    registry.load()
    assert [t.name for t in registry.all()] == ["kept"]
    assert dirs(tmp_path, "orders") == []


def test_the_periodic_check_closes_the_logs_of_a_topic_deleted_elsewhere(tmp_path):
    """The leading process has the log open (it took records); the other deletes the topic; the
    leader's next check, on the injected clock, closes the log and removes its dir."""
    creator, leader = two_processes(tmp_path)
    creator.create("orders", 4)
    partition = next(p for p in range(4) if leader.leads("orders", p))
    config = Config({"data.dir": str(tmp_path), "log.flush.mode": "interval"})
    data = DataPath(config, leader, FakeClock(1_000_000), owns=leader.leads)  # the leading process's
    leader.catch_up()
    data.open_all()
    assert [(p.topic, p.index) for p in data.served()] == [("orders", p) for p in range(4) if leader.leads("orders", p)]
    part = data.partition("orders", partition)
    assert part is not None
    part.append_now(batch(b"v1", b"v2"), 1_000_000)
    served = len(data.served())
    creator.delete("orders")

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(TopicSync(leader, data).run)
            await trio.sleep(CHECK_INTERVAL_S / 2)
            assert len(data.served()) == served  # not yet checked: Kafka's propagation lag
            await trio.sleep(CHECK_INTERVAL_S)
            assert data.served() == [] and dirs(tmp_path, "orders") == []
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    data.close()


def _create_through(data: DataPath, name: str, partitions: int):
    """k19's creation of one topic, as the broker process owning `data` runs it."""
    ctx = SimpleNamespace(broker=SimpleNamespace(data=data, cluster=SimpleNamespace(live_nodes=lambda: NODES)))
    topic = CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)
    return k19_create_topics._create(ctx, topic, CreateTopicsRequest(topics=[topic]), trio.current_time() + 5)


def _data(tmp_path, registry: SharedTopicRegistry) -> DataPath:
    config = Config({"data.dir": str(tmp_path), "log.flush.mode": "interval"})
    return DataPath(config, registry, FakeClock(1_000_000), owns=registry.leads)


def test_create_topics_waits_until_every_leader_finished_the_deletion(tmp_path):
    creator, leader = two_processes(tmp_path)
    creator.create("orders", 4)
    leader.catch_up()
    creator.delete("orders")
    data = _data(tmp_path, creator)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            started = trio.current_time()
            nursery.start_soon(TopicSync(leader, ClosedTopics()).run)  # the leader's periodic check
            outcome = await _create_through(data, "orders", 2)
            assert outcome.error == ErrorCode.NONE and outcome.topic is not None
            assert 0 < trio.current_time() - started <= 2 * CHECK_INTERVAL_S  # virtual time: one check
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert leader.get("orders").partitions == 2
    data.close()


def test_create_topics_gives_up_on_a_deletion_no_leader_finishes(tmp_path):
    creator, _ = two_processes(tmp_path)
    creator.create("orders", 4)
    creator.delete("orders")  # the other process never checks
    data = _data(tmp_path, creator)

    async def main() -> None:
        outcome = await _create_through(data, "orders", 2)
        assert outcome.error == ErrorCode.TOPIC_ALREADY_EXISTS
        assert outcome.message == "Topic 'orders' is marked for deletion."

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert creator.get("orders") is None
    data.close()
