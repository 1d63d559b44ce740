"""DescribeLogDirs' facts: the one log dir of a kgc process and, for one broker, the size of every
partition it holds a replica of (replicas are logical: one copy of each log in the data dir
serves every broker that holds a replica). Sizes are the bytes of the partition's segment files,
from its open Log, else read from the directory (a log this process does not open); the dir's
total and usable bytes come from the file system (KIP-827, v4).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path

from coordinator.broker.data_path import DataPath
from coordinator.cluster.cluster import Cluster


@dataclass(frozen=True, slots=True)
class LogDir:
    path: str
    partitions: dict[str, list[tuple[int, int]]]  # topic -> [(partition, size in bytes)]
    total_bytes: int
    usable_bytes: int


def describe_log_dir(data: DataPath, cluster: Cluster, node_id: int, wanted: Mapping[str, Set[int]] | None) -> LogDir:
    """`wanted`: topic -> partitions asked for (None: every partition this broker holds)."""
    root = Path(data.topics.data_dir).resolve()
    partitions: dict[str, list[tuple[int, int]]] = {}
    for topic in data.topics.all():
        if wanted is not None and topic.name not in wanted:
            continue
        for index in range(topic.partitions):
            if wanted is not None and index not in wanted[topic.name]:
                continue
            lead = cluster.leadership(topic.name, index)
            if lead is None or node_id not in lead.replicas:
                continue
            log = data.logs.get(topic.name, index)
            size = log.size_bytes if log is not None and not log.closed else _dir_size(root / f"{topic.name}-{index}")
            partitions.setdefault(topic.name, []).append((index, size))
    usage = shutil.disk_usage(root)
    return LogDir(str(root), partitions, usage.total, usage.free)


def _dir_size(directory: Path) -> int:
    try:
        return sum(entry.stat().st_size for entry in os.scandir(directory) if entry.name.endswith(".log"))
    except OSError:
        return 0
