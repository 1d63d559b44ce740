"""The broker link of `kgc serve --processes`: what one broker process asks another, as Kafka's
brokers ask each other over the wire.

Two questions cross it, each routed to the process that leads the partition at that moment
(Cluster.leader; this process's own partitions never take the link):
- the verification of a transactional produce or TxnOffsetCommit, asked of the transaction
  coordinator: AddPartitionsToTxn v5, verify_only or an add for a transaction.version 2 client
  (Kafka's AddPartitionsToTxnManager, its error mapping included);
- a transaction's markers, sent by the transaction coordinator to the partition's leader:
  WriteTxnMarkers v2 (TransactionMarkerChannelManager), which the leader answers in
  handlers/k27_write_txn_markers.py; its errors go back to txn/markers.py, which retries.
Each peer is one PeerClient over the socketpair end the parent made (processes.py); the other
ends are served as Kafka connections (net/connection.py) with the broker principal, on a
broker context that also serves WriteTxnMarkers (client listeners never do).
"""

from __future__ import annotations

import dataclasses
import logging
import socket
from functools import partial
from typing import TYPE_CHECKING

import trio

from coordinator.cluster.peer_client import PeerClient, PeerUnavailable
from coordinator.control.versions import VersionLimits
from coordinator.net.connection import ListenerShared, serve_connection
from coordinator.net.idle import ConnectionWatch
from protocol.api import CODEC_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.write_txn_markers import WritableTxnMarker, WritableTxnMarkerTopic, WriteTxnMarkersRequest

if TYPE_CHECKING:
    from coordinator.broker.topics import TopicRegistry
    from coordinator.cluster.cluster import Cluster
    from coordinator.handlers.request_context import BrokerContext
    from coordinator.net.request_memory import RequestMemory
    from coordinator.processes import PeerSockets
    from coordinator.txn.markers import Marker
    from coordinator.txn.ops import AddPartitionsParams

log = logging.getLogger(__name__)

# Kafka's request.timeout.ms default, what its inter-broker channels wait for an answer.
PEER_TIMEOUT_MS = 30_000
ADD_PARTITIONS_VERSION = 5  # TRANSACTION_ABORTABLE may come back
WRITE_MARKERS_VERSION = 2  # carries the markers' transaction version (KIP-1228)


