"""The topic registry: which topics exist, with how many partitions, which topic id and configs.

The data dir is the truth, as in Kafka: a topic is its partition dirs `<topic>-<n>/`, each holding
`partition.metadata` (Kafka's PartitionMetadataFile: `version: 0`, the topic id in base64) and,
if created with configs, `topic.properties` (topic_config.py), written first; all fsynced before
`create` returns, and completed on the next start if cut short. Deleting renames each dir to
`<dir>.<id>-delete` (Kafka's naming) first; load finishes such deletions. A topic's count is
its highest partition dir + 1, so `create` and `grow` make the highest dir first and fsync the data
dir (the commit point: a crash after it comes back with every partition, completed at load).
Partition 0's `topic.properties` is the truth about a topic's configs (`set_configs`). Internal topics
(`__consumer_offsets`) are registered by the coordinator, not listed from disk here. Each topic's
replication factor (which Kafka keeps in its cluster metadata) is kept in one file at the data
dir's root, `replication-factors.properties` (`name=factor`); a topic missing there has 1.
With cluster.processes a deletion marks each dir (`topic.deleted`) and the process that leads it
removes it (`mark_deleted`, `remove_dirs`): a topic with a marked dir is gone.
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coordinator.broker.topic_config import CONFIG_FILE, format_properties, read_overrides

_log = logging.getLogger(__name__)
MAX_TOPIC_NAME_LENGTH = 249  # Kafka's Topic.MAX_NAME_LENGTH
_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
DELETE_SUFFIX = "-delete"  # Kafka's LocalLog.DeleteDirSuffix
METADATA_FILE = "partition.metadata"
DELETED_MARKER = "topic.deleted"  # cluster.processes: this incarnation was deleted; its owner removes the dir
REPLICATION_FILE = "replication-factors.properties"
INTERNAL_PREFIX = ("__consumer_offsets", "__transaction_state", "__share_group_state")  # the runtimes' dirs


class InvalidTopicError(ValueError):
    """A topic name or partition count that Kafka would refuse (INVALID_TOPIC_EXCEPTION)."""


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    partitions: int
    topic_id: uuid.UUID  # never all zero (Kafka's Uuid.ZERO_UUID means 'no id')
    internal: bool = False
    configs: tuple[tuple[str, str], ...] = ()  # CreateTopics overrides, sorted by name
    replication_factor: int = 1

    @property
    def topic_id_text(self) -> str:
        return encode_topic_id(self.topic_id.bytes)


def encode_topic_id(raw: bytes) -> str:
    """Kafka's `Uuid.toString`: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_topic_id(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def validate_topic_name(name: str) -> None:
    """Kafka's `Topic.validate`: 1..249 chars of [a-zA-Z0-9._-], not '.' or '..'."""
    if not name:
        raise InvalidTopicError("topic name is empty")
    if name in (".", ".."):
        raise InvalidTopicError(f"topic name cannot be {name!r}")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(f"topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters")
    if not _LEGAL_NAME.match(name):
        raise InvalidTopicError(f"topic name {name!r} has characters outside [a-zA-Z0-9._-]")


def new_topic_id() -> uuid.UUID:
    return uuid.uuid4()  # version bits make it never all zero


