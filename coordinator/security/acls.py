"""ACL bindings and filters with Kafka's codes and matching rules (AclBinding, AclBindingFilter).

A binding is a resource pattern (type, name, LITERAL or PREFIXED) and an entry (principal
"Type:name", host, operation, ALLOW or DENY), exactly what CreateAcls carries and
DescribeAcls/DeleteAcls answer. Filters match as Kafka's ResourcePatternFilter and
AccessControlEntryFilter do: ANY (or a null name/principal/host) matches everything, and the
pattern type MATCH matches every pattern that would apply to the named resource (the literal
name, the literal wildcard "*", and every PREFIXED pattern the name starts with).
`validate_binding` is Kafka's AclControlManager.validateNewAcl plus AclApis' principal and
cluster-name checks.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType

WILDCARD = "*"  # Kafka's ResourcePattern.WILDCARD_RESOURCE and AclEntry.WILDCARD_HOST
WILDCARD_PRINCIPAL = "User:*"


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclPermissionType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True, slots=True, order=True)
class AclBinding:
    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def to_json(self) -> dict[str, object]:
        return {
            "resource_type": ResourceType(self.resource_type).name,
            "name": self.name,
            "pattern_type": PatternType(self.pattern_type).name,
            "principal": self.principal,
            "host": self.host,
            "operation": AclOperation(self.operation).name,
            "permission": AclPermissionType(self.permission).name,
        }

    @classmethod
    def from_json(cls, raw: dict[str, object]) -> AclBinding:
        return cls(
            ResourceType[str(raw["resource_type"])],
            str(raw["name"]),
            PatternType[str(raw["pattern_type"])],
            str(raw["principal"]),
            str(raw["host"]),
            AclOperation[str(raw["operation"])],
            AclPermissionType[str(raw["permission"])],
        )


@dataclass(frozen=True, slots=True)
class AclFilter:
    resource_type: int = ResourceType.ANY
    name: str | None = None
    pattern_type: int = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: int = AclOperation.ANY
    permission: int = AclPermissionType.ANY

    def unknown_reason(self) -> str | None:
        """Kafka's AclBindingFilter.isUnknown: a filter with an UNKNOWN element matches nothing
        and is refused."""
        if self.resource_type == ResourceType.UNKNOWN or self.pattern_type == PatternType.UNKNOWN:
            return "Unknown patternFilter."
        if self.operation == AclOperation.UNKNOWN or self.permission == AclPermissionType.UNKNOWN:
            return "Unknown entryFilter."
        return None

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, acl.resource_type):
            return False
        if self.pattern_type == PatternType.MATCH:
            if self.name is None:
                return True
            if acl.pattern_type == PatternType.LITERAL:
                return acl.name in (self.name, WILDCARD)
            return acl.pattern_type == PatternType.PREFIXED and self.name.startswith(acl.name)
        if self.pattern_type not in (PatternType.ANY, acl.pattern_type):
            return False
        return self.name is None or self.name == acl.name

    def _matches_entry(self, acl: AclBinding) -> bool:
        return (
            (self.principal is None or self.principal == acl.principal)
            and (self.host is None or self.host == acl.host)
            and self.operation in (AclOperation.ANY, acl.operation)
            and self.permission in (AclPermissionType.ANY, acl.permission)
        )


def _enum_name(kind: type[enum.IntEnum], value: int) -> str:
    try:
        return kind(value).name
    except ValueError:
        return str(value)


def validate_binding(acl: AclBinding) -> str | None:
    """Why Kafka refuses to create this ACL (INVALID_REQUEST), or None."""
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY) or acl.resource_type not in set(ResourceType):
        return f"Invalid resourceType {_enum_name(ResourceType, acl.resource_type)}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {_enum_name(PatternType, acl.pattern_type)}"
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY) or acl.operation not in set(AclOperation):
        return f"Invalid operation {_enum_name(AclOperation, acl.operation)}"
    if acl.permission not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return f"Invalid permissionType {_enum_name(AclPermissionType, acl.permission)}"
    if not acl.name:
        return "Resource name should not be empty"
    if acl.resource_type == ResourceType.CLUSTER and acl.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    kind, sep, name = acl.principal.partition(":")
    if not sep or not kind or not name:
        return f"expected a string in format principalType:principalName but got {acl.principal}"
    return None
