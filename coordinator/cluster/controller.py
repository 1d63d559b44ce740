"""What a leader change sets in motion: Kafka's controller and its brokers' reactions, in one place.

Brokers go down (their listener and connections close, the partitions they led elect new leaders
among live replicas) and come back (they listen again; leaderless partitions and, with
auto.leader.rebalance.enable, their preferred partitions return to them). A leader change of a
__consumer_offsets partition moves its groups' coordinator: the runtime drops the shard and the
new leader loads it from the log. Every change is logged and told to the observer with its cause.
The control plane calls these methods; so do tests and the embedded server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from coordinator.cluster.cluster import NO_LEADER, Cluster, ClusterError, LeaderChange
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.observe.logs import get_logger, log_event

_log = get_logger("controller")


class Relocatable(Protocol):
    """A coordinator runtime whose partitions follow their leaders (runtime.CoordinatorRuntime)."""

    num_partitions: int

    def relocate(self, partition: int, *, led: bool) -> None: ...


class Switch(Protocol):
    """A broker's listener (net/listener.py): each returns once the port is closed / listening."""

    async def down(self) -> None: ...
    async def up(self) -> None: ...


class ChangeObserver(Protocol):
    def leader_changed(self, change: LeaderChange) -> None: ...


class Controller:
    def __init__(
        self,
        cluster: Cluster,
        coordinators: dict[str, Relocatable],
        listeners: dict[int, Switch],
        observer: ChangeObserver | None = None,
    ) -> None:
        self.cluster = cluster
        self.coordinators = coordinators  # internal topic -> the runtime serving it
        self.listeners = listeners
        self.observer = observer

    async def broker_down(self, node_id: int) -> list[LeaderChange]:
        """The broker stops listening and drops its connections; its partitions elect new leaders.
        Returns once its port is closed."""
        changes = self.cluster.broker_down(node_id)
        self._apply(changes)
        await self.listeners[node_id].down()
        return changes

    async def broker_up(self, node_id: int) -> list[LeaderChange]:
        """The broker listens again on its port (returns once it does) and rejoins as replica."""
        if self.cluster.node(node_id).up:
            return []
        await self.listeners[node_id].up()
        changes = self.cluster.broker_up(node_id)
        self._apply(changes)
        return changes

    def move_leader(self, topic: str, partition: int, node_id: int) -> LeaderChange:
        change = self.cluster.move_leader(topic, partition, node_id, f"moved to broker {node_id} on request")
        self._apply([change])
        return change

    def move_coordinator(self, group_id: str, node_id: int) -> LeaderChange:
        runtime = self.coordinators[OFFSETS_TOPIC]
        return self.move_leader(OFFSETS_TOPIC, partition_for(group_id, runtime.num_partitions), node_id)

    def make_leaderless(self, topic: str, partition: int) -> LeaderChange:
        change = self.cluster.make_leaderless(topic, partition, "made leaderless on request")
        self._apply([change])
        return change

    def coordinator_of(self, group_id: str) -> int:
        runtime = self.coordinators[OFFSETS_TOPIC]
        return self.cluster.leader(OFFSETS_TOPIC, partition_for(group_id, runtime.num_partitions))

    def _apply(self, changes: Sequence[LeaderChange]) -> None:
        for change in changes:
            log_event(
                _log,
                "partition.leader",
                topic=change.topic,
                partition=change.partition,
                old=change.old_leader,
                new=change.new_leader,
                epoch=change.epoch,
                cause=change.cause,
            )
            if self.observer is not None:
                self.observer.leader_changed(change)
            runtime = self.coordinators.get(change.topic)
            if runtime is not None:
                runtime.relocate(change.partition, led=change.new_leader != NO_LEADER)


__all__ = ["Controller", "ClusterError"]
