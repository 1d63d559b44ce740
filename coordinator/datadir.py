"""The data dir's safety checks, run before anything else touches it (Kafka's meta.properties).

`prepare_data_dir(config, create_topics)` creates the directory if it is missing and then
refuses, with a `DataDirError` saying what to do, a path that is a file, a directory it cannot
create or write, a non-empty directory without kgc's meta file (unless `data.dir.adopt`), a meta
file of another cluster or node (Kafka's MetaPropertiesEnsemble.verify), more user-topic
partitions than `max.partitions`, and more than the open-file limit allows (raising the soft
limit first). `data_dir_lock` holds `.lock` while a server runs. The meta file is
`kgc.meta.properties` in Kafka's meta.properties v1 format (version, cluster.id, node.id,
directory.id): its own name, so a Kafka broker's log dir (whose `meta.properties` says so) is
never mistaken for ours. `refuse_unusable` makes the refusals that need no write, before the
lock is taken.
"""

from __future__ import annotations

import base64
import errno
import fcntl
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coordinator.observe.logs import get_logger, log_event

META_FILE = "kgc.meta.properties"
LOCK_FILE = ".lock"  # Kafka's name: one process per log dir
KAFKA_META_FILE = "meta.properties"
META_VERSION = 1  # Kafka's MetaPropertiesVersion.V1 (KRaft: node.id, cluster.id, directory.id)
_IGNORED = frozenset({"lost+found", LOCK_FILE})  # a fresh file system's root, our own lock
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_INTERNAL = "__"  # __consumer_offsets-N: not counted against max.partitions
FILES_PER_PARTITION = 3  # an open segment holds .log, .index and .timeindex
SPARE_FILES = 256  # sockets, the transcript, the metrics server, Python itself
PROGRESS_FROM = 1000  # partitions: creating fewer takes about a second, not worth a progress line
PROGRESS_SECONDS = 1.0

_log = get_logger("datadir")


class DataDirError(Exception):
    """The data dir cannot be used as it is; the message says why and what to do."""


def prepare_data_dir(config: Any, create_topics: Mapping[str, int] | None = None) -> Path:
    """The data dir, checked and claimed (see the module docstring); raises DataDirError."""
    path = Path(config.data_dir)
    _ensure_directory(path)
    meta = _read_meta(path / META_FILE)
    if meta is None:
        _refuse_foreign(path, adopt=bool(config.data_dir_adopt))
        meta = {
            "version": str(META_VERSION),
            "cluster.id": config.cluster_id,
            "node.id": str(config.node_id),
            "directory.id": _directory_id(),
        }
    else:
        _verify_meta(path, meta, config)
    _write_meta(path, meta)  # every start: proves the directory writable before anything is served
    existing = _user_partitions(path)
    wanted = {name: n for name, n in (create_topics or {}).items() if name not in existing}
    for name, n in (create_topics or {}).items():
        if name in existing and existing[name] != n:
            log_event(
                _log,
                "topic.exists",
                level=logging.WARNING,
                topic=name,
                partitions=existing[name],
                asked=n,
                note="kept as it is: kgc does not change an existing topic's partitions (a creation "
                "cut short keeps those it made)",
            )
    total = sum(existing.values()) + sum(wanted.values())
    if wanted:
        check_partition_cap(config, total, ", ".join(f"{name}:{n}" for name, n in wanted.items()))
    _ensure_open_files(total + config.offsets_topic_num_partitions)
    if sum(wanted.values()) >= PROGRESS_FROM:
        _CreationProgress(path, wanted).start()
    return path


def refuse_unusable(config: Any) -> None:
    """The refusals that need no write: a file, or a non-empty directory that is not kgc's. Run
    before the lock, so a directory kgc refuses is left as it was (no `.lock` in it)."""
    path = Path(config.data_dir)
    if not path.exists():
        return
    _ensure_directory(path)  # a file: refused
    if _read_meta(path / META_FILE) is None:
        _refuse_foreign(path, adopt=bool(config.data_dir_adopt), quiet=True)


