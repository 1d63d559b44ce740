"""DescribeCluster (key 60), v0-v2.

v0: cluster id, controller, brokers, cluster authorized operations when asked. v1: the endpoint
type (KIP-919): a broker answers only requests meant for a broker endpoint (1), others get
MISMATCHED_ENDPOINT_TYPE (AuthHelper.computeDescribeClusterResponse). v2: include_fenced_brokers
(KIP-1073): a down broker of the cluster is listed as fenced. The controller is the lowest live
broker, as Metadata reports it.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_cluster import DescribeClusterBroker, DescribeClusterRequest, DescribeClusterResponse

BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 1, 2
NO_OPERATIONS = -(2**31)  # Integer.MIN_VALUE: not asked for
_ENDPOINTS = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}


async def handle(ctx: RequestContext, request: DescribeClusterRequest) -> DescribeClusterResponse:
    wanted = request.endpoint_type if ctx.api_version >= 1 else BROKER_ENDPOINT
    if wanted != BROKER_ENDPOINT:
        return DescribeClusterResponse(
            error_code=ErrorCode.MISMATCHED_ENDPOINT_TYPE,
            error_message=f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
            f"{_ENDPOINTS.get(wanted, str(wanted))}",
            endpoint_type=BROKER_ENDPOINT,
        )
    cluster = ctx.broker.cluster
    fenced = ctx.api_version >= 2 and request.include_fenced_brokers
    nodes = sorted(cluster.nodes.values(), key=lambda n: n.node_id)
    operations = NO_OPERATIONS
    if request.include_cluster_authorized_operations and ctx.authorize(
        AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        operations = ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)
    return DescribeClusterResponse(
        endpoint_type=BROKER_ENDPOINT,
        cluster_id=ctx.broker.config.cluster_id,
        controller_id=cluster.controller_id(),
        brokers=[
            DescribeClusterBroker(broker_id=n.node_id, host=n.host, port=n.port, rack=None, is_fenced=not n.up)
            for n in nodes
            if n.up or fenced
        ],
        cluster_authorized_operations=operations,
    )
