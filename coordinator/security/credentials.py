"""The SCRAM credentials of every user, persisted in the data dir as Kafka keeps them.

One entry per (user, mechanism): salt, StoredKey, ServerKey, iterations (scram.py); never a
password. Every change rewrites `security/scram-credentials.json` crash-safely (files.py) before
it is visible, so an acknowledged AlterUserScramCredentials survives kill -9. Shared by every
broker of the process, and with cluster.processes by every broker process through the file
(cluster/shared_file.py), as Kafka's metadata image is cluster-wide.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING

from coordinator.cluster.shared_file import SharedFile
from coordinator.security.files import StoreError, read_shared, write_shared

if TYPE_CHECKING:
    from coordinator.security.scram import ScramCredential

FILE_NAME = "scram-credentials.json"


class CredentialStore:
    def __init__(self, path: Path | None, *, shared: bool = False) -> None:
        """`path`: the file (None: in memory only, for unit tests); `shared`: other broker
        processes change it too (cluster.processes)."""
        self._file = None if path is None else SharedFile(path, shared=shared)
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        self._load()

    def lookup(self, user: str, mechanism: str) -> ScramCredential | None:
        self.follow()  # (once per SCRAM authentication: off the request path)
        return self._credentials.get((user, mechanism))

    def users(self) -> dict[str, dict[str, int]]:
        """user -> mechanism -> iterations (what DescribeUserScramCredentials shows)."""
        self.follow()
        found: dict[str, dict[str, int]] = {}
        for (user, mechanism), credential in sorted(self._credentials.items()):
            found.setdefault(user, {})[mechanism] = credential.iterations
        return found

    def apply(self, upserts: dict[tuple[str, str], ScramCredential], deletions: list[tuple[str, str]]) -> None:
        """One alteration, all of it persisted before any of it is seen (made on the newest
        credentials, alone among the processes sharing them)."""
        if self._file is None:
            self._credentials = _altered(self._credentials, upserts, deletions)
            return
        with self._file.locked():
            self.follow()
            changed = _altered(self._credentials, upserts, deletions)
            write_shared(self._file, _encode(changed))
            self._credentials = changed

    def follow(self) -> None:
        """Take up what another broker process changed (cluster.processes)."""
        if self._file is not None and self._file.changed():
            self._load()

    def _load(self) -> None:
        if self._file is None:
            return
        raw = read_shared(self._file)
        loaded: dict[tuple[str, str], ScramCredential] = {}
        if raw is not None:
            from coordinator.security.scram import MECHANISM_TYPES, ScramCredential  # only with credentials to load

            try:
                for entry in raw["credentials"]:
                    mechanism = entry["mechanism"]
                    if mechanism not in MECHANISM_TYPES:
                        raise ValueError(mechanism)
                    loaded[(entry["user"], mechanism)] = ScramCredential(
                        base64.b64decode(entry["salt"]),
                        base64.b64decode(entry["stored_key"]),
                        base64.b64decode(entry["server_key"]),
                        int(entry["iterations"]),
                    )
            except (KeyError, TypeError, ValueError) as exc:
                raise StoreError(f"{self._file.path} is damaged ({exc!r})") from None
        self._credentials = loaded


def _altered(
    credentials: dict[tuple[str, str], ScramCredential],
    upserts: dict[tuple[str, str], ScramCredential],
    deletions: list[tuple[str, str]],
) -> dict[tuple[str, str], ScramCredential]:
    changed = dict(credentials)
    for key in deletions:
        changed.pop(key, None)
    changed.update(upserts)
    return changed


def _encode(credentials: dict[tuple[str, str], ScramCredential]) -> dict[str, object]:
    return {
        "version": 1,
        "credentials": [
            {
                "user": user,
                "mechanism": mechanism,
                "salt": base64.b64encode(c.salt).decode(),
                "stored_key": base64.b64encode(c.stored_key).decode(),
                "server_key": base64.b64encode(c.server_key).decode(),
                "iterations": c.iterations,
            }
            for (user, mechanism), c in sorted(credentials.items())
        ],
    }
