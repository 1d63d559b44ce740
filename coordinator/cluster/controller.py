"""What a leader change sets in motion: Kafka's controller and its brokers' reactions, in one place.

Brokers go down (their listener and connections close, the partitions they led elect new leaders
among live replicas) and come back (they listen again; leaderless partitions and, with
auto.leader.rebalance.enable, their preferred partitions return to them). A leader change of a
__consumer_offsets partition moves its groups' coordinator (elections.py applies every change:
logged, told to the observer, the coordinator relocated).
The control plane calls these methods; so do tests and the embedded server. With
cluster.processes each command is decided under the shared state's lock and every broker
process follows it (cluster_sync.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from coordinator.cluster.cluster import Cluster, ClusterError, LeaderChange
from coordinator.cluster.elections import LeaderMoves
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for


class Switch(Protocol):
    """A broker's listener (net/listener.py): each returns once the port is closed / listening."""

    async def down(self) -> None: ...
    async def up(self) -> None: ...


class SharedChanges(Protocol):
    """cluster.processes (cluster_sync.ClusterSync): a command decided under the shared state's
    lock, published to every broker process and followed by each."""

    def change(self, command: Callable[[], list[LeaderChange]], cause: str) -> list[LeaderChange]: ...
    async def command(self, command: Callable[[], list[LeaderChange]], cause: str) -> list[LeaderChange]: ...


class Controller:
    def __init__(self, moves: LeaderMoves, listeners: dict[int, Switch], shared: SharedChanges | None = None) -> None:
        """`moves`: the leader changes and their consequences (elections.py), shared with ElectLeaders.
        `shared`: with cluster.processes, every command goes through the shared state instead."""
        self.moves = moves
        self.cluster: Cluster = moves.cluster
        self.coordinators = moves.coordinators
        self.listeners = listeners
        self.shared = shared

    async def broker_down(self, node_id: int) -> list[LeaderChange]:
        """The broker stops listening and drops its connections; its partitions elect new leaders.
        Returns once its port is closed."""
        if self.shared is not None:  # returns once every broker process applied it
            self.cluster.node(node_id)  # an unknown broker: ClusterError before anything is written
            return await self.shared.command(lambda: self.cluster.broker_down(node_id), f"broker {node_id} went down")
        changes = self.cluster.broker_down(node_id)
        self.moves.apply(changes)
        await self.listeners[node_id].down()
        return changes

    async def broker_up(self, node_id: int) -> list[LeaderChange]:
        """The broker listens again on its port (returns once it does) and rejoins as replica."""
        if self.shared is not None:
            self.cluster.node(node_id)
            return await self.shared.command(lambda: self.cluster.broker_up(node_id), f"broker {node_id} came back")
        if self.cluster.node(node_id).up:
            return []
        await self.listeners[node_id].up()
        changes = self.cluster.broker_up(node_id)
        self.moves.apply(changes)
        return changes

    def move_leader(self, topic: str, partition: int, node_id: int) -> LeaderChange:
        cause = f"moved to broker {node_id} on request"
        if self.shared is not None:
            return self.shared.change(lambda: [self.cluster.move_leader(topic, partition, node_id, cause)], cause)[0]
        change = self.cluster.move_leader(topic, partition, node_id, cause)
        self.moves.apply([change])
        return change

    def move_coordinator(self, group_id: str, node_id: int) -> LeaderChange:
        runtime = self.coordinators[OFFSETS_TOPIC]
        return self.move_leader(OFFSETS_TOPIC, partition_for(group_id, runtime.num_partitions), node_id)

    def make_leaderless(self, topic: str, partition: int) -> LeaderChange:
        cause = "made leaderless on request"
        if self.shared is not None:
            return self.shared.change(lambda: [self.cluster.make_leaderless(topic, partition, cause)], cause)[0]
        change = self.cluster.make_leaderless(topic, partition, cause)
        self.moves.apply([change])
        return change

    def coordinator_of(self, group_id: str) -> int:
        runtime = self.coordinators[OFFSETS_TOPIC]
        return self.cluster.leader(OFFSETS_TOPIC, partition_for(group_id, runtime.num_partitions))


__all__ = ["Controller", "ClusterError"]
