"""EndTxn (key 26), v0-v5.

Commits or aborts the transaction: once PrepareCommit/PrepareAbort is durable the answer is NONE
and the markers are written in the background (TransactionCoordinator.endTransaction). A retry
of an EndTxn that completed is NONE; EndTxn in another state is INVALID_TXN_STATE (Empty, or the
other outcome); markers in flight are CONCURRENT_TRANSACTIONS.
v1: same as v0. v2+: PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before). v3+: flexible. v4:
TRANSACTION_ABORTABLE may be answered. v5 (KIP-890 part 2, TransactionVersion
transactionVersionForEndTxn): every end bumps the epoch, and the answer carries the producer id
and epoch of the next transaction (a new id at epoch 0 once the epoch is exhausted); a retry
names the epoch before the bump; an abort from Empty or Complete* is allowed. v0-v4 keep the
classic rules whatever transaction.version the broker finalized.
Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import fenced_for, txn_service
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.txn.end_txn import EndTxnParams
from protocol.errors import ErrorCode
from protocol.messages.end_txn import EndTxnRequest, EndTxnResponse

FIRST_EPOCH_BUMP_VERSION = 5  # TransactionVersion.transactionVersionForEndTxn: v5+ is TV_2


async def handle(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        why = f"no WRITE on transactional id {request.transactional_id}"
        return refused(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, why)
    client_version = 2 if ctx.api_version >= FIRST_EPOCH_BUMP_VERSION else 0
    result = await txn_service(ctx).end_txn(
        EndTxnParams(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed, client_version
        )
    )
    return EndTxnResponse(
        error_code=fenced_for(result.error, ctx.api_version, 2),
        producer_id=result.producer_id,
        producer_epoch=result.producer_epoch,
    )
