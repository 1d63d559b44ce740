"""EndTxn (key 26), v0-v4.

Commits or aborts the transaction: once PrepareCommit/PrepareAbort is durable the answer is NONE
and the markers are written in the background (TransactionCoordinator.endTransaction); the next
transaction of the id waits (CONCURRENT_TRANSACTIONS) until they are. A retry of an EndTxn that
completed is NONE; EndTxn in another state is INVALID_TXN_STATE (Empty, or the other outcome).
v1: same as v0. v2+: PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before). v3+: flexible. v4:
TRANSACTION_ABORTABLE may be answered. (v5, KIP-890 part 2's epoch bump per transaction, is not
served, as Kafka does not without transaction.version 2.)
Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import fenced_for, txn_service
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.txn.ops import EndTxnParams
from protocol.errors import ErrorCode
from protocol.messages.end_txn import EndTxnRequest, EndTxnResponse


async def handle(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        why = f"no WRITE on transactional id {request.transactional_id}"
        return refused(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, why)
    error = await txn_service(ctx).end_txn(
        EndTxnParams(request.transactional_id, request.producer_id, request.producer_epoch, request.committed)
    )
    return EndTxnResponse(error_code=fenced_for(error, ctx.api_version, 2), producer_id=-1, producer_epoch=-1)
