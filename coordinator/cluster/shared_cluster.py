"""cluster.processes: which brokers are down and every decided leadership, shared by the processes.

Kafka's controller decides and every broker follows the metadata log; here the process that
carries out a command (broker down/up, a leader or coordinator move) decides on its own Cluster,
under an exclusive flock of `cluster.generation` and after applying what the others decided, then
writes the whole outcome to `cluster.state` (renamed into place) and bumps the number. The state
is absolute, so every process computes the same leader and epoch for every partition: a
partition takes its pin (replicas, leader, epoch) when it has one, else what Cluster computes
with the brokers up now (epoch 0). Each process applies a newer state on its catch-up and says
so in its slot of `cluster.applied` (ClusterSync, cluster_sync.py, once the consequences ran).
The parent removes the three files before it starts the children: a cluster starts all up.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coordinator.cluster.cluster import Cluster, LeaderChange, Leadership
from coordinator.cluster.shared_topics import GenerationFile, static_leader
from coordinator.processes import CLUSTER_APPLIED_FILE, CLUSTER_GENERATION_FILE, CLUSTER_STATE_FILE

_WIDTH = 20  # one slot of `cluster.applied`: a number written in place at one width
Pin = tuple[str, uuid.UUID, int]  # (topic, topic id, partition)


def encode(cluster: Cluster, cause: str, kept: dict[Pin, Leadership]) -> dict[str, Any]:
    """The cluster's state as written: down brokers, and a pin for every partition whose
    leadership is not the computed one (plus `kept`: pins of topics this process does not know)."""
    pins = dict(kept)
    computed: dict[str, list[Leadership]] = {}
    for topic, index, lead in cluster.all_partitions():
        topic_id = cluster.topic_id(topic)
        default = computed.setdefault(topic, cluster.computed(topic))
        if topic_id is not None and index < len(default) and not _same(lead, default[index]):
            pins[(topic, topic_id, index)] = lead
    return {
        "down": sorted(n.node_id for n in cluster.nodes.values() if not n.up),
        "cause": cause,
        "pins": [
            [topic, topic_id.hex, index, list(lead.replicas), lead.leader, lead.epoch]
            for (topic, topic_id, index), lead in sorted(pins.items(), key=lambda item: (item[0][0], item[0][2]))
        ],
    }


def decode_pins(state: dict[str, Any]) -> dict[Pin, Leadership]:
    return {
        (topic, uuid.UUID(hex=topic_id), index): Leadership(tuple(replicas), leader, epoch)
        for topic, topic_id, index, replicas, leader, epoch in state.get("pins", [])
    }


def apply(cluster: Cluster, state: dict[str, Any]) -> list[LeaderChange]:
    """Make the cluster what `state` says; one LeaderChange for every partition whose leader or
    epoch moved (an epoch that moved is a leader change, even back to the same broker)."""
    down = set(state.get("down", []))
    for node in cluster.nodes.values():
        node.up = node.node_id not in down
    cluster.pins = decode_pins(state)
    cause = str(state.get("cause", "changed by another broker process"))
    computed: dict[str, list[Leadership]] = {}
    changes = []
    for topic, index, lead in cluster.all_partitions():
        topic_id = cluster.topic_id(topic)
        target = None if topic_id is None else cluster.pins.get((topic, topic_id, index))
        if target is None:
            default = computed.setdefault(topic, cluster.computed(topic))
            if index >= len(default):
                continue
            target = default[index]
        if _same(lead, target):
            continue
        old = lead.leader
        lead.replicas, lead.leader, lead.epoch = target.replicas, target.leader, target.epoch
        changes.append(LeaderChange(topic, index, old, target.leader, target.epoch, cause))
    return changes


def _same(a: Leadership, b: Leadership) -> bool:
    return (a.replicas, a.leader, a.epoch) == (b.replicas, b.leader, b.epoch)


class SharedClusterState:
    """One process's access to the shared state: `catch_up` applies a newer one to its Cluster,
    `change` decides a command and publishes the outcome, `ack`/`applied_everywhere` are the
    processes' slots in `cluster.applied`."""

    def __init__(self, data_dir: Path, cluster: Cluster, index: int) -> None:
        self.cluster, self.index = cluster, index
        self.me = list(cluster.nodes)[index]  # this process's broker
        self.pending: dict[tuple[str, int], int] = {}  # gained, not yet let go elsewhere: -> generation
        self.generation = GenerationFile(data_dir, CLUSTER_GENERATION_FILE)
        self._path = data_dir / CLUSTER_STATE_FILE
        self._applied = os.open(data_dir / CLUSTER_APPLIED_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        self.seen = 0  # the generation applied to the Cluster (0: none written, all brokers up)

    def owns(self, topic: str, partition: int) -> bool:
        """This process leads the partition and may hold its log (DataPath's `owns`): not while
        another process may still hold it (ClusterSync takes it then)."""
        return self.cluster.leader(topic, partition) == self.me and (topic, partition) not in self.pending

    def holds_dir(self, name: str, partition: int) -> bool:
        """Whether this process removes a deleted topic's dir (SharedTopicRegistry's `leads`):
        the one that led it last, as every process computed it (else the static placement)."""
        leader = self.cluster.remembered_leader(name, partition)
        if leader is None or leader < 0:
            leader = static_leader(name, partition, sorted(self.cluster.nodes))
        return leader == self.me

    def close(self) -> None:
        os.close(self._applied)
        self.generation.close()

    # -- reading ------------------------------------------------------------------------------
    def moved(self) -> bool:
        return self.generation.read() != self.seen

    def catch_up(self) -> list[LeaderChange]:
        """The changes of a newer state (none if there is none), applied to the Cluster."""
        if not self.moved():
            return []
        with self.generation.shared():
            return self._apply_locked()

    def _apply_locked(self) -> list[LeaderChange]:
        generation = self.generation.read()
        state = self._read()
        self.seen = generation
        return apply(self.cluster, state) if state is not None else []

    def _read(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads(self._path.read_bytes()))
        except FileNotFoundError:
            return None

    # -- changing -----------------------------------------------------------------------------
    def change(
        self,
        command: Callable[[], list[LeaderChange]],
        cause: str,
        follow: Callable[[list[LeaderChange]], None] = lambda caught: None,
    ) -> list[LeaderChange]:
        """What the command changed: the others' decisions first (given to `follow`), then the
        command on this Cluster (a ClusterError publishes nothing), then the outcome written and
        the number bumped, all under the exclusive lock."""
        with self.generation.exclusive():
            if self.moved():
                follow(self._apply_locked())
            changes = command()
            known = {(t, self.cluster.topic_id(t)) for t, _, _ in self.cluster.all_partitions()}
            kept = {pin: lead for pin, lead in self.cluster.pins.items() if (pin[0], pin[1]) not in known}
            state = encode(self.cluster, cause, kept)
            self.cluster.pins = decode_pins(state)
            self._write(state)
            self.seen = self.generation.bump_locked()
        return changes

    def _write(self, state: dict[str, Any]) -> None:
        """Whole for every reader (renamed into place); not fsynced: the file lives only as long
        as this run of the cluster (the parent removes it at start)."""
        tmp = self._path.with_suffix(".tmp")
        tmp.write_bytes(json.dumps(state, separators=(",", ":")).encode())
        os.replace(tmp, self._path)

    # -- acknowledgements ---------------------------------------------------------------------
    def ack(self, generation: int | None = None) -> None:
        """This process has applied `generation` (by default the one it has seen) and run its
        consequences (logs closed, listener down or up)."""
        number = self.seen if generation is None else generation
        os.pwrite(self._applied, str(number).rjust(_WIDTH).encode("ascii"), self.index * _WIDTH)

    def applied(self, processes: int) -> list[int]:
        """Each process's acknowledged generation (0 before its first)."""
        raw = os.pread(self._applied, _WIDTH * processes, 0)
        slots = [raw[i * _WIDTH : (i + 1) * _WIDTH].strip() for i in range(processes)]
        return [int(s) if s.isdigit() else 0 for s in slots]

    def applied_everywhere(self, generation: int) -> bool:
        """Every process has applied `generation` or a later one: none holds what it gave up."""
        return min(self.applied(len(self.cluster.nodes))) >= generation
