"""cluster.processes: one broker process follows the shared cluster state (shared_cluster.py).

What controller.py sets in motion in one process, for the part this process holds: a partition
it stopped leading is let go at once (the coordinator's shard dropped and its log closed, a user
partition's log closed); one it now leads waits until every process has applied the change (so
none still holds it: one writer per log) before its coordinator loads (replay) or its log opens.
Its own broker going down closes its listener and connections, coming back listens again; the
process stays alive either way. Caught up every CHECK_INTERVAL_S, on Metadata and FindCoordinator
(Cluster.catch_up), and before a command; a command returns once every process applied it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import trio

from coordinator.cluster.cluster import Cluster, LeaderChange
from coordinator.cluster.controller import Switch
from coordinator.cluster.elections import LeaderMoves
from coordinator.cluster.shared_cluster import SharedClusterState
from coordinator.cluster.shared_topics import CHECK_INTERVAL_S
from coordinator.observe.logs import get_logger

_log = get_logger("controller")
SETTLE_LIMIT_S = 10.0  # a command waits this long at most for every process to apply it
_SETTLE_POLL_S = 0.01


class HeldLogs(Protocol):
    """What this process closes when it stops leading a partition."""

    def close_partition(self, topic: str, partition: int) -> None: ...  # DataPath: a user topic's log
    def partition(self, topic: str, partition: int) -> Any: ...  # DataPath: opens a user topic's log


class ClosesLogs(Protocol):
    def close_log(self, topic: str, partition: int) -> None: ...  # LogManager: an internal topic's log


class CatchesUp(Protocol):
    def catch_up(self) -> bool: ...


class ClusterSync:
    def __init__(
        self,
        shared: SharedClusterState,
        moves: LeaderMoves,
        data: HeldLogs,
        logs: ClosesLogs,
        topics: CatchesUp,
        listener: Switch | None = None,
    ) -> None:
        self.shared, self.moves, self.me = shared, moves, shared.me
        self.cluster: Cluster = moves.cluster
        self.data, self.logs, self.topics = data, logs, topics
        self.listener = listener
        self.pending = shared.pending  # gained, not yet taken: -> generation to wait for (shared.owns reads it)
        self._listening = True

    def owns(self, topic: str, partition: int) -> bool:
        return self.shared.owns(topic, partition)

    # -- following the state -----------------------------------------------------------------
    def catch_up(self) -> list[LeaderChange]:
        """Apply a newer shared state, if any (its listener follows on the next tick)."""
        generation = self.shared.generation.read()
        if generation == self.shared.seen:
            return []
        changes = self.shared.catch_up()
        self._follow(changes, self.shared.seen)
        return changes

    def change(self, command: Callable[[], list[LeaderChange]], cause: str) -> list[LeaderChange]:
        """Decide a command on this process's Cluster, publish it, and follow it here."""
        self.topics.catch_up()  # every topic that exists has its partitions decided too
        changes = self.shared.change(command, cause, follow=lambda caught: self._follow(caught, self.shared.seen))
        self._follow(changes, self.shared.seen)
        return changes

    async def command(self, command: Callable[[], list[LeaderChange]], cause: str) -> list[LeaderChange]:
        """`change`, then this process's listener follows and every process applies it."""
        changes = self.change(command, cause)
        await self.settle(self.shared.seen)
        return changes

    def _follow(self, changes: list[LeaderChange], generation: int) -> None:
        coordinators = self.moves.coordinators
        for change in changes:
            self.pending.pop((change.topic, change.partition), None)
        self.moves.apply(changes, led=lambda change: False)  # a gained coordinator loads once released
        for change in changes:
            key = (change.topic, change.partition)
            if change.old_leader == self.me:
                if change.topic in coordinators:
                    self.logs.close_log(*key)
                else:
                    self.data.close_partition(*key)
            if change.new_leader == self.me:
                self.pending[key] = generation
                if change.topic in coordinators:  # COORDINATOR_LOAD_IN_PROGRESS until `release`
                    coordinators[change.topic].hold(change.partition)

    def release(self) -> list[tuple[str, int]]:
        """Take the gained partitions every process has let go of; returns them."""
        if not self.pending:
            return []
        everywhere = min(self.shared.applied(len(self.cluster.nodes)))
        taken = [key for key, generation in self.pending.items() if generation <= everywhere]
        for key in taken:
            del self.pending[key]
            if self.cluster.leader(*key) != self.me:
                continue
            runtime = self.moves.coordinators.get(key[0])
            if runtime is not None:
                runtime.relocate(key[1], led=True)  # loads from its log, as a moved coordinator does
            else:
                self.data.partition(*key)  # opens (recovers) the log the other process closed
        return taken

    async def reconcile(self) -> None:
        """This broker's listener as its node says: down closes it and its connections."""
        up = self.cluster.node(self.me).up
        if self.listener is None or up == self._listening:
            return
        if up:
            await self.listener.up()
        else:
            await self.listener.down()
        self._listening = up

    async def tick(self) -> None:
        self.catch_up()
        await self.reconcile()
        self.shared.ack()  # everything up to `seen` is let go of here
        self.release()

    async def settle(self, generation: int) -> None:
        """Until every process applied `generation` (at most SETTLE_LIMIT_S: a wedged process
        must not hang the command), taking what this one gained as soon as it may."""
        await self.reconcile()
        self.shared.ack()
        with trio.move_on_after(SETTLE_LIMIT_S) as waited:
            while not self.shared.applied_everywhere(generation):
                await trio.sleep(_SETTLE_POLL_S)
        if waited.cancelled_caught:
            _log.warning("cluster change %d: not every broker process applied it in time", generation)
        self.release()

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        self.shared.ack()
        task_status.started()
        while True:
            await trio.sleep(CHECK_INTERVAL_S)
            await self.tick()
