"""ElectLeaders (key 43), v0-v2.

v0: preferred elections only. v1: election_type (KIP-460: 0 preferred, 1 unclean) and a top-level
error code. v2: flexible. ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for everything
(KafkaApis.handleElectLeaders); an unknown election type -> INVALID_REQUEST. topic_partitions
null = every partition, answering only those whose leader changed or could not
(ReplicationControlManager.electLeaders); the rules: coordinator/cluster/elections.py. With
cluster.processes each election is decided on what the other processes decided and published to
them (coordinator/cluster/shared_cluster.py).
"""

from __future__ import annotations

from coordinator.cluster.elections import ElectionType
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)


def _refuse(request: ElectLeadersRequest, code: int, message: str | None) -> ElectLeadersResponse:
    return ElectLeadersResponse(
        error_code=code,
        replica_election_results=[
            ReplicaElectionResult(
                topic=t.topic,
                partition_result=[
                    PartitionResult(partition_id=p, error_code=code, error_message=message) for p in t.partitions
                ],
            )
            for t in request.topic_partitions or []
        ],
    )


async def handle(ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse:
    moves = ctx.broker.elections
    assert moves is not None, "the composition root builds the leader moves"
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return _refuse(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    try:
        election = ElectionType(request.election_type if ctx.api_version >= 1 else 0)
    except ValueError:
        return _refuse(request, ErrorCode.INVALID_REQUEST, f"Unknown election type {request.election_type}")
    ctx.broker.cluster.catch_up()  # cluster.processes: elect on what the other processes decided
    results = []
    if request.topic_partitions is None:
        for topic in ctx.broker.topics.all():
            partitions = []
            for index in range(topic.partitions):
                code, message = moves.elect(topic.name, index, election)
                if code != ErrorCode.ELECTION_NOT_NEEDED:
                    partitions.append(PartitionResult(partition_id=index, error_code=code, error_message=message))
            results.append(ReplicaElectionResult(topic=topic.name, partition_result=partitions))
    else:
        for t in request.topic_partitions:
            partitions = []
            for index in t.partitions:
                code, message = moves.elect(t.topic, index, election)
                partitions.append(PartitionResult(partition_id=index, error_code=code, error_message=message))
            results.append(ReplicaElectionResult(topic=t.topic, partition_result=partitions))
    return ElectLeadersResponse(replica_election_results=results)
