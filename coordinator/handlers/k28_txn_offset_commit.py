"""TxnOffsetCommit (key 28), v0-v5.

Offsets committed inside the producer's transaction: kept pending in the group's partition until
the COMMIT (materialised) or ABORT (dropped) marker. Unknown topics and partitions get
UNKNOWN_TOPIC_OR_PARTITION each (KafkaApis.handleTxnOffsetCommitRequest). The group's
__consumer_offsets partition must be in the transaction (AddOffsetsToTxn), checked with the
transaction coordinator as Kafka's verification guard does (KIP-890 part 1): a stale epoch is
INVALID_PRODUCER_EPOCH, a partition not added INVALID_TXN_STATE, an unknown producer
INVALID_PRODUCER_ID_MAPPING. v0-1: COORDINATOR_LOAD_IN_PROGRESS is sent as COORDINATOR_NOT_AVAILABLE
(KAFKA-7296). v2+: committed leader epoch. v3+: flexible; member id, generation and
group.instance.id (KIP-447: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID; an unknown
group with generation >= 0 is ILLEGAL_GENERATION). v4: TRANSACTION_ABORTABLE may be answered (a
partition not in the transaction; INVALID_TXN_STATE below v4). v5 (KIP-890 part 2): the group's
partition is added to the transaction instead of checked (AddPartitionsToTxnManager's
ADD_PARTITION: no AddOffsetsToTxn needed), whatever transaction.partition.verification.enable says.
Authorization: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group
(GROUP_AUTHORIZATION_FAILED), READ on each topic (TOPIC_AUTHORIZATION_FAILED for its partitions).
"""

from __future__ import annotations

from coordinator.groups.offset_requests import CommitPartition
from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.groups.txn_offset_commit import TxnOffsetCommitParams
from coordinator.handlers.authz import refused, split_authorized
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import txn_service, unknown_partitions
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.txn.ops import AddPartitionsParams
from protocol.errors import ErrorCode
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

# How a failed verification reaches a TxnOffsetCommit client (AddPartitionsToTxnManager, then the
# group coordinator's error mapping: retriable coordinator errors make it look the coordinator up).
_VERIFY_ERRORS = {
    ErrorCode.PRODUCER_FENCED: ErrorCode.INVALID_PRODUCER_EPOCH,
    ErrorCode.CONCURRENT_TRANSACTIONS: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.NOT_COORDINATOR: ErrorCode.COORDINATOR_NOT_AVAILABLE,
}
# AddPartitionsToTxnManager.txnOffsetCommitRequestVersionToTransactionSupportedOperation.
FIRST_ABORTABLE_VERSION = 4  # GENERIC_ERROR_SUPPORTED: TRANSACTION_ABORTABLE is sent as it is
FIRST_ADD_PARTITION_VERSION = 5  # ADD_PARTITION: the partition joins the transaction


async def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    version = ctx.api_version
    answers: dict[str, list[TxnOffsetCommitResponsePartition]] = {}
    known: list[tuple[str, list[CommitPartition]]] = []
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleTxnOffsetCommitRequest
        txn_id, group = request.transactional_id, request.group_id
        if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
            return refused(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, f"no WRITE on {txn_id}")
        if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group):
            return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {group}")
        _, denied = split_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        if t.name in denied:
            answers.setdefault(t.name, []).extend(
                TxnOffsetCommitResponsePartition(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                for p in t.partitions
            )
            continue
        missing = unknown_partitions(ctx, t.name, [p.partition_index for p in t.partitions])
        valid = []
        for p in t.partitions:
            if p.partition_index in missing:
                explain(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{t.name}-{p.partition_index} does not exist")
                answers.setdefault(t.name, []).append(
                    TxnOffsetCommitResponsePartition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                )
            else:
                valid.append(
                    CommitPartition(
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch if version >= 2 else -1,
                        p.committed_metadata,
                    )
                )
        if valid:
            known.append((t.name, valid))
    if known:
        error = await _verify(ctx, request)
        if error is not None:
            for name, commits in known:
                answers.setdefault(name, []).extend(
                    TxnOffsetCommitResponsePartition(c.partition, error) for c in commits
                )
        else:
            result = await ctx.broker.groups.commit_transactional_offsets(
                TxnOffsetCommitParams(
                    request.transactional_id,
                    request.group_id,
                    request.producer_id,
                    request.producer_epoch,
                    known,
                    request.generation_id if version >= 3 else -1,
                    request.member_id if version >= 3 else "",
                    request.group_instance_id if version >= 3 else None,
                    version,
                )
            )
            for name, outcomes in result.topics:
                answers.setdefault(name, []).extend(TxnOffsetCommitResponsePartition(n, e) for n, e in outcomes)
    if version < 2:
        for answered in answers.values():
            for a in answered:
                if a.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                    a.error_code = ErrorCode.COORDINATOR_NOT_AVAILABLE
    return TxnOffsetCommitResponse(
        topics=[TxnOffsetCommitResponseTopic(name=n, partitions=ps) for n, ps in answers.items()]
    )


async def _verify(ctx: RequestContext, request: TxnOffsetCommitRequest) -> int | None:
    """Kafka's verification guard for the group's __consumer_offsets partition (None: in the
    transaction); from v5 on the partition is added to the transaction instead."""
    version = ctx.api_version
    tp = (OFFSETS_TOPIC, ctx.broker.groups.partition_for(request.group_id))
    adding = version >= FIRST_ADD_PARTITION_VERSION
    params = AddPartitionsParams(
        request.transactional_id, request.producer_id, request.producer_epoch, (tp,), client_version=2 if adding else 0
    )
    if not adding and not ctx.broker.config.transaction_partition_verification_enable:
        return None
    error = (await txn_service(ctx).verify_for_leader(params, add=adding))[tp]  # the coordinator, wherever it is
    if error == ErrorCode.NONE:
        return None
    if error == ErrorCode.TRANSACTION_ABORTABLE and version < FIRST_ABORTABLE_VERSION:
        return ErrorCode.INVALID_TXN_STATE  # "for backward compatibility with clients"
    return _VERIFY_ERRORS.get(ErrorCode(error), error)
