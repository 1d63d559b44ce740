"""ListTransactions (key 66), v0-v2.

The transactional ids this broker coordinates, filtered by state names (unknown names come back
in unknown_state_filters) and producer ids (TransactionStateManager.listTransactionStates); Dead
ids are never listed; COORDINATOR_LOAD_IN_PROGRESS while one of its partitions loads. v1: a
duration filter (only transactions running longer than it, KIP-994). v2: a transactional id
regular expression (KIP-1152; Java's Matcher.matches: the whole id must match; a bad pattern is
INVALID_REQUEST).
Authorization: only the transactional ids the principal may DESCRIBE are listed.
"""

from __future__ import annotations

import re

from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import txn_service
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.list_transactions import ListTransactionsRequest, ListTransactionsResponse, TransactionState


async def handle(ctx: RequestContext, request: ListTransactionsRequest) -> ListTransactionsResponse:
    version = ctx.api_version
    pattern = request.transactional_id_pattern if version >= 2 else None
    if pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            explain(ErrorCode.INVALID_REQUEST, f"transactional id pattern {pattern!r}: {exc}")
            return ListTransactionsResponse(error_code=ErrorCode.INVALID_REQUEST)
    service = txn_service(ctx)
    listed = service.list_transactions(
        list(request.state_filters),
        list(request.producer_id_filters),
        request.duration_filter if version >= 1 else -1,
        pattern or None,
        service.runtime.clock.time_ms(),
    )
    states = [
        m
        for m in listed.states
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, m.transactional_id)
    ]
    return ListTransactionsResponse(
        error_code=listed.error,
        unknown_state_filters=listed.unknown_state_filters,
        transaction_states=[TransactionState(m.transactional_id, m.producer_id, str(m.state)) for m in states],
    )
