"""DescribeTransactions (key 65), v0.

Each transactional id's state, producer id and epoch, timeout, start time and partitions, from its
coordinator (TransactionCoordinator.handleDescribeTransactions): NOT_COORDINATOR on another broker,
TRANSACTIONAL_ID_NOT_FOUND for an unknown id, INVALID_REQUEST for an empty one.
Authorization: DESCRIBE on each transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED); the
topics of a transaction the principal may not DESCRIBE are left out.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import txn_service
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    TopicData,
    TransactionState,
)


async def handle(ctx: RequestContext, request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    service = txn_service(ctx)
    states = []
    for txn_id in request.transactional_ids:
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, txn_id):
            states.append(
                TransactionState(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactional_id=txn_id)
            )
            continue
        found = service.describe(txn_id)
        if found.error != ErrorCode.NONE or found.meta is None:
            states.append(TransactionState(error_code=found.error, transactional_id=txn_id))
            continue
        meta = found.meta
        by_topic: dict[str, list[int]] = {}
        for topic, partition in meta.sorted_partitions():
            if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, topic):  # others are left out
                by_topic.setdefault(topic, []).append(partition)
        states.append(
            TransactionState(
                error_code=ErrorCode.NONE,
                transactional_id=txn_id,
                transaction_state=str(meta.state),
                transaction_timeout_ms=meta.timeout_ms,
                transaction_start_time_ms=meta.start_ms,
                producer_id=meta.producer_id,
                producer_epoch=meta.producer_epoch,
                topics=[TopicData(topic=t, partitions=ps) for t, ps in by_topic.items()],
            )
        )
    return DescribeTransactionsResponse(transaction_states=states)
