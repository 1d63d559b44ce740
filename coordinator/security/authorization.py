"""The vocabulary of authorization, with Kafka's codes, and the one question handlers ask.

`AclOperation` and `ResourceType` carry the int8 codes of Kafka's AclOperation and ResourceType
(the wire's ACL APIs and authorized-operations bitfields use them). A handler asks one question
per resource, through `RequestContext.authorize(operation, resource_type, name)`, exactly where
Kafka's KafkaApis asks its authorizer; the broker's `Authorizer` answers (None: no
authorizer.class.name, everything is allowed, as in Kafka). `supported_operations` is Kafka's
AclEntry.supportedOperations: what an authorized-operations bitfield may hold for a type.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Protocol

CLUSTER_NAME = "kafka-cluster"  # Kafka's Resource.CLUSTER_NAME: the one CLUSTER resource
ANONYMOUS = "User:ANONYMOUS"  # KafkaPrincipal.ANONYMOUS: an unauthenticated connection
# The other broker processes of `kgc serve --processes`, on the socketpairs their parent made
# (cluster/peer_link.py): Kafka's inter-broker principal, which its operators list in super.users.
# Its principal type is no authentication's ("User:"), so no client connection can carry it.
BROKER_PRINCIPAL = "KgcBroker:peer"


class AclOperation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


_SUPPORTED: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset(
        {
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.CREATE,
            AclOperation.DESCRIBE,
            AclOperation.DELETE,
            AclOperation.ALTER,
            AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS,
        }
    ),
    ResourceType.GROUP: frozenset(
        {
            AclOperation.READ,
            AclOperation.DESCRIBE,
            AclOperation.DELETE,
            AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS,
        }
    ),
    ResourceType.CLUSTER: frozenset(
        {
            AclOperation.CREATE,
            AclOperation.CLUSTER_ACTION,
            AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS,
            AclOperation.IDEMPOTENT_WRITE,
            AclOperation.ALTER,
            AclOperation.DESCRIBE,
        }
    ),
    ResourceType.TRANSACTIONAL_ID: frozenset(
        {AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.TWO_PHASE_COMMIT}
    ),
    ResourceType.DELEGATION_TOKEN: frozenset({AclOperation.DESCRIBE}),
    ResourceType.USER: frozenset({AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS}),
}


def supported_operations(resource_type: ResourceType) -> frozenset[AclOperation]:
    return _SUPPORTED.get(resource_type, frozenset())


def operations_bitfield(operations: Iterable[AclOperation]) -> int:
    """Kafka Utils.to32BitField: bit n set for operation code n."""
    bits = 0
    for operation in operations:
        bits |= 1 << int(operation)
    return bits


class Authorizer(Protocol):
    """Kafka's Authorizer.authorize for one action (StandardAuthorizer semantics)."""

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool: ...

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool: ...
