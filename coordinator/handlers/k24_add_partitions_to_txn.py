"""AddPartitionsToTxn (key 24), v0-v5.

v0-v3 (clients): one transaction; every partition of the request gets the transaction's error
(or, when a topic or partition does not exist, UNKNOWN_TOPIC_OR_PARTITION for it and
OPERATION_NOT_ATTEMPTED for the others, as KafkaApis answers). v1: same as v0. v2+:
PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before). v3+: flexible. v4+ (brokers): a batch of
transactions, each either added or, with verify_only, checked (KIP-890 part 1: NONE for a
partition in the transaction, TRANSACTION_ABORTABLE for one that is not); a top-level error code.
An add at v4+ is a transaction.version 2 client's (TransactionVersion
transactionVersionForAddPartitionsToTxn), what a broker sends for a Produce v12+ or a
TxnOffsetCommit v5+ (KIP-890 part 2); below v4 it is a v0 client's. v5: TRANSACTION_ABORTABLE
may be answered.
Authorization: v0-v3 WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED); WRITE on
each topic (else TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED); v4+ (brokers
verifying) CLUSTER_ACTION (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from coordinator.handlers.authz import refused, split_authorized
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import fenced_for, txn_service, unknown_partitions
from coordinator.observe.reasons import explain
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from coordinator.txn.ops import AddPartitionsParams
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)


async def handle(ctx: RequestContext, request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    version = ctx.api_version
    if version < 4:
        one = AddPartitionsToTxnTransaction(
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            False,
            request.v3_and_below_topics,
        )
        result = await _transaction(ctx, one, version)
        return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=result.topic_results)
    if not ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return refused(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "v4+ is for brokers: CLUSTER_ACTION")
    results = [await _transaction(ctx, txn, version) for txn in request.transactions]
    return AddPartitionsToTxnResponse(error_code=ErrorCode.NONE, results_by_transaction=results)


async def _transaction(
    ctx: RequestContext, txn: AddPartitionsToTxnTransaction, version: int
) -> AddPartitionsToTxnResult:
    partitions = [(t.name, p) for t in txn.topics for p in t.partitions]
    missing = {(t.name, p): e for t in txn.topics for p, e in unknown_partitions(ctx, t.name, t.partitions).items()}
    errors: dict[tuple[str, int], int]
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleAddPartitionsToTxnRequest
        txn_id = txn.transactional_id
        if version < 4 and not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
            explain(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, f"no WRITE on transactional id {txn_id}")
            errors = {tp: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for tp in partitions}
            return AddPartitionsToTxnResult(txn_id, _by_topic(txn.topics, errors))
        names = (t.name for t in txn.topics if not t.name.startswith("__"))  # internal topics are not checked
        _, denied = split_authorized(ctx, AclOperation.WRITE, ResourceType.TOPIC, names)
    if denied:
        explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"no WRITE on topics {sorted(denied)}")
        errors = {
            (name, p): ErrorCode.TOPIC_AUTHORIZATION_FAILED
            if name in denied
            else missing.get((name, p), ErrorCode.OPERATION_NOT_ATTEMPTED)
            for name, p in partitions
        }
    elif missing:
        explain(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no such partitions: {sorted(missing)}")
        errors = {tp: missing.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}
    else:
        params = AddPartitionsParams(
            txn.transactional_id,
            txn.producer_id,
            txn.producer_epoch,
            tuple(partitions),
            client_version=2 if version >= 4 else 0,
        )
        service = txn_service(ctx)
        if txn.verify_only:
            errors = dict(service.verify(params))
        else:
            error = fenced_for(await service.add_partitions(params), version, 2)
            errors = {tp: error for tp in partitions}
    return AddPartitionsToTxnResult(txn.transactional_id, _by_topic(txn.topics, errors))


def _by_topic(
    topics: list[AddPartitionsToTxnTopic], errors: dict[tuple[str, int], int]
) -> list[AddPartitionsToTxnTopicResult]:
    return [
        AddPartitionsToTxnTopicResult(
            t.name, [AddPartitionsToTxnPartitionResult(p, errors[(t.name, p)]) for p in t.partitions]
        )
        for t in topics
    ]
