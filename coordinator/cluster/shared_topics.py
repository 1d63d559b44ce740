"""cluster.processes: the data dir's topics, shared by every broker process.

Kafka's brokers replay one metadata log; here the records are kgc's own persistent form of a topic
(its partition dirs, broker/topics.py) and `topics.generation` in the data dir numbers the changes.
A process creates, grows, deletes or reconfigures a topic under an exclusive flock of that file, after reading
what the others did; the dirs are fsynced and the number bumped before it answers. Every process
catches up (rescans the dirs under a shared flock) when the number moved: on a name it does not
know, on every Metadata or topic admin request, and every CHECK_INTERVAL_S (TopicSync). Until then
it answers from what it knew, as a Kafka broker does while metadata propagates. A deleted topic's
dirs are marked; each leader closes its log and removes its dirs when it catches up, and the name
can be created again once every dir is gone (TopicPendingDeletion until then).
"""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import trio

from coordinator.broker.topics import Topic, TopicRegistry
from coordinator.cluster.cluster import BrokerNode
from coordinator.groups.placement import java_string_hash, kafka_abs

GENERATION_FILE = "topics.generation"
CHECK_INTERVAL_S = 0.1  # the longest a process answers from a stale view of the topics
_WIDTH = 20  # the number's bytes: written in place at one width, so a reader sees it whole


class TopicPendingDeletion(FileExistsError):
    """Dirs of a deleted incarnation of the name remain: a process has not closed its log yet."""


def static_leader(name: str, partition: int, node_ids: list[int]) -> int:
    """The leader every process computes for a user topic's partition (cluster.py's placement,
    all brokers up: the first replica of Kafka's assignment, which depends on the name alone)."""
    ids = sorted(node_ids)
    return ids[(partition + kafka_abs(java_string_hash(name)) % len(ids)) % len(ids)]


def shared_registry(data_dir: Path, nodes: Sequence[BrokerNode], me: int) -> SharedTopicRegistry:
    """The registry of the process serving broker `nodes[me]` alone."""
    ids = [node.node_id for node in nodes]
    node_id = ids[me]
    return SharedTopicRegistry(
        data_dir, GenerationFile(data_dir), lambda name, partition: static_leader(name, partition, ids) == node_id
    )


class GenerationFile:
    """`topics.generation` (or another name): the number of changes, and the lock that orders them."""

    def __init__(self, data_dir: Path, name: str = GENERATION_FILE) -> None:
        # A file object (closed when the registry goes), used through its descriptor.
        self._file = os.fdopen(os.open(data_dir / name, os.O_RDWR | os.O_CREAT, 0o644), "r+b", buffering=0)
        self._fd = self._file.fileno()

    def close(self) -> None:
        self._file.close()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._locked(fcntl.LOCK_EX):
            yield

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._locked(fcntl.LOCK_SH):
            yield

    @contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        fcntl.flock(self._fd, mode)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def read(self) -> int:
        """The number now, with or without the lock: it is written in place by one pwrite, and a
        torn read outside the lock could only make a caller rescan (under the lock) for nothing."""
        text = os.pread(self._fd, _WIDTH, 0).strip()
        return int(text) if text.isdigit() else 0

    def bump_locked(self) -> int:
        """One more change (the caller holds the exclusive lock); returns the new number."""
        generation = self.read() + 1
        os.pwrite(self._fd, str(generation).rjust(_WIDTH).encode("ascii"), 0)
        return generation


