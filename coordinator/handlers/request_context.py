"""What a handler may see: the broker's parts, typed, and the request it is answering.

`BrokerContext` is built by the composition root (coordinator/server.py), one per broker of the
cluster, and shared by that broker's connections: settings, topics, the data path, the cluster
(leaders, epochs), the group and transaction coordinators as this broker sees them, the observer (the
transcript/metrics tap, None when off), and this broker's node (id, host, port). `RequestContext`
adds the per-request facts Kafka's RequestContext carries: header, client address, connection.
`CloseConnection` is how any layer says "this connection must go" (the message is logged).
Authorization is one call per resource, where Kafka's KafkaApis makes it:
`ctx.authorize(operation, resource_type, name)` (coordinator/security/authorization.py); with no
authorizer configured every action is allowed, as in Kafka.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import TopicRegistry
from coordinator.cluster.cluster import BrokerNode, Cluster
from coordinator.config import Config
from coordinator.control.versions import VersionLimits
from coordinator.groups.dynamic_config import GroupConfigManager
from coordinator.groups.service import GroupService
from coordinator.observe.tap import Tap
from coordinator.security.authorization import (
    ANONYMOUS,
    AclOperation,
    ResourceType,
    operations_bitfield,
    supported_operations,
)
from coordinator.share.persister import SharePersister
from coordinator.share.service import ShareService
from coordinator.txn.service import TxnService
from protocol.headers import RequestHeader

if TYPE_CHECKING:  # the admin parts; security's are built only when configured (security/setup.py)
    from coordinator.admin.configs import ConfigService
    from coordinator.cluster.elections import LeaderMoves
    from coordinator.security.credentials import CredentialStore
    from coordinator.security.standard_authorizer import StandardAuthorizer
    from coordinator.telemetry.manager import ClientMetricsManager

Handler = Callable[["RequestContext", Any], Awaitable[Any]]


class RequestHook(Protocol):
    """Wraps every handler call (the control plane: fault rules, request tracking)."""

    async def handle(self, handler: Handler, ctx: RequestContext, request: Any) -> Any: ...


class CloseConnection(Exception):
    """The connection must be closed; the message says why (it is logged). `final`: a framed
    answer to send before closing (a failed authentication's)."""

    def __init__(self, reason: str, final: bytes | None = None) -> None:
        super().__init__(reason)
        self.final = final


@dataclass(slots=True)
class BrokerContext:
    config: Config
    topics: TopicRegistry
    data: DataPath
    cluster: Cluster
    groups: GroupService  # bound to this broker: NOT_COORDINATOR for groups it does not coordinate
    tap: Tap | None
    node: BrokerNode
    versions: VersionLimits  # what ApiVersions advertises and dispatch accepts (the control plane narrows it)
    control: RequestHook | None = None  # fault rules and request tracking; None: off, no cost
    txn: TxnService | None = None  # the transaction coordinator as this broker sees it
    authorizer: StandardAuthorizer | None = None  # authorizer.class.name; None: every action allowed
    group_configs: GroupConfigManager | None = None  # dynamic GROUP configs, shared by every broker
    share: ShareService | None = None  # share fetch/acknowledge on this broker; None: share groups off
    configs: ConfigService | None = None  # the config APIs (coordinator/admin), shared by every broker
    elections: LeaderMoves | None = None  # ElectLeaders: leader moves and what they set in motion
    credentials: CredentialStore | None = None  # SCRAM credentials (coordinator/security/credentials.py)
    share_state: SharePersister | None = None  # the share coordinator (in-process, one per cluster)
    telemetry: ClientMetricsManager | None = None  # KIP-714 client metrics (coordinator/telemetry)

    @property
    def node_id(self) -> int:
        return self.node.node_id

    @property
    def advertised_host(self) -> str:
        return self.node.host

    @property
    def advertised_port(self) -> int:
        return self.node.port


@dataclass(slots=True)
class RequestContext:
    broker: BrokerContext
    header: RequestHeader
    client_host: str
    connection_id: int
    principal: str = ANONYMOUS  # "User:name" once the connection authenticated (Kafka's KafkaPrincipal)
    listener: str | None = None  # the listener the request came in on; None: the broker's first

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """Kafka's AuthHelper.authorize: may this connection's principal do `operation` on the
        resource? Always True without an authorizer."""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize(self.principal, self.host_address, operation, resource_type, name)

    def authorize_by_resource_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Kafka's AuthHelper.authorizeByResourceType (KIP-679): may the principal do `operation`
        on some resource of this type?"""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize_by_resource_type(self.principal, self.host_address, operation, resource_type)

    def endpoint(self, node: BrokerNode) -> tuple[str, int]:
        """`node`'s host and port on the listener this request came in on."""
        return node.endpoint(self.listener)

    @property
    def host_address(self) -> str:
        """The client's address as ACL hosts name it (Java's InetAddress.getHostAddress())."""
        return java_inet_text(self.client_host)[1:]

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """Kafka's AuthHelper.authorizedOperations: the bitfield of the resource type's operations
        this principal may perform (what describe APIs return when asked to include them)."""
        ops = supported_operations(resource_type)
        return operations_bitfield(op for op in ops if self.authorize(op, resource_type, name))

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""

    @property
    def client_address(self) -> str:
        """The client's address as Kafka writes it (Java's InetAddress.toString() of an address
        with no resolved name): "/127.0.0.1", "/0:0:0:0:0:0:0:1". Kafka stores this string as a
        member's clientHost and DescribeGroups returns it."""
        return java_inet_text(self.client_host)


def java_inet_text(host: str) -> str:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "/" + host  # not an IP (a test double): as Java would print an unresolved name
    if isinstance(address, ipaddress.IPv6Address):
        # Inet6Address prints 8 groups in hex without leading zeros and without "::" shortening.
        return "/" + ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))
    return "/" + str(address)
