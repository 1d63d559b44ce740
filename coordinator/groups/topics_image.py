"""The topics as consumer groups see them: Kafka's metadata image, read from the broker's topics.

One `TopicsImage` per runtime, shared by its shards, read-only over the broker's topic registry
(anything with `all()` listing topics that have name, partitions and topic_id). `refresh()`
compares the registry with the last snapshot and, when a topic was created, deleted or grew,
takes a new snapshot, bumps `version` (Kafka's lastMetadataImageWithNewTopics: stale regexes are
resolved again) and logs which names changed, so each shard can tell its groups what changed
since it last looked (Kafka onNewMetadataImage). Topics are never changed through this view.
Kafka's version is a metadata-log offset, which grows across restarts; ours is the clock's time
(never less than the last version + 1), so a regex resolved before a restart is older than any
image after it, as in Kafka.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from coordinator.groups.consumer.context import TopicMeta
from coordinator.runtime.clock import Clock

_MAX_LOG = 1024  # changes kept for shards that have not looked yet; older ones mean "everything"


class TopicSource(Protocol):
    """May also keep `changes`, a number bumped by every change of its topics: then refresh()
    lists them only when it moved."""

    def all(self) -> Sequence[Any]:
        """Every topic: objects with `name`, `partitions` and `topic_id`."""


class TopicsImage:
    def __init__(self, source: TopicSource | None = None, clock: Clock | None = None) -> None:
        self._source = source
        self._clock = clock
        self._snapshot: list[Any] = []
        self._by_name: dict[str, TopicMeta] = {}
        self._by_id: dict[uuid.UUID, TopicMeta] = {}
        self.version = 0
        self._log: list[tuple[int, frozenset[str]]] = []  # (version, names changed at it)
        self._forgotten = -1  # the newest version dropped from the log
        self._stamp: int | None = None  # the source's `changes` at the last snapshot
        self.refresh()
        self._log.clear()  # what exists at start is no change

    # -- TopicsView --------------------------------------------------------------------------
    def by_name(self, name: str) -> TopicMeta | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> TopicMeta | None:
        return self._by_id.get(topic_id)

    def names(self) -> Iterable[str]:
        return self._by_name.keys()

    # -- following the registry ---------------------------------------------------------------
    def refresh(self) -> None:
        """Take a new snapshot if the registry changed (cheap when it did not)."""
        if self._source is None:
            return
        stamp = getattr(self._source, "changes", None)  # TopicRegistry's change count, if it keeps one
        if stamp is not None and stamp == self._stamp:
            return  # nothing changed: no listing, no comparison (this runs before every group op)
        current = list(self._source.all())
        self._stamp = stamp
        if current == self._snapshot:
            return
        old = self._by_name
        by_name = {t.name: TopicMeta(t.topic_id, t.name, t.partitions) for t in current}
        changed = {name for name in old.keys() | by_name.keys() if old.get(name) != by_name.get(name)}
        self._snapshot = current
        self._by_name = by_name
        self._by_id = {meta.topic_id: meta for meta in by_name.values()}
        if changed:
            now = self._clock.time_ms() if self._clock is not None else 0
            self.version = max(self.version + 1, now)
            self._log.append((self.version, frozenset(changed)))
            if len(self._log) > _MAX_LOG:
                self._forgotten = self._log.pop(0)[0]

    def changed_since(self, version: int) -> frozenset[str] | None:
        """Names changed after `version`; None when the log no longer reaches back that far."""
        if version >= self.version:
            return frozenset()
        if version < self._forgotten:
            return None
        names: set[str] = set()
        for at, changed in self._log:
            if at > version:
                names |= changed
        return frozenset(names)
