"""InitProducerId (key 22), v0-v4.

v0: transactional id (null = idempotent producer) and transaction timeout. v1: same body.
v2+: flexible. v3+: producer_id/producer_epoch of the caller, to bump its epoch (KIP-360); for an
idempotent producer Kafka answers with a fresh id at epoch 0 anyway, and so do we. v4: same body.
A non-null transactional id needs a transaction coordinator, which this broker does not run:
COORDINATOR_NOT_AVAILABLE, as FindCoordinator answers for transaction keys (an empty id is
INVALID_REQUEST, as Kafka's TransactionCoordinator.handleInitProducerId answers).
"""
from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse


async def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    data = ctx.broker.data
    if request.transactional_id is not None:
        error = ErrorCode.INVALID_REQUEST if request.transactional_id == "" else ErrorCode.COORDINATOR_NOT_AVAILABLE
        return InitProducerIdResponse(error_code=error, producer_id=-1, producer_epoch=-1)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=data.producer_ids.next_id(), producer_epoch=0)
