"""AddOffsetsToTxn (key 25), v0-v4.

Adds the group's __consumer_offsets partition (abs(javaHash(group)) % offsets.topic.num.partitions)
to the transaction, so that its TxnOffsetCommit records and their marker belong to it
(KafkaApis.handleAddOffsetsToTxnRequest). v1: same as v0. v2+: PRODUCER_FENCED
(INVALID_PRODUCER_EPOCH before). v3+: flexible. v4: TRANSACTION_ABORTABLE may be answered.
Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on
the group (else GROUP_AUTHORIZATION_FAILED), as KafkaApis checks them.
"""

from __future__ import annotations

from coordinator.groups.placement import OFFSETS_TOPIC
from coordinator.handlers.authz import refused
from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.txn_common import fenced_for, txn_service
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.txn.ops import AddPartitionsParams
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse


async def handle(ctx: RequestContext, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    txn_id, group = request.transactional_id, request.group_id
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
        return refused(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, f"no WRITE on {txn_id}")
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group):
        return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {group}")
    partition = ctx.broker.groups.partition_for(request.group_id)
    error = await txn_service(ctx).add_partitions(
        AddPartitionsParams(
            request.transactional_id, request.producer_id, request.producer_epoch, ((OFFSETS_TOPIC, partition),)
        )
    )
    return AddOffsetsToTxnResponse(error_code=fenced_for(error, ctx.api_version, 2))
