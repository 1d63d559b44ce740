"""WriteTxnMarkers (key 27), v1-v2: a transaction coordinator has a partition leader write its
COMMIT/ABORT markers (KafkaApis.handleWriteTxnMarkersRequest).

Served only on the broker link of `kgc serve --processes` (cluster/peer_link.py): client listeners
neither advertise nor accept it. v1: flexible (v0 was removed in Kafka 4.0). v2: each marker
carries its transaction version (KIP-1228).
Authorization: CLUSTER_ACTION on the cluster, else every partition gets
CLUSTER_AUTHORIZATION_FAILED. Per partition: `__consumer_offsets` through the group coordinator,
whose COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR become
NOT_LEADER_OR_FOLLOWER ("the coordinator is not ready yet"); a partition this process does not
lead answers NOT_LEADER_OR_FOLLOWER (it exists) or UNKNOWN_TOPIC_OR_PARTITION; the sender retries
both at the leader of the moment. The markers of one request are written at once; the answer
waits until every one is durable.
"""

from __future__ import annotations

import trio

from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import txn_service
from coordinator.observe.reasons import explain
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)

_NOT_READY = frozenset(
    {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR}
)


async def handle(ctx: RequestContext, request: WriteTxnMarkersRequest) -> WriteTxnMarkersResponse:
    if not ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        explain(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "WriteTxnMarkers is for brokers: CLUSTER_ACTION")
        denied = {
            (i, t.name, p): ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            for i, m in enumerate(request.markers)
            for t in m.topics
            for p in t.partition_indexes
        }
        return _response(request, denied)
    errors: dict[tuple[int, str, int], ErrorCode] = {}
    async with trio.open_nursery() as nursery:
        for i, marker in enumerate(request.markers):
            for topic in marker.topics:
                for index in topic.partition_indexes:
                    nursery.start_soon(_write, ctx, marker, i, topic.name, index, errors)
    return _response(request, errors)


async def _write(
    ctx: RequestContext,
    marker: WritableTxnMarker,
    i: int,
    topic: str,
    index: int,
    errors: dict[tuple[int, str, int], ErrorCode],
) -> None:
    markers = txn_service(ctx).markers
    if markers is None:  # (a broker built without a marker writer: tests of other parts)
        errors[(i, topic, index)] = ErrorCode.UNKNOWN_SERVER_ERROR
        return
    if topic != markers.offsets.topic and ctx.broker.data.partition(topic, index) is None:
        exists = ctx.broker.topics.has_partition(topic, index)
        errors[(i, topic, index)] = ErrorCode.NOT_LEADER_OR_FOLLOWER if exists else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return
    error = await markers.write_here(topic, index, _Marker(marker))
    errors[(i, topic, index)] = ErrorCode.NOT_LEADER_OR_FOLLOWER if error in _NOT_READY else error


class _Marker:
    """A request's marker as txn/markers.py reads one."""

    __slots__ = ("producer_id", "producer_epoch", "commit", "coordinator_epoch", "transaction_version")

    def __init__(self, m: WritableTxnMarker) -> None:
        self.producer_id = m.producer_id
        self.producer_epoch = m.producer_epoch
        self.commit = m.transaction_result
        self.coordinator_epoch = m.coordinator_epoch
        self.transaction_version = m.transaction_version


_Errors = dict[tuple[int, str, int], ErrorCode]  # (marker's index, topic, partition) -> its error


def _response(request: WriteTxnMarkersRequest, errors: _Errors) -> WriteTxnMarkersResponse:
    return WriteTxnMarkersResponse(
        [
            WritableTxnMarkerResult(
                m.producer_id,
                [
                    WritableTxnMarkerTopicResult(
                        t.name,
                        [WritableTxnMarkerPartitionResult(p, errors[(i, t.name, p)]) for p in t.partition_indexes],
                    )
                    for t in m.topics
                ],
            )
            for i, m in enumerate(request.markers)
        ]
    )
