"""InitProducerId (key 22), v0-v5.

v0: transactional id (null = idempotent producer) and transaction timeout. v1: same body.
v2+: flexible. v3+: producer_id/producer_epoch of the caller (KIP-360): a transactional producer
resumes after an abortable error with a bumped epoch (or PRODUCER_FENCED); both or neither must
be -1, else INVALID_REQUEST; an idempotent producer gets a fresh id at epoch 0 anyway, as Kafka's
TransactionCoordinator.handleInitProducerId gives it. v4+: PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
before). v5: TRANSACTION_ABORTABLE exists (never answered here). A transactional id goes to its
transaction coordinator (NOT_COORDINATOR on another broker, INVALID_REQUEST if empty,
INVALID_TRANSACTION_TIMEOUT outside (0, transaction.max.timeout.ms]).
Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without one,
IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679; else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import fenced_for, txn_service
from coordinator.observe.reasons import explain
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from coordinator.txn.ops import InitPidParams
from protocol.errors import ErrorCode
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse


async def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    txn_id = request.transactional_id
    if txn_id is not None and not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
        return refused(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, f"no WRITE on {txn_id}")
    if txn_id is None and not (
        ctx.authorize(AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME)
        or ctx.authorize_by_resource_type(AclOperation.WRITE, ResourceType.TOPIC)
    ):
        why = "an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic"
        return refused(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, why)
    if request.transactional_id is None:
        return InitProducerIdResponse(
            error_code=ErrorCode.NONE, producer_id=ctx.broker.data.producer_ids.next_id(), producer_epoch=0
        )
    pid, epoch = (request.producer_id, request.producer_epoch) if ctx.api_version >= 3 else (-1, -1)
    if (pid == -1) != (epoch == -1):
        explain(ErrorCode.INVALID_REQUEST, f"producer id {pid} and epoch {epoch}: give both or neither")
        return InitProducerIdResponse(error_code=ErrorCode.INVALID_REQUEST, producer_id=-1, producer_epoch=-1)
    result = await txn_service(ctx).init_producer_id(
        InitPidParams(request.transactional_id, request.transaction_timeout_ms, pid, epoch)
    )
    return InitProducerIdResponse(
        error_code=fenced_for(result.error, ctx.api_version, 4),
        producer_id=result.producer_id,
        producer_epoch=result.producer_epoch,
    )
