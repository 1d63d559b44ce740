"""Kafka's StandardAuthorizer: the ACLs of the cluster and the one answer to "may P do O on R?".

Rules (StandardAuthorizerData.authorize/findResult): a super user (super.users), and the other
broker processes of --processes (authorization.BROKER_PRINCIPAL), may do anything;
otherwise the ACLs whose pattern applies to the resource (its LITERAL name, the LITERAL "*", every
PREFIXED pattern the name starts with) and whose principal (the user, or "User:*") and host (the
client's address, or "*") match decide: any DENY wins, else any ALLOW allows; an ALLOW of READ,
WRITE, DELETE or ALTER also allows DESCRIBE, and an ALLOW of ALTER_CONFIGS allows DESCRIBE_CONFIGS
(DENY implies nothing); ALL matches every operation. When no ACL at all applies to the resource,
allow.everyone.if.no.acl.found decides (default false: denied). `authorize_by_resource_type` is
Kafka's Authorizer.authorizeByResourceType (KIP-679: may P do O on some resource of this type?).
ACLs persist in `security/acls.json` (files.py) before a change is acknowledged; every broker of
the process shares this one authorizer, as every Kafka broker sees the same metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from coordinator.cluster.shared_file import SharedFile
from coordinator.security.acls import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclFilter,
    AclPermissionType,
    PatternType,
)
from coordinator.security.authorization import BROKER_PRINCIPAL, AclOperation, ResourceType
from coordinator.security.files import StoreError, read_shared, write_shared

FILE_NAME = "acls.json"
AUTHORIZER_CLASSES = (
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",  # the ZooKeeper-era name (removed in Kafka 4.0): same rules
)
_IMPLIES_DESCRIBE = frozenset(
    {AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
)
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


def parse_super_users(text: str) -> frozenset[str]:
    """super.users: principals separated by ';' (StandardAuthorizer.getConfiguredSuperUsers)."""
    return frozenset(p.strip() for p in text.split(";") if p.strip())


def _result(operation: int, principals: tuple[str, str], host: str, acl: AclBinding) -> int | None:
    """Kafka's StandardAuthorizerData.findResult: ALLOW/DENY when the ACL applies, else None."""
    if acl.principal not in principals:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    if acl.operation != AclOperation.ALL:
        if acl.permission == AclPermissionType.ALLOW:
            if operation == AclOperation.DESCRIBE:
                if acl.operation not in _IMPLIES_DESCRIBE:
                    return None
            elif operation == AclOperation.DESCRIBE_CONFIGS:
                if acl.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif operation != acl.operation:
                return None
        elif operation != acl.operation:
            return None
    return acl.permission


class StandardAuthorizer:
    def __init__(
        self,
        super_users: Iterable[str] = (),
        allow_if_no_acl: bool = False,
        path: Path | None = None,
        *,
        shared: bool = False,
    ) -> None:
        """`path`: the ACLs' file (None: in memory only); `shared`: other broker processes change
        it too (cluster.processes: cluster/shared_file.py)."""
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._file = None if path is None else SharedFile(path, shared=shared)
        self._acls: set[AclBinding] = set()
        self._literal: dict[tuple[int, str], list[AclBinding]] = {}
        self._prefixed: dict[int, list[AclBinding]] = {}
        self._load()

    # -- the question ----------------------------------------------------------------------------
    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        if principal in self.super_users or principal == BROKER_PRINCIPAL:
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        found = allowed = False
        for acl in self._applying(resource_type, name):
            found = True
            result = _result(operation, principals, host, acl)
            if result == AclPermissionType.DENY:
                return False
            if result == AclPermissionType.ALLOW:
                allowed = True
        if allowed:
            return True
        return False if found else self.allow_if_no_acl

    def _applying(self, resource_type: int, name: str) -> Iterable[AclBinding]:
        yield from self._literal.get((resource_type, name), ())
        if name != WILDCARD:
            yield from self._literal.get((resource_type, WILDCARD), ())
        for acl in self._prefixed.get(resource_type, ()):
            if name.startswith(acl.name):
                yield acl

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Kafka's Authorizer.authorizeByResourceType default method, rule for rule."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True  # super users (and allow.everyone.if.no.acl.found without ACLs)
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow: list[tuple[int, str]] = []
        wildcard_allow = False
        for acl in self._acls:
            if acl.resource_type != resource_type or acl.host not in (host, WILDCARD):
                continue
            if acl.principal not in (principal, WILDCARD_PRINCIPAL):
                continue
            if acl.operation not in (operation, AclOperation.ALL):
                continue
            if acl.permission == AclPermissionType.DENY:
                if acl.pattern_type == PatternType.LITERAL:
                    if acl.name == WILDCARD:
                        return False
                    deny_literal.add(acl.name)
                else:
                    deny_prefixed.add(acl.name)
            elif acl.permission == AclPermissionType.ALLOW:
                if acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD:
                    wildcard_allow = True  # a wildcard DENY found later still wins
                else:
                    allow.append((acl.pattern_type, acl.name))
        if wildcard_allow:
            return True
        for pattern_type, name in allow:
            if pattern_type == PatternType.LITERAL and name in deny_literal:
                continue
            if not any(name[:i] in deny_prefixed for i in range(1, len(name) + 1)):
                return True
        return False

    # -- the ACLs --------------------------------------------------------------------------------
    def acls(self, acl_filter: AclFilter | None = None) -> list[AclBinding]:
        self.follow()
        return sorted(a for a in self._acls if acl_filter is None or acl_filter.matches(a))

    def create(self, bindings: list[AclBinding]) -> None:
        """Adds the (validated) bindings, persisted first; existing ones are kept once."""
        with self._changing():
            self._replace(self._acls | set(bindings))

    def delete(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """Removes what each filter matches (persisted first); per filter, what it removed."""
        with self._changing():
            removed = [sorted(a for a in self._acls if f.matches(a)) for f in filters]
            gone = {a for group in removed for a in group}
            if gone:
                self._replace(self._acls - gone)
        return removed

    def follow(self) -> None:
        """Take up what another broker process changed (cluster.processes)."""
        if self._file is not None and self._file.changed():
            self._load()

    @contextmanager
    def _changing(self) -> Iterator[None]:
        """A change, made on the newest ACLs and alone among the processes sharing them."""
        if self._file is None:
            yield
            return
        with self._file.locked():
            self.follow()
            yield

    def _replace(self, acls: set[AclBinding]) -> None:
        if self._file is not None:
            write_shared(self._file, {"version": 1, "acls": [a.to_json() for a in sorted(acls)]})
        self._index(acls)

    def _index(self, acls: set[AclBinding]) -> None:
        self._acls = acls
        literal: dict[tuple[int, str], list[AclBinding]] = {}
        prefixed: dict[int, list[AclBinding]] = {}
        for acl in acls:
            if acl.pattern_type == PatternType.LITERAL:
                literal.setdefault((acl.resource_type, acl.name), []).append(acl)
            else:
                prefixed.setdefault(acl.resource_type, []).append(acl)
        self._literal, self._prefixed = literal, prefixed

    def _load(self) -> None:
        """The file's ACLs (loading is not a change: the file is not rewritten)."""
        if self._file is None:
            return
        raw = read_shared(self._file)
        try:
            acls = set() if raw is None else {AclBinding.from_json(entry) for entry in raw["acls"]}
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"{self._file.path} is damaged ({exc!r})") from None
        self._index(acls)