class SharedTopicRegistry(TopicRegistry):
    """The registry of one broker process: changes go through the generation file; `get` of an
    unknown name and `catch_up` read the others' changes. `gone` collects the topics that
    disappeared (or were replaced) by catching up, for TopicSync to close their logs."""

    def __init__(self, data_dir: Path, generation: GenerationFile, leads: Callable[[str, int], bool]) -> None:
        super().__init__(data_dir)
        self.generation = generation
        self.leads = leads  # whether this process leads (so owns the dir of) a user topic's partition
        self.gone: list[Topic] = []
        self.reconfigured: list[Topic] = []  # topics whose overrides another process changed
        self.marked: set[str] = set()  # names with dirs marked deleted, seen by catching up
        self._seen = -1

    def load(self) -> None:
        with self.generation.shared():
            self._seen = self.generation.read()
            super().load()

    def get(self, name: str) -> Topic | None:
        topic = self._topics.get(name)
        if topic is None and self.catch_up():
            topic = self._topics.get(name)
        return topic

    def catch_up(self) -> bool:
        """Rescan the data dir if another process changed it; returns whether it had."""
        if self.generation.read() == self._seen:
            return False
        with self.generation.shared():
            self._refresh_locked()
        return True

    def _refresh_locked(self) -> None:
        self._seen = self.generation.read()
        found, marked = self._scan()
        self.marked |= marked
        changed = False
        for name, known in list(self._topics.items()):
            if known.internal:
                continue
            now = found.get(name)
            if now is None or now.topic_id != known.topic_id:
                del self._topics[name]
                self.gone.append(known)
                changed = True
        for name, topic in found.items():
            before = self._topics.get(name)
            if before != topic:
                if before is not None and before.topic_id == topic.topic_id and before.configs != topic.configs:
                    self.reconfigured.append(topic)
                self._topics[name] = topic
                changed = True
        if changed:
            self.changes += 1

    @contextmanager
    def _changing(self) -> Iterator[None]:
        """Exclusive: the others' changes first, ours next, then the number moves."""
        with self.generation.exclusive():
            if self.generation.read() != self._seen:
                self._refresh_locked()
            yield
            self._seen = self.generation.bump_locked()

    def create(
        self, name: str, partitions: int, configs: dict[str, str] | None = None, replication_factor: int = 1
    ) -> Topic:
        with self._changing():
            if name in self._topics:
                raise FileExistsError(f"topic {name!r} already exists")
            if self.pending_deletion(name):
                raise TopicPendingDeletion(f"topic {name!r} is marked for deletion")
            return super().create(name, partitions, configs, replication_factor)

    def grow(self, name: str, partitions: int) -> Topic:
        with self._changing():
            return super().grow(name, partitions)

    def delete(self, name: str) -> Topic:
        """Marks the topic deleted and removes the dirs this process leads (whose logs its
        DataPath closed); the other leaders remove theirs when they catch up. KeyError if
        another process deleted it first."""
        with self._changing():
            topic = self.mark_deleted(name)
        self.remove_dirs(name, partial(self.leads, name))
        return topic

    def set_configs(self, name: str, configs: dict[str, str]) -> Topic:
        """The overrides are rewritten in every partition dir (those other processes lead too:
        `topic.properties` is no log file); the others reconfigure their logs on catching up.
        KeyError if another process deleted the topic first."""
        with self._changing():
            return super().set_configs(name, configs)


class ClosesTopics(Protocol):
    def close_topic(self, name: str, topic_id: uuid.UUID) -> None: ...
    def reconfigure_topic(self, name: str) -> None: ...


class TopicSync:
    """A broker process's periodic catch-up: learns the others' topic changes, closes its logs of
    the topics that went away and removes the dirs it leads of the deleted ones (those of topics
    it never knew too: created and deleted between two checks)."""

    def __init__(self, topics: SharedTopicRegistry, data: ClosesTopics) -> None:
        self.topics, self.data = topics, data

    def tick(self) -> list[str]:
        """One check; returns the names whose logs were closed."""
        self.topics.catch_up()
        gone, self.topics.gone = self.topics.gone, []
        marked, self.topics.marked = self.topics.marked, set()
        reconfigured, self.topics.reconfigured = self.topics.reconfigured, []
        for topic in reconfigured:  # another process altered its configs: this one's logs follow
            self.data.reconfigure_topic(topic.name)
        for topic in gone:
            self.data.close_topic(topic.name, topic.topic_id)
        for name in marked | {t.name for t in gone}:  # only marked dirs go: never a new incarnation's
            self.topics.remove_dirs(name, partial(self.topics.leads, name))
        return [t.name for t in gone]

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await trio.sleep(CHECK_INTERVAL_S)
            self.tick()