def check_partition_cap(config: Any, total: int, creating: str) -> None:
    """Refuse to go beyond `max.partitions` user-topic partitions (also the fixture's create_topic)."""
    if total > config.max_partitions:
        raise DataDirError(
            f"creating {creating} would make {total} user-topic partitions, more than max.partitions="
            f"{config.max_partitions}: create fewer, or raise the cap (--set max.partitions={total}; each "
            f"partition costs about {FILES_PER_PARTITION} open files and a few ms to create and to close)"
        )


# -- the directory -------------------------------------------------------------------------------
@contextmanager
def data_dir_lock(data_dir: str | Path) -> Iterator[Path]:
    """Hold the data dir's `.lock` (flock, as Kafka's LogManager locks each log dir) while the
    block runs: a second server on the same dir, in this process or another, is refused instead of
    writing the same logs. The kernel drops the lock when the process dies, kill -9 included."""
    path = Path(data_dir)
    _ensure_directory(path)
    lock = path / LOCK_FILE
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise DataDirError(f"cannot open {lock}: {_why(exc)}: choose a directory you can write (--data-dir)") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise DataDirError(
                f"data dir {path} is in use by another kgc (pid {holder}): stop it, or choose another --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock


def _ensure_directory(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise DataDirError(
            f"data dir {path} is a file, not a directory: name a directory (--data-dir; it is created if missing)"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(
            f"cannot create data dir {path}: {_why(exc)}: choose a directory you can write (--data-dir)"
        ) from None


def _refuse_foreign(path: Path, adopt: bool, quiet: bool = False) -> None:
    """`quiet`: refuse only; what is adopted or claimed is logged by the call that claims it."""
    entries = sorted(e.name for e in os.scandir(path) if e.name not in _IGNORED)
    if not entries or adopt:
        if entries and not quiet:
            log_event(_log, "datadir.adopted", data_dir=str(path), entries=len(entries))
        return
    kafka = _read_meta(path / KAFKA_META_FILE)
    if kafka is not None:
        raise DataDirError(
            f"data dir {path} is a Kafka broker's log dir (meta.properties: cluster.id="
            f"{kafka.get('cluster.id', '?')}, node.id={kafka.get('node.id', kafka.get('broker.id', '?'))}): "
            "kgc does not write into it; choose another --data-dir, or pass --adopt-data-dir "
            "to use it anyway (kgc may rewrite what it finds there)"
        )
    if (path / "__consumer_offsets-0" / "partition.metadata").is_file():
        # written by a kgc from before the meta file: __consumer_offsets is there and no Kafka
        # meta.properties, so it is ours; claimed without asking (./data of an earlier checkout)
        if not quiet:
            log_event(
                _log, "datadir.claimed", data_dir=str(path), reason="a kgc data dir from before kgc.meta.properties"
            )
        return
    shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
    raise DataDirError(
        f"data dir {path} is not empty ({shown}) and kgc did not create it (no {META_FILE}): "
        "choose an empty or new directory, or pass --adopt-data-dir to use this one "
        "(kgc may rewrite or truncate what it finds there)"
    )


def _why(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.ENOENT:
        return f"{exc.filename or 'a parent'} cannot be created"
    if exc.errno == errno.ENOTDIR:
        return "a parent is a file"
    return exc.strerror or str(exc)


# -- the meta file -------------------------------------------------------------------------------
def _read_meta(path: Path) -> dict[str, str] | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DataDirError(f"cannot read {path}: {_why(exc)}") from None
    meta = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith(("#", "!")):
            meta[name.strip()] = value.strip()
    return meta


def _verify_meta(path: Path, meta: dict[str, str], config: Any) -> None:
    where = path / META_FILE
    if meta.get("version") != str(META_VERSION):
        raise DataDirError(
            f"{where} has version {meta.get('version')!r}; this kgc reads version {META_VERSION}: "
            "use a kgc that wrote it, or another --data-dir"
        )
    if meta.get("cluster.id") != str(config.cluster_id):
        raise DataDirError(
            f"{where} belongs to cluster.id {meta.get('cluster.id')!r}, not {config.cluster_id!r} "
            f"(as Kafka, kgc refuses to mix clusters): set cluster.id={meta.get('cluster.id')} "
            "or use another --data-dir"
        )
    if meta.get("node.id") != str(config.node_id):
        raise DataDirError(
            f"{where} was written by node.id {meta.get('node.id')}, not {config.node_id} (as "
            f"Kafka, kgc refuses a moved node's data): set node.id={meta.get('node.id')} "
            "or use another --data-dir"
        )
    if not meta.get("directory.id"):
        meta["directory.id"] = _directory_id()


def _directory_id() -> str:
    """A random Kafka Uuid as Uuid.toString writes it (URL-safe base64, no padding); uuid4's
    version bits keep it clear of the reserved ids, which all start with fifteen zero bytes."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


def _write_meta(path: Path, meta: dict[str, str]) -> None:
    """Kafka's PropertiesUtils.writePropertiesFile: a temporary file, fsync, rename, fsync the dir."""
    text = "#kgc data dir: written by kgc serve at every start (Kafka's meta.properties format)\n"
    text += "".join(f"{key}={meta[key]}\n" for key in sorted(meta))
    target = path / META_FILE
    tmp = path / (META_FILE + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        dir_fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        raise DataDirError(
            f"data dir {path} is not writable ({_why(exc)}): choose a directory you can "
            "write (--data-dir), or make this one writable"
        ) from None


# -- partitions and open files -------------------------------------------------------------------
def _user_partitions(path: Path) -> dict[str, int]:
    """Topic -> partitions found in the data dir (as TopicRegistry.load counts them)."""
    found: dict[str, int] = {}
    for entry in os.scandir(path):
        match = _PARTITION_DIR.match(entry.name)
        if match and not entry.name.startswith(_INTERNAL) and entry.is_dir():
            topic = match["topic"]
            found[topic] = max(found.get(topic, 0), int(match["partition"]) + 1)
    return found


def _ensure_open_files(partitions: int) -> None:
    """Raise the soft open-file limit as far as needed (up to the hard limit), as Kafka's docs ask
    of its operators; refuse when even the hard limit is too low."""
    try:
        import resource
    except ImportError:  # not on this platform: nothing to check
        return
    needed = partitions * FILES_PER_PARTITION + SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise DataDirError(
            f"{partitions} partitions need about {needed} open files and the limit is {hard} "
            f"(ulimit -Hn): raise it (e.g. ulimit -n {needed}) or create fewer partitions"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    log_event(_log, "datadir.open_files", limit=needed, was=soft)


class _CreationProgress(threading.Thread):
    """Logs `topic.creating` once a second while TopicRegistry creates large topics (it has no
    progress hook of its own; it creates partition dirs in order, each with its partition.metadata
    last, so the highest finished one counts them). Ends when all exist or nothing moved for 5 s."""

    def __init__(self, path: Path, wanted: Mapping[str, int]) -> None:
        super().__init__(name="kgc-create-progress", daemon=True)
        self.path, self.wanted = path, dict(wanted)

    def run(self) -> None:
        start, done_before, idle = time.monotonic(), -1, 0
        total = sum(self.wanted.values())
        while idle < 5:
            time.sleep(PROGRESS_SECONDS)
            done = sum(self._created(name, n) for name, n in self.wanted.items())
            idle = idle + 1 if done == done_before else 0
            done_before = done
            elapsed = time.monotonic() - start
            if done >= total:
                log_event(_log, "topic.created", partitions=total, seconds=f"{elapsed:.1f}")
                return
            rate = done / elapsed if elapsed else 0
            left = f"{(total - done) / rate:.0f}" if rate else "?"
            log_event(
                _log,
                "topic.creating",
                topics=",".join(self.wanted),
                partitions=f"{done}/{total}",
                seconds_left=left,
                stop="Ctrl-C or SIGTERM stops it",
            )

    def _created(self, name: str, n: int) -> int:
        """Partitions 0..k-1 of `name` finished (binary search on partition.metadata)."""
        low, high = 0, n  # invariant: 0..low-1 exist, high..n-1 do not
        while low < high:
            mid = (low + high) // 2
            if (self.path / f"{name}-{mid}" / "partition.metadata").exists():
                low = mid + 1
            else:
                high = mid
        return low
