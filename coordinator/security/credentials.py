"""The SCRAM credentials of every user, persisted in the data dir as Kafka keeps them.

One entry per (user, mechanism): salt, StoredKey, ServerKey, iterations (scram.py); never a
password. Every change rewrites `security/scram-credentials.json` crash-safely (files.py) before
it is visible, so an acknowledged AlterUserScramCredentials survives kill -9. Shared by every
broker of the process (Kafka's metadata image is cluster-wide).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING

from coordinator.security.files import StoreError, read_json, write_json

if TYPE_CHECKING:
    from coordinator.security.scram import ScramCredential

FILE_NAME = "scram-credentials.json"


class CredentialStore:
    def __init__(self, path: Path | None) -> None:
        """`path`: the file (None: in memory only, for unit tests)."""
        self._path = path
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        if path is not None:
            self._load(path)

    def lookup(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def users(self) -> dict[str, dict[str, int]]:
        """user -> mechanism -> iterations (what DescribeUserScramCredentials shows)."""
        found: dict[str, dict[str, int]] = {}
        for (user, mechanism), credential in sorted(self._credentials.items()):
            found.setdefault(user, {})[mechanism] = credential.iterations
        return found

    def apply(self, upserts: dict[tuple[str, str], ScramCredential], deletions: list[tuple[str, str]]) -> None:
        """One alteration, all of it persisted before any of it is seen."""
        changed = dict(self._credentials)
        for key in deletions:
            changed.pop(key, None)
        changed.update(upserts)
        if self._path is not None:
            write_json(self._path, _encode(changed))
        self._credentials = changed

    def _load(self, path: Path) -> None:
        raw = read_json(path)
        if raw is None:
            return
        from coordinator.security.scram import MECHANISM_TYPES, ScramCredential  # only with credentials to load

        try:
            for entry in raw["credentials"]:
                mechanism = entry["mechanism"]
                if mechanism not in MECHANISM_TYPES:
                    raise ValueError(mechanism)
                self._credentials[(entry["user"], mechanism)] = ScramCredential(
                    base64.b64decode(entry["salt"]),
                    base64.b64decode(entry["stored_key"]),
                    base64.b64decode(entry["server_key"]),
                    int(entry["iterations"]),
                )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"{path} is damaged ({exc!r})") from None


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
