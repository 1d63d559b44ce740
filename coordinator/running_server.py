"""The running server as whoever started it sees it (coordinator/server.py builds it): every
broker's context, the cluster and its controller, the coordinators' runtimes, and the parts the
control plane, the embedding API and tests reach into. `stop()` ends the whole server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from coordinator.groups.dynamic_config import GroupConfigManager
from coordinator.share.settings import ShareSettings

if TYPE_CHECKING:
    from coordinator.broker.topics import Topic
    from coordinator.cluster.cluster import Cluster
    from coordinator.cluster.controller import Controller
    from coordinator.control.plane import ServerControl
    from coordinator.groups.shard import GroupShard
    from coordinator.handlers.request_context import BrokerContext
    from coordinator.net.request_memory import RequestMemory
    from coordinator.runtime.coordinator_runtime import CoordinatorRuntime
    from coordinator.security.setup import Security
    from coordinator.share.service import ShareService
    from coordinator.share.state.service import ShareStateService
    from coordinator.share.state.shard import ShareStateShard
    from coordinator.telemetry.wiring import TelemetryParts
    from coordinator.txn.shard import TxnShard


@dataclass(slots=True)
class Server:
    brokers: list[BrokerContext]
    cluster: Cluster
    controller: Controller
    runtime: CoordinatorRuntime[GroupShard]
    control: ServerControl | None = None  # the control plane, when control.enable or control.port is set
    metrics_port: int | None = None
    control_url: str | None = None
    cancel_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    txn_runtime: CoordinatorRuntime[TxnShard] | None = None  # __transaction_state
    request_memory: RequestMemory | None = None  # queued.max.request.bytes, shared by every connection
    group_configs: GroupConfigManager = field(default_factory=GroupConfigManager)  # dynamic GROUP configs
    share_settings: ShareSettings = field(default_factory=ShareSettings)  # group.share.*, changeable live
    shares: dict[int, ShareService] = field(default_factory=dict)  # node id -> its share side (empty: off)
    security: Security | None = None  # listeners, SCRAM credentials, the authorizer (coordinator/security)
    share_state_runtime: CoordinatorRuntime[ShareStateShard] | None = None  # __share_group_state
    share_state: ShareStateService | None = None  # the share coordinator, as share partitions reach it
    telemetry: TelemetryParts | None = None  # KIP-714: subscriptions, what clients pushed

    @property
    def broker(self) -> BrokerContext:
        """The first broker (the only one in a one-broker cluster)."""
        return self.brokers[0]

    @property
    def host(self) -> str:
        return self.broker.advertised_host

    @property
    def port(self) -> int:
        return self.broker.advertised_port

    @property
    def bootstrap(self) -> str:
        """Every broker, as a client's bootstrap.servers list."""
        return ",".join(f"{b.advertised_host}:{b.advertised_port}" for b in self.brokers)

    def create_topic(self, name: str, partitions: int, replication_factor: int | None = None) -> Topic:
        factor = self.broker.config.default_replication_factor if replication_factor is None else replication_factor
        return self.broker.topics.ensure(name, partitions, factor)

    def stop(self) -> None:
        self.cancel_scope.cancel()
