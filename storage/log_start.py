"""The log start offset of a partition that DeleteRecords moved inside its first segment: Kafka's
`log-start-offset-checkpoint`, here one file per partition dir (as the recovery point is).

Text in Kafka's OffsetCheckpointFile format (`0`, `1`, `<topic> <partition> <offset>`), written
with `fsutil.atomic_write` (temp file, fsync, rename, dir fsync) before the new start is served,
so a start offset a client was told survives kill -9. Missing or unreadable = 0 (the first
segment's base offset then rules, as it does for a log DeleteRecords never touched).
"""

from __future__ import annotations

import logging
import os

from . import fsutil

__all__ = ["LOG_START_FILE", "read_log_start", "write_log_start"]

LOG_START_FILE = "log-start-offset-checkpoint"  # Kafka's name (per data dir there)

_log = logging.getLogger(__name__)


def read_log_start(directory: str) -> int:
    path = os.path.join(directory, LOG_START_FILE)
    try:
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return 0
    except (OSError, UnicodeDecodeError):
        _log.warning("ignoring unreadable %s; the first segment's base offset is the log start", path)
        return 0
    try:
        if lines[0].strip() != "0" or int(lines[1]) != 1:
            raise ValueError("unsupported version or count")
        offset = int(lines[2].split()[-1])
        if offset < 0:
            raise ValueError("negative offset")
        return offset
    except (ValueError, IndexError):
        _log.warning("ignoring unreadable %s; the first segment's base offset is the log start", path)
        return 0


def write_log_start(directory: str, offset: int) -> None:
    name = os.path.basename(os.path.abspath(directory))
    topic, sep, partition = name.rpartition("-")
    if not sep or not partition.isdigit():
        topic, partition = name, "0"
    fsutil.atomic_write(
        os.path.join(directory, LOG_START_FILE), f"0\n1\n{topic} {partition} {offset}\n".encode("ascii")
    )
