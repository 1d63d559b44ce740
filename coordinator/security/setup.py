"""The security parts of a server, built once by the composition root (coordinator/server.py).

`open_security(config, data_dir, now_ms)` reads every listener and security setting (errors
surface at start, as ConfigError), opens the SCRAM credentials and, when authorizer.class.name
names Kafka's StandardAuthorizer (or AclAuthorizer), the authorizer with its ACLs; both files live
in the data dir's security/ directory and are shared by every broker of the process (and with
cluster.processes by every broker process: cluster/shared_file.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coordinator.security import credentials
from coordinator.security.credentials import CredentialStore
from coordinator.security.listeners import ListenerPlan, SecurityConfigError, listener_plans

if TYPE_CHECKING:
    from coordinator.security.standard_authorizer import StandardAuthorizer

SECURITY_DIR = "security"


@dataclass(slots=True)
class Security:
    credentials: CredentialStore
    authorizer: StandardAuthorizer | None  # None: authorizer.class.name unset, everything allowed
    plans: list[ListenerPlan]  # the first one is served on each broker's node port

    def follow(self) -> None:
        """cluster.processes: take up the other processes' ACL and credential changes."""
        self.credentials.follow()
        if self.authorizer is not None:
            self.authorizer.follow()


def open_security(config: Any, data_dir: Path, now_ms: Callable[[], int]) -> Security:
    directory = data_dir / SECURITY_DIR
    shared = bool(config.cluster_processes)  # other broker processes change the files too
    store = CredentialStore(directory / credentials.FILE_NAME, shared=shared)
    authorizer = None
    name = config.authorizer_class_name.strip()
    if name:
        from coordinator.security import standard_authorizer as standard

        if name not in standard.AUTHORIZER_CLASSES:
            raise SecurityConfigError(
                f"authorizer.class.name={name}: kgc serves Kafka's StandardAuthorizer "
                f"({standard.AUTHORIZER_CLASSES[0]}) only"
            )
        authorizer = standard.StandardAuthorizer(
            standard.parse_super_users(config.super_users),
            config.allow_everyone_if_no_acl_found,
            directory / standard.FILE_NAME,
            shared=shared,
        )
    return Security(store, authorizer, listener_plans(config, store, now_ms))
