"""Crash-safe JSON files of the data dir (ACLs, SCRAM credentials): whole-file replace only.

`write_json` writes `<name>.tmp` (mode 0600: the files may hold salted credentials), fsyncs it,
renames it over `<name>` and fsyncs the directory, the protocol of Kafka's checkpoint files: after
a crash (kill -9 included) the file is either the old or the new version, never a mix; a stale
`.tmp` is ignored and replaced. Reading (`read_shared`) gives None for a missing file and raises
`StoreError` for an unreadable one, so a damaged file stops the server instead of silently
dropping ACLs (which could let everyone in).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from coordinator.cluster.shared_file import SharedFile
from coordinator.datadir import DataDirError
from storage.fsutil import fsync, fsync_dir, write_all


class StoreError(DataDirError):
    """A security file of the data dir cannot be read; the text names the file."""


def write_json(path: Path, value: Any) -> None:
    data = json.dumps(value, indent=1, sort_keys=True).encode() + b"\n"
    if not path.parent.is_dir():  # the data dir's security/ directory, made on first use
        path.parent.mkdir(mode=0o700)
        fsync_dir(path.parent.parent)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            write_all(fd, data)
            fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    fsync_dir(path.parent)


def read_shared(file: SharedFile) -> Any | None:
    """The JSON of a store's file (None: no file yet); StoreError if unreadable or damaged."""
    try:
        raw = file.read()
    except OSError as exc:
        raise StoreError(f"cannot read {file.path}: {exc.strerror or exc}") from None
    return None if raw is None else parse_json(file.path, raw)


def write_shared(file: SharedFile, value: Any) -> None:
    write_json(file.path, value)
    file.wrote()


def parse_json(path: Path, raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"{path} is damaged ({exc}); restore it or remove it to start without it") from None
