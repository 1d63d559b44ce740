"""The cluster's view of itself: brokers, and for every partition its replicas, leader and epoch.

Kafka's controller state for one process. Each partition's replica list comes from Kafka's
assignment (assignment.py); the leader is the first live replica (the preferred one while it
lives); the leader epoch grows by one on every leader change. A partition whose replicas are all
down has no leader (-1). Replicas are logical — one copy of each log serves every broker — so
the in-sync replicas are simply the live ones. This module only decides; what a leader change
sets in motion (listeners closing, a coordinator reloading its partition) is controller.py's.
Leaderships are computed on first use from the topic registry and kept while the topic (same
id) lives; an unknown topic or partition is None. `pins` (cluster.processes: shared_cluster.py)
are leaderships another process decided, taken instead of the computed ones; empty otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.cluster.assignment import assign_replicas
from coordinator.groups.placement import java_string_hash, kafka_abs

NO_LEADER = -1


@dataclass(slots=True)
class BrokerNode:
    node_id: int
    host: str
    port: int  # the broker's first listener (host:port)
    up: bool = True
    # Its other listeners (coordinator/security/listeners.py): name -> (advertised host, port).
    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)

    def endpoint(self, listener: str | None) -> tuple[str, int]:
        """Where clients of `listener` reach this broker (Kafka answers Metadata and
        FindCoordinator with the endpoints of the listener the request came in on)."""
        if listener is None:
            return self.host, self.port
        return self.endpoints.get(listener, (self.host, self.port))


@dataclass(slots=True)
class Leadership:
    replicas: tuple[int, ...]
    leader: int
    epoch: int = 0


@dataclass(frozen=True, slots=True)
class LeaderChange:
    topic: str
    partition: int
    old_leader: int
    new_leader: int
    epoch: int
    cause: str


@dataclass(slots=True)
class _TopicLeaders:
    topic_id: uuid.UUID
    partitions: list[Leadership] = field(default_factory=list)


class ClusterError(ValueError):
    """A move the cluster refuses (unknown or down broker, unknown partition)."""


class Cluster:
    def __init__(self, nodes: list[BrokerNode], topics: TopicRegistry, *, auto_leader_rebalance: bool = True) -> None:
        self.nodes = {node.node_id: node for node in nodes}
        self.topics = topics
        self.auto_leader_rebalance = auto_leader_rebalance
        self._leaders: dict[str, _TopicLeaders] = {}
        self.pins: dict[tuple[str, uuid.UUID, int], Leadership] = {}  # (topic, id, partition) -> decided
        self.follow: Callable[[], object] | None = None  # cluster.processes: ClusterSync.catch_up

    # -- reading ---------------------------------------------------------------------------------
    def catch_up(self) -> None:
        """cluster.processes: the other broker processes' decisions first (nothing otherwise)."""
        if self.follow is not None:
            self.follow()

    def node(self, node_id: int) -> BrokerNode:
        node = self.nodes.get(node_id)
        if node is None:
            raise ClusterError(f"no broker {node_id} (brokers are {sorted(self.nodes)})")
        return node

    def live_nodes(self) -> list[BrokerNode]:
        return [node for node in self.nodes.values() if node.up]

    def controller_id(self) -> int:
        live = [node.node_id for node in self.live_nodes()]
        return min(live) if live else NO_LEADER

    def leadership(self, topic_name: str, partition: int) -> Leadership | None:
        topic = self.topics.get(topic_name)
        if topic is None or not 0 <= partition < topic.partitions:
            return None
        return self._topic_leaders(topic).partitions[partition]

    def leader(self, topic_name: str, partition: int) -> int:
        leadership = self.leadership(topic_name, partition)
        return NO_LEADER if leadership is None else leadership.leader

    def remembered_leader(self, topic_name: str, partition: int) -> int | None:
        """The leader last computed for the partition, also of a topic deleted since (None if
        never computed): who held its log, for cluster.processes' deletion of its dir."""
        entry = self._leaders.get(topic_name)
        if entry is None or not 0 <= partition < len(entry.partitions):
            return None
        return entry.partitions[partition].leader

    def in_sync(self, leadership: Leadership) -> list[int]:
        return [r for r in leadership.replicas if self.nodes[r].up]

    def _topic_leaders(self, topic: Topic) -> _TopicLeaders:
        entry = self._leaders.get(topic.name)
        # (the identity test first: UUID.__eq__ is a Python call, and this runs for every group request)
        if entry is None or (entry.topic_id is not topic.topic_id and entry.topic_id != topic.topic_id):
            entry = self._leaders[topic.name] = _TopicLeaders(topic.topic_id)
        if len(entry.partitions) < topic.partitions:  # new, or grown
            first = len(entry.partitions)
            for index, replicas in enumerate(self._assigned(topic, first), start=first):
                pinned = self.pins.get((topic.name, topic.topic_id, index))
                entry.partitions.append(
                    Leadership(pinned.replicas, pinned.leader, pinned.epoch)
                    if pinned is not None
                    else Leadership(replicas, self._first_live(replicas))
                )
        return entry

    def _assigned(self, topic: Topic, first: int = 0) -> list[tuple[int, ...]]:
        """The replicas of the topic's partitions from `first` on (Kafka's assignment)."""
        ids = sorted(self.nodes)
        rf = max(1, min(topic.replication_factor, len(ids)))
        start = kafka_abs(java_string_hash(topic.name)) % len(ids) if not topic.internal else 0
        return list(assign_replicas(topic.partitions - first, rf, ids, start, first_partition=first))

    def computed(self, topic_name: str) -> list[Leadership]:
        """The topic's leaderships as computed from scratch with the brokers up now (epoch 0):
        what a partition has unless a change was decided for it (a pin)."""
        topic = self.topics.get(topic_name)
        if topic is None:
            return []
        return [Leadership(replicas, self._first_live(replicas)) for replicas in self._assigned(topic)]

    def topic_id(self, topic_name: str) -> uuid.UUID | None:
        topic = self.topics.get(topic_name)
        return None if topic is None else topic.topic_id

    def _first_live(self, replicas: tuple[int, ...]) -> int:
        return next((r for r in replicas if self.nodes[r].up), NO_LEADER)

    def all_partitions(self) -> list[tuple[str, int, Leadership]]:
        """(topic, partition, leadership) of every partition of every topic known now."""
        return self._all()

    def _all(self) -> list[tuple[str, int, Leadership]]:
        out = []
        for topic in self.topics.all():
            for index, leadership in enumerate(self._topic_leaders(topic).partitions[: topic.partitions]):
                out.append((topic.name, index, leadership))
        return out

    # -- changing --------------------------------------------------------------------------------
    def _set_leader(self, topic: str, partition: int, leadership: Leadership, leader: int, cause: str) -> LeaderChange:
        old = leadership.leader
        leadership.leader = leader
        leadership.epoch += 1  # every leader change, as Kafka's controller bumps it
        return LeaderChange(topic, partition, old, leader, leadership.epoch, cause)

    def broker_down(self, node_id: int) -> list[LeaderChange]:
        node = self.node(node_id)
        if not node.up:
            return []
        partitions = self._all()  # computed before the flag flips: a lazy one would skip the change
        node.up = False
        cause = f"broker {node_id} went down"
        return [
            self._set_leader(t, p, lead, self._first_live(lead.replicas), cause)
            for t, p, lead in partitions
            if lead.leader == node_id
        ]

    def broker_up(self, node_id: int) -> list[LeaderChange]:
        node = self.node(node_id)
        if node.up:
            return []
        partitions = self._all()
        node.up = True
        changes = []
        for t, p, lead in partitions:
            if lead.leader == NO_LEADER and node_id in lead.replicas:
                changes.append(self._set_leader(t, p, lead, node_id, f"broker {node_id} came back"))
            elif self.auto_leader_rebalance and lead.replicas[0] == node_id and lead.leader != node_id:
                changes.append(
                    self._set_leader(
                        t,
                        p,
                        lead,
                        node_id,
                        f"broker {node_id} came back: preferred leader again (auto.leader.rebalance.enable)",
                    )
                )
        return changes

    def move_leader(self, topic: str, partition: int, node_id: int, cause: str) -> LeaderChange:
        """Make `node_id` the leader; a broker outside the replicas takes the last replica's
        place (librdkafka's mock and kfake move leaders to any broker)."""
        leadership = self._existing(topic, partition)
        if not self.node(node_id).up:
            raise ClusterError(f"broker {node_id} is down: it cannot lead {topic}-{partition}")
        if node_id not in leadership.replicas:
            leadership.replicas = (node_id, *leadership.replicas[:-1]) if len(leadership.replicas) > 1 else (node_id,)
        return self._set_leader(topic, partition, leadership, node_id, cause)

    def make_leaderless(self, topic: str, partition: int, cause: str) -> LeaderChange:
        return self._set_leader(topic, partition, self._existing(topic, partition), NO_LEADER, cause)

    def _existing(self, topic: str, partition: int) -> Leadership:
        leadership = self.leadership(topic, partition)
        if leadership is None:
            raise ClusterError(f"no partition {topic}-{partition}")
        return leadership
