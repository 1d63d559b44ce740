"""Leader moves and what each sets in motion, shared by the controller (brokers down and up, the
control plane's moves) and ElectLeaders (43).

Every change is logged and told to the observer with its cause; a leader change of an internal
topic's partition relocates its coordinator (the runtime drops the shard and the new leader loads
it from the log). Elections follow Kafka's controller (ReplicationControlManager.electLeader):
PREFERRED makes the first replica the leader when it is live (else PREFERRED_LEADER_NOT_AVAILABLE;
already leading: ELECTION_NOT_NEEDED); UNCLEAN gives a leaderless partition its first live
replica (else ELIGIBLE_LEADERS_NOT_AVAILABLE; one with a leader: ELECTION_NOT_NEEDED).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Protocol

from coordinator.cluster.cluster import NO_LEADER, Cluster, LeaderChange
from coordinator.observe.logs import get_logger, log_event
from protocol.errors import ErrorCode

_log = get_logger("controller")


class Relocatable(Protocol):
    """A coordinator runtime whose partitions follow their leaders (runtime.CoordinatorRuntime)."""

    num_partitions: int

    def relocate(self, partition: int, *, led: bool) -> None: ...
    def hold(self, partition: int) -> None: ...  # cluster.processes: led here, loaded once released


class ChangeObserver(Protocol):
    def leader_changed(self, change: LeaderChange) -> None: ...


class ElectionType(enum.IntEnum):
    PREFERRED = 0
    UNCLEAN = 1


class LeaderMoves:
    def __init__(
        self, cluster: Cluster, coordinators: dict[str, Relocatable], observer: ChangeObserver | None = None
    ) -> None:
        self.cluster = cluster
        self.coordinators = coordinators  # internal topic -> the runtime serving it
        self.observer = observer
        # cluster.processes (cluster_sync.ClusterSync.change): an election's move is published to
        # every broker process instead of applied here alone.
        self.publish: Callable[[Callable[[], list[LeaderChange]], str], list[LeaderChange]] | None = None

    def elect(self, topic: str, partition: int, election: ElectionType) -> tuple[int, str | None]:
        """(error, message) of one partition's election, applied when it succeeds."""
        lead = self.cluster.leadership(topic, partition)
        if lead is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
        live = self.cluster.in_sync(lead)
        if election == ElectionType.PREFERRED:
            preferred = lead.replicas[0]
            if lead.leader == preferred:
                return ErrorCode.ELECTION_NOT_NEEDED, None
            if preferred not in live:
                return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, (
                    f"Failed to elect leader for partition {topic}-{partition}: its preferred replica "
                    f"{preferred} is down"
                )
            self._move(topic, partition, preferred, "preferred replica elected")
            return ErrorCode.NONE, None
        if lead.leader != NO_LEADER:
            return ErrorCode.ELECTION_NOT_NEEDED, None
        if not live:
            return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, f"no replica of {topic}-{partition} is live"
        self._move(topic, partition, live[0], "unclean election")
        return ErrorCode.NONE, None

    def _move(self, topic: str, partition: int, node_id: int, cause: str) -> None:
        if self.publish is not None:
            self.publish(lambda: [self.cluster.move_leader(topic, partition, node_id, cause)], cause)
        else:
            self.apply([self.cluster.move_leader(topic, partition, node_id, cause)])

    def apply(self, changes: Sequence[LeaderChange], led: Callable[[LeaderChange], bool] | None = None) -> None:
        """`led`: whether this process loads the coordinator of a changed internal partition (by
        default: when a broker leads it, every broker being in this process; cluster.processes
        decides for itself: cluster_sync.py)."""
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
                runtime.relocate(change.partition, led=change.new_leader != NO_LEADER if led is None else led(change))
