"""FindCoordinator (key 10), v0-v6.

v0: group key only. v1+: key type (0 group, 1 transaction) and error message. v3+: flexible.
v4+: batched `CoordinatorKeys`, one result each (KIP-699). v6: key type 2 (share groups).
A group's coordinator is the current leader of its __consumer_offsets partition
(abs(javaHash(group)) % partitions), a transactional id's the leader of its __transaction_state
partition (abs(javaHash(id)) % transaction.state.log.num.partitions), whichever broker is asked; a
partition with no leader gets COORDINATOR_NOT_AVAILABLE. Share groups are not served
(COORDINATOR_NOT_AVAILABLE with a message saying so).
Authorization: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or transactional id
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED), per key.
"""

from __future__ import annotations

from coordinator.cluster.cluster import NO_LEADER, BrokerNode
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import Coordinator, FindCoordinatorRequest, FindCoordinatorResponse

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
_KEY_TYPE_NAMES = {2: "share group"}


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
    if key_type in _KEY_TYPE_NAMES:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{_KEY_TYPE_NAMES[key_type]} coordinators are not served", None
    return ErrorCode.INVALID_REQUEST, f"unknown key type {key_type}", None


async def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
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
