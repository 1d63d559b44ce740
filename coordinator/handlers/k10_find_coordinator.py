"""FindCoordinator (key 10), v0-v6.

v0: group key only. v1+: key type (0 group, 1 transaction) and error message. v3+: flexible.
v4+: batched `CoordinatorKeys`, one result each (KIP-699). v6: key type 2 (share: the key is
"groupId:topicId:partition", what share partitions ask for; below v6 INVALID_REQUEST).
A group's coordinator is the current leader of its __consumer_offsets partition
(abs(javaHash(group)) % partitions), a transactional id's the leader of its __transaction_state
partition (abs(javaHash(id)) % transaction.state.log.num.partitions), a share key's the leader of
its __share_group_state partition (ShareCoordinatorService.partitionFor), whichever broker is
asked; a partition with no leader gets COORDINATOR_NOT_AVAILABLE.
Authorization: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or transactional id
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED), per key; A share key needs CLUSTER_ACTION
on the cluster and Kafka's key format (else INVALID_REQUEST), and share groups served (else
INVALID_REQUEST: cluster.processes and group.share.enable=false serve none).
"""

from __future__ import annotations

from coordinator.cluster.cluster import NO_LEADER, BrokerNode
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from coordinator.share.state.placement import SHARE_STATE_TOPIC, InvalidShareKey, parse_coordinator_key, partition_for
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import Coordinator, FindCoordinatorRequest, FindCoordinatorResponse

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2


def _lookup(ctx: RequestContext, key: str, key_type: int) -> tuple[int, str | None, BrokerNode | None]:
    # KafkaApis.getCoordinator: DESCRIBE on the group or the transactional id first.
    if key_type == GROUP_KEY_TYPE and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, None, None
    if key_type == TRANSACTION_KEY_TYPE and not ctx.authorize(
        AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key
    ):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None, None
    if key_type == GROUP_KEY_TYPE:
        if not key and ctx.api_version < 4:
            return ErrorCode.INVALID_REQUEST, "group id must not be empty", None
        broker = ctx.broker
        leader = broker.cluster.leader(OFFSETS_TOPIC, broker.groups.partition_for(key))
        if leader == NO_LEADER:
            return (
                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"{OFFSETS_TOPIC}-{broker.groups.partition_for(key)} has no leader (its replicas are down)",
                None,
            )
        return ErrorCode.NONE, None, broker.cluster.node(leader)
    if key_type == TRANSACTION_KEY_TYPE and ctx.broker.txn is not None:
        partition = ctx.broker.txn.partition_for(key)
        leader = ctx.broker.cluster.leader(TRANSACTION_STATE_TOPIC, partition)
        if leader == NO_LEADER:
            return (
                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"{TRANSACTION_STATE_TOPIC}-{partition} has no leader (its replicas are down)",
                None,
            )
        return ErrorCode.NONE, None, ctx.broker.cluster.node(leader)
    if key_type == SHARE_KEY_TYPE:
        return _share_coordinator(ctx, key)
    return ErrorCode.INVALID_REQUEST, f"unknown key type {key_type}", None


def _share_coordinator(ctx: RequestContext, key: str) -> tuple[int, str | None, BrokerNode | None]:
    """KafkaApis.getCoordinator for CoordinatorType.SHARE."""
    if ctx.api_version < 6:
        return ErrorCode.INVALID_REQUEST, "share coordinator keys need FindCoordinator v6+", None
    topic = ctx.broker.topics.get(SHARE_STATE_TOPIC)
    if ctx.broker.share_state is None or topic is None or not ctx.broker.config.get("group.share.enable"):
        return ErrorCode.INVALID_REQUEST, "share groups are not served by this cluster", None
    if not ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "share coordinator lookups need CLUSTER_ACTION", None
    try:
        share_key = parse_coordinator_key(key)
    except InvalidShareKey as exc:
        return ErrorCode.INVALID_REQUEST, f"Share coordinator key is invalid: {exc}", None
    cluster = ctx.broker.cluster
    partition = partition_for(share_key, topic.partitions)
    leader = cluster.leader(SHARE_STATE_TOPIC, partition)
    if leader == NO_LEADER:
        return (
            ErrorCode.COORDINATOR_NOT_AVAILABLE,
            f"{SHARE_STATE_TOPIC}-{partition} has no leader (its replicas are down)",
            None,
        )
    return ErrorCode.NONE, None, cluster.node(leader)


async def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    ctx.broker.cluster.catch_up()  # cluster.processes: the other processes' coordinator moves first
    if ctx.api_version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            error, message, node = _lookup(ctx, key, request.key_type)
            coordinators.append(
                Coordinator(
                    key=key,
                    node_id=node.node_id if node else -1,
                    host=ctx.endpoint(node)[0] if node else "",
                    port=ctx.endpoint(node)[1] if node else -1,
                    error_code=error,
                    error_message=message,
                )
            )
        return FindCoordinatorResponse(coordinators=coordinators)
    error, message, node = _lookup(ctx, request.key, request.key_type)
    return FindCoordinatorResponse(
        error_code=error,
        error_message=message,
        node_id=node.node_id if node else -1,
        host=ctx.endpoint(node)[0] if node else "",
        port=ctx.endpoint(node)[1] if node else -1,
    )
