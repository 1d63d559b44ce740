"""The transaction coordinator's parts, built for the composition root (server.py).

__transaction_state registered as an internal topic, its runtime (whose decided transactions'
markers go to the data path and to the group coordinator's runtime, or, for partitions another
broker process leads, over the broker link: `peers`), and one TxnService per broker node. With
`peers` None (one process) every marker and verification stays in the process, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator.broker.topics import Topic
from coordinator.groups.txn_offset_commit import OffsetsTxnMarkers
from coordinator.txn.lifecycle import TXN_TOPIC_ID, txn_runtime
from coordinator.txn.markers import MarkerChannel
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from coordinator.txn.service import TxnService

if TYPE_CHECKING:
    from coordinator.broker.data_path import DataPath
    from coordinator.broker.topics import TopicRegistry
    from coordinator.cluster.cluster import BrokerNode, Cluster
    from coordinator.cluster.peer_link import PeerLink
    from coordinator.groups.shard import GroupShard
    from coordinator.runtime.clock import TimerClock
    from coordinator.runtime.coordinator_runtime import CoordinatorRuntime
    from coordinator.txn.shard import TxnShard
    from storage.log_manager import LogManager


def txn_parts(
    config: Any,
    clock: TimerClock,
    logs: LogManager,
    data: DataPath,
    groups: CoordinatorRuntime[GroupShard],
    cluster: Cluster,
    topics: TopicRegistry,
    nodes: list[BrokerNode],
    peers: PeerLink | None,
) -> tuple[CoordinatorRuntime[TxnShard], dict[int, TxnService]]:
    """(__transaction_state's runtime, loaded in its run(); node id -> its TxnService)."""
    topics.register_internal(
        Topic(
            TRANSACTION_STATE_TOPIC,
            config.transaction_state_log_num_partitions,
            TXN_TOPIC_ID,
            internal=True,
            replication_factor=min(config.transaction_state_log_replication_factor, len(nodes)),
        )
    )
    markers = MarkerChannel(data, OffsetsTxnMarkers(groups), peers=peers)
    runtime = txn_runtime(config, clock, logs, data.producer_ids, markers, leaders=cluster)
    services = {
        node.node_id: TxnService(
            runtime, cluster, node.node_id, config.transaction_max_timeout_ms, markers=markers, peers=peers
        )
        for node in nodes
    }
    return runtime, services