class PeerLink:
    def __init__(self, cluster: Cluster, topics: TopicRegistry, node_id: int, peers: dict[int, PeerClient]) -> None:
        self.cluster = cluster
        self.topics = topics
        self.node_id = node_id
        self.peers = peers  # node id -> the connection to its process

    def leads_here(self, topic: str, index: int) -> bool:
        return self.cluster.leader(topic, index) == self.node_id

    def exists(self, topic: str, index: int) -> bool:
        return self.topics.has_partition(topic, index)

    # -- the transaction coordinator, asked by a partition leader ------------------------------
    async def verify(self, leader: int, p: AddPartitionsParams, *, add: bool) -> dict[tuple[str, int], ErrorCode]:
        """AddPartitionsToTxnManager: ask the coordinator `leader` whether (verify_only) or that
        (add) the partitions are in the producer's transaction; an error per partition."""
        peer = self.peers.get(leader)
        if peer is None:  # no leader (its broker is down): getTransactionCoordinator's answer
            return dict.fromkeys(p.partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        topics: dict[str, list[int]] = {}
        for topic, index in p.partitions:
            topics.setdefault(topic, []).append(index)
        txn = AddPartitionsToTxnTransaction(
            p.transactional_id,
            p.producer_id,
            p.producer_epoch,
            not add,
            [AddPartitionsToTxnTopic(name, indexes) for name, indexes in topics.items()],
        )
        try:
            response = await peer.call(
                ApiKey.ADD_PARTITIONS_TO_TXN, ADD_PARTITIONS_VERSION, AddPartitionsToTxnRequest(transactions=[txn])
            )
        except PeerUnavailable as exc:
            log.warning("verifying %r with %s failed: %s", p.transactional_id, peer.peer, exc)
            return dict.fromkeys(p.partitions, ErrorCode.NETWORK_EXCEPTION)
        if response.error_code != ErrorCode.NONE:
            # "The client should not be exposed to CLUSTER_AUTHORIZATION_FAILED"
            top = response.error_code
            error = ErrorCode.INVALID_TXN_STATE if top == ErrorCode.CLUSTER_AUTHORIZATION_FAILED else ErrorCode(top)
            return dict.fromkeys(p.partitions, error)
        errors = dict.fromkeys(p.partitions, ErrorCode.NONE)
        for result in response.results_by_transaction:
            for topic_result in result.topic_results:
                for part in topic_result.results_by_partition:
                    errors[(topic_result.name, part.partition_index)] = ErrorCode(part.partition_error_code)
        return errors

    # -- a partition leader, sent a marker by the transaction coordinator ---------------------
    async def write_marker(self, topic: str, index: int, marker: Marker) -> ErrorCode:
        """The marker written by the process leading topic-index: its error (NONE: durable)."""
        if not self.exists(topic, index):
            return ErrorCode.NONE  # deleted: Kafka drops a partition with no leader entry at all
        leader = self.cluster.leader(topic, index)
        peer = self.peers.get(leader)
        if peer is None:
            if leader == self.node_id:  # it moved here meanwhile: the next pass writes it here
                return ErrorCode.NOT_LEADER_OR_FOLLOWER
            return ErrorCode.LEADER_NOT_AVAILABLE  # its broker is down: retried
        request = WriteTxnMarkersRequest(
            [
                WritableTxnMarker(
                    marker.producer_id,
                    marker.producer_epoch,
                    marker.commit,
                    [WritableTxnMarkerTopic(topic, [index])],
                    marker.coordinator_epoch,
                    marker.transaction_version,
                )
            ]
        )
        try:
            response = await peer.call(ApiKey.WRITE_TXN_MARKERS, WRITE_MARKERS_VERSION, request)
        except PeerUnavailable as exc:  # wasDisconnected / wasTimedOut: retried
            log.warning("the marker for %s-%s to %s failed: %s", topic, index, peer.peer, exc)
            return ErrorCode.NETWORK_EXCEPTION
        for result in response.markers:
            for topic_result in result.topics:
                for part in topic_result.partitions:
                    if topic_result.name == topic and part.partition_index == index:
                        return ErrorCode(part.error_code)
        return ErrorCode.UNKNOWN_SERVER_ERROR  # an answer without our partition: retried


def internal_broker(broker: BrokerContext) -> BrokerContext:
    """The broker as its peers' connections see it: WriteTxnMarkers served besides the rest."""
    served = dict(broker.versions.table)
    served[int(ApiKey.WRITE_TXN_MARKERS)] = CODEC_VERSIONS[ApiKey.WRITE_TXN_MARKERS]
    return dataclasses.replace(broker, versions=VersionLimits(served))


def peer_clients(
    sockets: PeerSockets, node_ids: list[int], me: int
) -> tuple[dict[int, PeerClient], list[tuple[int, trio.SocketStream]]]:
    """The clients to every other broker process (by node id), and the streams to serve their
    requests on (with the node id asking on each)."""
    client_id = f"kgc-broker-{me}"
    clients = {
        node_ids[index]: PeerClient(_stream(sock), f"broker {node_ids[index]}", client_id, PEER_TIMEOUT_MS)
        for index, sock in sockets.asking.items()
    }
    answering = [(node_ids[index], _stream(sock)) for index, sock in sockets.answering.items()]
    return clients, answering


def _stream(sock: socket.socket) -> trio.SocketStream:
    return trio.SocketStream(trio.socket.from_stdlib_socket(sock))


async def serve_peers(
    broker: BrokerContext,
    clients: dict[int, PeerClient],
    answering: list[tuple[int, trio.SocketStream]],
    memory: RequestMemory,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Read every client's responses and serve every peer's requests until cancelled. The
    serving connections are never closed for idleness (nothing could reopen a socketpair)."""
    inside = internal_broker(broker)
    shared = ListenerShared(memory, ConnectionWatch(broker.config.connections_max_idle_ms))  # watch not run
    async with trio.open_nursery() as nursery:
        for client in clients.values():
            await nursery.start(client.run)
        for node_id, stream in answering:
            nursery.start_soon(partial(serve_connection, stream, inside, shared, peer_broker=f"broker-{node_id}"))
        task_status.started()