class TopicRegistry:
    """Topics in one data dir; `create` persists, `load` rediscovers after a restart."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._topics: dict[str, Topic] = {}
        # Bumped by every change of `_topics`: a reader that saw this number has seen them all
        # (TopicsImage.refresh compares it instead of every topic, once per group operation).
        self.changes = 0
        self._by_id: dict[uuid.UUID, Topic] = {}
        self._ids_at = -1  # `changes` when _by_id was built

    def load(self) -> None:
        if self.data_dir.is_dir():
            for entry in self.data_dir.iterdir():
                if entry.is_dir() and entry.name.endswith(DELETE_SUFFIX):
                    shutil.rmtree(entry, ignore_errors=True)  # finish a deletion cut short
        for name, topic in self._scan(finish_deletions=True)[0].items():
            # Complete a topic whose creation was cut short: every partition dir and id file.
            self._write_partition_dirs(topic)
            self._topics[name] = topic
            self.changes += 1

    def _scan(self, finish_deletions: bool = False) -> tuple[dict[str, Topic], set[str]]:
        """(the user topics as the data dir holds them, the names with dirs marked deleted). A
        topic with a partition dir marked deleted (`DELETED_MARKER`, cluster.processes: the other
        dirs' leaders have not removed theirs yet) is gone; `finish_deletions` removes its dirs."""
        found: dict[str, set[int]] = {}
        ids: dict[str, uuid.UUID] = {}
        configs: dict[str, dict[str, str]] = {}
        deleted: set[str] = set()
        if self.data_dir.is_dir():
            for item in os.scandir(self.data_dir):  # its entries' types come with the listing
                match = _PARTITION_DIR.match(item.name)
                if not match or item.name.startswith(INTERNAL_PREFIX) or not item.is_dir():
                    continue
                entry = Path(item.path)
                topic = match["topic"]
                if (entry / DELETED_MARKER).exists():
                    deleted.add(topic)
                    continue
                found.setdefault(topic, set()).add(int(match["partition"]))
                if topic not in ids:  # one id file per topic: every partition's holds the same
                    topic_id = _read_topic_id(entry / METADATA_FILE)
                    if topic_id is not None:
                        ids[topic] = topic_id
                if match["partition"] == "0":
                    configs[topic] = read_overrides(entry)  # partition 0's file is the truth
        if finish_deletions:
            for name in deleted:
                self.remove_dirs(name, lambda partition: True, only_marked=False)
        factors = _read_factors(self.data_dir / REPLICATION_FILE)
        topics = {
            name: Topic(
                name,
                max(partitions) + 1,
                ids.get(name) or new_topic_id(),
                configs=tuple(sorted(configs.get(name, {}).items())),
                replication_factor=factors.get(name, 1),
            )
            for name, partitions in found.items()
            if name not in deleted
        }
        return topics, deleted

    def remove_dirs(self, name: str, mine: Callable[[int], bool], only_marked: bool = True) -> None:
        """Removes the partition dirs of deleted topic `name` that `mine(partition)` accepts and
        that are marked deleted (unless not `only_marked`: `load` finishing a deletion cut short),
        renamed first (Kafka's `-delete` naming) so a crash midway leaves them to `load`."""
        doomed = []
        for entry in self.data_dir.iterdir():
            match = _PARTITION_DIR.match(entry.name)
            if not match or match["topic"] != name or not mine(int(match["partition"])):
                continue
            if not only_marked or (entry / DELETED_MARKER).exists():
                target = entry.with_name(f"{entry.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}")
                try:
                    entry.rename(target)
                except FileNotFoundError:  # another process of the cluster removed it first
                    continue
                doomed.append(target)
        if doomed:
            _fsync_dir(self.data_dir)
        for target in doomed:
            shutil.rmtree(target, ignore_errors=True)

    def catch_up(self) -> bool:
        """Learn what other processes changed in the data dir (whether they had): nothing to
        learn in one process (cluster.processes uses coordinator/cluster/shared_topics.py)."""
        return False

    def register_internal(self, topic: Topic) -> None:
        self._topics[topic.name] = topic
        self.changes += 1

    def get(self, name: str) -> Topic | None:
        return self._topics.get(name)

    def has_partition(self, name: str, index: int) -> bool:
        topic = self.get(name)
        return topic is not None and 0 <= index < topic.partitions

    def all(self) -> list[Topic]:
        return sorted(self._topics.values(), key=lambda t: t.name)

    def user_partitions(self) -> int:
        """Partitions of the topics that are not internal: what `max.partitions` caps."""
        return sum(t.partitions for t in self._topics.values() if not t.internal)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        """Fetch v13+ and the share APIs ask per topic per request: an index, rebuilt on change."""
        if self._ids_at != self.changes:
            self._by_id = {t.topic_id: t for t in self._topics.values()}
            self._ids_at = self.changes
        return self._by_id.get(topic_id)

    def create(
        self, name: str, partitions: int, configs: dict[str, str] | None = None, replication_factor: int = 1
    ) -> Topic:
        validate_topic_name(name)
        if partitions < 1:
            raise InvalidTopicError(f"partition count must be at least 1, got {partitions}")
        if name in self._topics:
            raise FileExistsError(f"topic {name!r} already exists")
        topic = Topic(
            name,
            partitions,
            new_topic_id(),
            configs=tuple(sorted((configs or {}).items())),
            replication_factor=replication_factor,
        )
        if replication_factor != 1:
            self._write_factors({**self._factors(), name: replication_factor})
        self._write_partition_dirs(topic)
        self._topics[name] = topic
        self.changes += 1
        return topic

    def grow(self, name: str, partitions: int) -> Topic:
        """Adds partitions to an existing topic (CreatePartitions): the new partitions' dirs get
        the topic's id and configs; the caller checked that `partitions` is an increase."""
        topic = self._topics[name]
        if partitions <= topic.partitions:
            raise InvalidTopicError(f"topic {name!r} has {topic.partitions} partitions: {partitions} is no increase")
        grown = dataclasses.replace(topic, partitions=partitions)
        self._write_partition_dirs(grown)
        self._topics[name] = grown
        self.changes += 1
        return grown

    def set_configs(self, name: str, configs: dict[str, str]) -> Topic:
        """Replaces a topic's config overrides (AlterConfigs): `topic.properties` is rewritten in
        every partition dir, partition 0's first: `load` takes partition 0's file as the truth
        and copies it to the others, so a crash part-way leaves the old or the new set whole.
        Partition 0's write is the commit point: an OSError there changes nothing; one for a
        later partition is logged and left to `load` to complete."""
        topic = self._topics[name]
        changed = dataclasses.replace(topic, configs=tuple(sorted(configs.items())))
        text = format_properties(configs)
        _write_durably(self.partition_dir(name, 0) / CONFIG_FILE, text)
        self._topics[name] = changed
        self.changes += 1
        for partition in range(1, topic.partitions):
            try:
                _write_durably(self.partition_dir(name, partition) / CONFIG_FILE, text)
            except OSError as exc:
                _log.warning(
                    "%s-%d: topic.properties not rewritten (%s); completed at the next start", name, partition, exc
                )
        return changed

    def delete(self, name: str) -> Topic:
        """Forgets the topic and removes its dirs (the caller closed its logs first)."""
        topic = self._topics.pop(name)
        self.changes += 1
        if topic.replication_factor != 1:
            self._write_factors({n: f for n, f in self._factors().items() if n != name})
        doomed = []
        for partition in range(topic.partitions):
            directory = self.partition_dir(name, partition)
            if directory.exists():
                target = directory.with_name(f"{directory.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}")
                directory.rename(target)
                doomed.append(target)
        _fsync_dir(self.data_dir)  # from here the deletion survives a crash
        for target in doomed:
            shutil.rmtree(target, ignore_errors=True)
        return topic

    def mark_deleted(self, name: str) -> Topic:
        """Deletion when other processes may hold some of the topic's logs open (cluster.processes):
        forgets the topic and marks every partition dir deleted (the first mark is the commit
        point: `_scan` drops a topic with any marked dir), leaving each dir to the process that
        leads it (`remove_dirs`), which closes its log first."""
        topic = self._topics.pop(name)
        self.changes += 1
        if topic.replication_factor != 1:
            self._write_factors({n: f for n, f in self._factors().items() if n != name})
        for partition in range(topic.partitions):
            directory = self.partition_dir(name, partition)
            if directory.is_dir():
                _write_durably(directory / DELETED_MARKER, "")
        return topic

    def pending_deletion(self, name: str) -> bool:
        """Whether dirs of a deleted incarnation of `name` remain (cluster.processes: a process
        has not closed its log of it yet); the name cannot be created again until they are gone."""
        return any(
            (match := _PARTITION_DIR.match(entry.name)) is not None and match["topic"] == name
            for entry in self.data_dir.iterdir()
        )

    def ensure(self, name: str, partitions: int, replication_factor: int = 1) -> Topic:
        """Creates the topic only where it is missing (for `--create-topic` on restart)."""
        existing = self._topics.get(name)
        return existing if existing is not None else self.create(name, partitions, None, replication_factor)

    def _factors(self) -> dict[str, int]:
        return {
            t.name: t.replication_factor for t in self._topics.values() if not t.internal and t.replication_factor != 1
        }

    def _write_factors(self, factors: dict[str, int]) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        _write_durably(
            self.data_dir / REPLICATION_FILE, "".join(f"{name}={factor}\n" for name, factor in sorted(factors.items()))
        )

    def partition_dir(self, name: str, partition: int) -> Path:
        return self.data_dir / f"{name}-{partition}"

    def _write_partition_dirs(self, topic: Topic) -> None:
        # Partition 0 first (its topic.properties is the configs' truth), then the last dir (the
        # count's commit point), each made durable before the others; then the rest.
        properties = format_properties(dict(topic.configs))
        order = dict.fromkeys([0, topic.partitions - 1, *range(1, topic.partitions - 1)])
        for step, partition in enumerate(order):
            directory = self.partition_dir(topic.name, partition)
            created = not directory.is_dir()
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / CONFIG_FILE
            if (topic.configs or path.exists()) and _read_text(path) != properties:
                _write_durably(path, properties)  # missing, or left behind by a cut-short change
            path = directory / METADATA_FILE
            if not path.exists():
                _write_durably(path, f"version: 0\ntopic_id: {topic.topic_id_text}\n")
            if step < 2 and created:
                _fsync_dir(self.data_dir)
        _fsync_dir(self.data_dir)


def _read_factors(path: Path) -> dict[str, int]:
    factors: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except (OSError, ValueError):
        return factors
    for line in lines:
        name, _, value = line.partition("=")
        if value.strip().isdigit():
            factors[name.strip()] = int(value)
    return factors


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def _read_topic_id(path: Path) -> uuid.UUID | None:
    try:
        for line in path.read_text(encoding="ascii").splitlines():
            if line.startswith("topic_id:"):
                raw = decode_topic_id(line.split(":", 1)[1].strip())
                return uuid.UUID(bytes=raw) if len(raw) == 16 and any(raw) else None
    except (OSError, ValueError):
        return None
    return None


def _write_durably(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="ascii") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
