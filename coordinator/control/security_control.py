"""The control plane's view of security: the ACLs, adding one, and SCRAM users.

`AclSpec` and `ScramUserSpec` are the bodies of POST /v1/acls and POST /v1/scram-users (Kafka's
names for types, operations and mechanisms); errors are the control plane's 400s with the reason
CreateAcls would give. A SCRAM user's password is used once, to make the salted credential kgc
keeps (coordinator/security/scram.py), and never answered, logged or kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.control.errors import bad_request
from coordinator.security.acls import AclBinding, AclPermissionType, PatternType, validate_binding
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.security.scram import MECHANISM_TYPES, MIN_ITERATIONS, credential_from_password
from coordinator.security.setup import Security


@dataclass
class AclSpec:
    resource_type: str  # TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID
    name: str
    principal: str  # User:alice, User:*
    operation: str  # READ, WRITE, ..., ALL
    permission: str = "ALLOW"
    pattern_type: str = "LITERAL"  # or PREFIXED
    host: str = "*"


@dataclass
class ScramUserSpec:
    user: str
    password: str
    mechanism: str = "SCRAM-SHA-512"
    iterations: int = MIN_ITERATIONS


def _enum(kind: Any, text: str, what: str) -> Any:
    try:
        return kind[text.upper()]
    except KeyError:
        raise bad_request(f"unknown {what} {text!r} (one of {', '.join(k.name for k in kind)})") from None


def acls(security: Security | None) -> list[dict[str, object]]:
    if security is None or security.authorizer is None:
        return []
    return [a.to_json() for a in security.authorizer.acls()]


def add_acl(security: Security | None, spec: AclSpec) -> dict[str, object]:
    if security is None or security.authorizer is None:
        raise bad_request("no authorizer: set authorizer.class.name (Kafka's StandardAuthorizer)")
    binding = AclBinding(
        _enum(ResourceType, spec.resource_type, "resource type"),
        spec.name,
        _enum(PatternType, spec.pattern_type, "pattern type"),
        spec.principal,
        spec.host,
        _enum(AclOperation, spec.operation, "operation"),
        _enum(AclPermissionType, spec.permission, "permission"),
    )
    problem = validate_binding(binding)
    if problem is not None:
        raise bad_request(problem)
    security.authorizer.create([binding])
    return binding.to_json()


def add_scram_user(security: Security | None, spec: ScramUserSpec) -> dict[str, object]:
    if security is None:
        raise bad_request("this server has no security parts")
    if spec.mechanism not in MECHANISM_TYPES:
        raise bad_request(f"mechanism must be one of {', '.join(MECHANISM_TYPES)}")
    if not spec.user:
        raise bad_request("Username must not be empty")
    if not MIN_ITERATIONS <= spec.iterations <= 16384:
        raise bad_request("iterations must be between 4096 and 16384")
    credential = credential_from_password(spec.mechanism, spec.password, spec.iterations)
    security.credentials.apply({(spec.user, spec.mechanism): credential}, [])
    return {"user": spec.user, "mechanism": spec.mechanism, "iterations": spec.iterations}
