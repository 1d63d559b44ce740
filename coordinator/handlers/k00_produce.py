"""Produce (key 0), v3-v12 (v0-v2 are advertised for old librdkafka but the codec refuses them,
which closes the connection, as Kafka 4 does: KAFKA-18659).

v3: record batch v2 only; transactional id (transactional batches need it, else the request is
TRANSACTIONAL_ID_AUTHORIZATION_FAILED as KafkaApis answers). A producer's first transactional
batch on a partition is checked with the transaction coordinator (KIP-890 part 1,
transaction.partition.verification.enable): not added -> INVALID_TXN_STATE, a stale epoch ->
INVALID_PRODUCER_EPOCH, the coordinator busy -> NOT_ENOUGH_REPLICAS (retriable without a metadata
refresh, as ReplicaManager answers). v5+: log_start_offset.
v7+: zstd batches (stored as sent). v8+: record_errors/error_message. v9+: flexible.
v10: NOT_LEADER_OR_FOLLOWER carries the current leader and its endpoint (KIP-951).
v11: a partition not in the transaction is TRANSACTION_ABORTABLE (KIP-890; INVALID_TXN_STATE
below). v12 (KIP-890 part 2, a transaction.version 2 producer): that first batch adds its
partition to the transaction instead of being checked, whatever the verification setting, and
CONCURRENT_TRANSACTIONS reaches the producer as it is (AddPartitionsToTxnManager
produceRequestVersionToTransactionSupportedOperation, ReplicaManager's error translation).
A broker that does not lead a partition answers NOT_LEADER_OR_FOLLOWER for it (handlers/leadership.py).
acks 0 gets no response (a failure closes the connection, as Kafka does); acks 1 and -1 both answer
once the append is durable under log.flush.mode (replicas are logical, one copy: acks=all is
acks=1); any other value is INVALID_REQUIRED_ACKS.
Authorization: WRITE on the transactional id for transactional batches (else every partition gets
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), WRITE on each topic (else TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import trio

from coordinator.broker.partition import AppendResult, Partition
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.leadership import leader_error
from coordinator.handlers.request_context import CloseConnection, RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.txn.ops import AddPartitionsParams
from protocol.errors import ErrorCode
from protocol.messages.produce import (
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from storage.batch import HEADER_SIZE, TRANSACTIONAL_BIT, batch_attributes, decode_header

VALID_ACKS = (0, 1, -1)


def _response(index: int, result: AppendResult) -> PartitionProduceResponse:
    return PartitionProduceResponse(
        index=index,
        error_code=result.error,
        base_offset=result.base_offset,
        log_append_time_ms=-1,
        log_start_offset=result.log_start_offset,
        error_message=result.message,
    )


async def handle(ctx: RequestContext, request: ProduceRequest) -> ProduceResponse | None:
    data = ctx.broker.data
    if request.transactional_id is None and _has_transactional_batch(request):
        explain(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "transactional batches without a transactional id")
        return _all_failed(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleProduceRequest
        txn_id = request.transactional_id
        if txn_id is not None and _has_transactional_batch(request):
            if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
                explain(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, f"no WRITE on transactional id {txn_id}")
                return _all_failed(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        _, denied = split_authorized(ctx, AclOperation.WRITE, ResourceType.TOPIC, (t.name for t in request.topic_data))
    pending: list[tuple[Partition, AppendResult, int]] = []
    results: list[tuple[str, list[tuple[int, AppendResult]]]] = []
    for topic in request.topic_data:
        answers = []
        for pdata in topic.partition_data:
            if request.acks not in VALID_ACKS:
                result = AppendResult(ErrorCode.INVALID_REQUIRED_ACKS, -1, -1, f"acks={request.acks} is not 0, 1 or -1")
            elif topic.name in denied:
                result = AppendResult(ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, -1, f"no WRITE on topic {topic.name}")
            elif (error := leader_error(ctx, topic.name, pdata.index)) != ErrorCode.NONE:
                result = AppendResult(error, -1, -1)  # before the log: another process may hold it
            elif (part := data.partition(topic.name, pdata.index)) is None:
                result = AppendResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)
            elif (refusal := await _unverified(ctx, request.transactional_id, topic.name, part, pdata.records))[0]:
                result = AppendResult(refusal[0], -1, -1, refusal[1])
            else:
                result, wait_for = part.append_now(pdata.records, data.max_message_bytes(part))
                if wait_for >= 0:
                    pending.append((part, result, wait_for))
            answers.append((pdata.index, result))
        results.append((topic.name, answers))
    await _make_durable(pending)  # may turn a result into KAFKA_STORAGE_ERROR
    if request.acks == 0:
        failed = [(name, i, r.error) for name, answers in results for i, r in answers if r.error]
        if failed:
            # KafkaApis.handleProduceRequest: with acks=0 the only way to tell the producer that
            # something failed is to close the connection (it then refreshes metadata).

            raise CloseConnection(f"acks=0 produce failed: {failed}")
        return None
    response = ProduceResponse(
        responses=[
            TopicProduceResponse(name=name, partition_responses=[_response(i, r) for i, r in answers])
            for name, answers in results
        ]
    )
    if ctx.api_version >= 10:
        _name_current_leaders(ctx, response)
    return response


# AddPartitionsToTxnManager.produceRequestVersionToTransactionSupportedOperation.
FIRST_ABORTABLE_VERSION = 11  # GENERIC_ERROR_SUPPORTED: TRANSACTION_ABORTABLE is sent as it is
FIRST_ADD_PARTITION_VERSION = 12  # ADD_PARTITION: the partition joins the transaction

# ReplicaManager: coordinator errors a client may not retry well become NOT_ENOUGH_REPLICAS
# (retriable, no metadata refresh); CONCURRENT_TRANSACTIONS only below v12.
_RETRIABLE = {
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.NETWORK_EXCEPTION,
}


async def _unverified(
    ctx: RequestContext, transactional_id: str | None, topic: str, part: Partition, records: bytes | None
) -> tuple[int, str | None]:
    """UnifiedLog.maybeStartTransactionVerification: a transactional batch of a producer with no
    open transaction here must belong to a transaction that has this partition (v12+: is added
    to it). Returns the error the produce gets (NONE: append) and ReplicaManager's message."""
    service = ctx.broker.txn
    version = ctx.api_version
    adding = version >= FIRST_ADD_PARTITION_VERSION
    if (
        transactional_id is None
        or service is None
        or not records
        or len(records) < HEADER_SIZE
        or not (adding or ctx.broker.config.transaction_partition_verification_enable)
    ):
        return ErrorCode.NONE, None
    header = decode_header(records)
    if not header.is_transactional or part.has_ongoing_transaction(header.producer_id, header.producer_epoch):
        return ErrorCode.NONE, None
    tp = (topic, part.index)
    params = AddPartitionsParams(
        transactional_id, header.producer_id, header.producer_epoch, (tp,), client_version=2 if adding else 0
    )
    error = (await service.verify_for_leader(params, add=adding))[tp]  # over the broker link if elsewhere
    if error == ErrorCode.PRODUCER_FENCED:
        error = ErrorCode.INVALID_PRODUCER_EPOCH  # "Producers expect to handle INVALID_PRODUCER_EPOCH"
    elif error == ErrorCode.TRANSACTION_ABORTABLE and version < FIRST_ABORTABLE_VERSION:
        error = ErrorCode.INVALID_TXN_STATE  # "for backward compatibility with clients"
    why: str | None = None
    if error in _RETRIABLE or (error == ErrorCode.CONCURRENT_TRANSACTIONS and not adding):
        why = "Unable to verify the partition has been added to the transaction. "
        why += f"Underlying error: {ErrorCode(error).name}"
        error = ErrorCode.NOT_ENOUGH_REPLICAS
    elif error == ErrorCode.INVALID_TXN_STATE:
        why = "Partition was not added to the transaction"
    if error != ErrorCode.NONE:
        explain(ErrorCode(error), why or f"the transaction coordinator refused {topic}-{part.index}")
    return error, why


def _has_transactional_batch(request: ProduceRequest) -> bool:
    """ProduceRequest.hasTransactionalRecords (attribute bit 4 of any batch)."""
    for topic in request.topic_data:
        for pdata in topic.partition_data:
            records = pdata.records or b""
            if len(records) >= HEADER_SIZE and batch_attributes(records) & TRANSACTIONAL_BIT:
                return True
    return False


def _all_failed(request: ProduceRequest, error: int) -> ProduceResponse | None:
    if request.acks == 0:
        raise CloseConnection(f"acks=0 produce failed: {ErrorCode(error).name}")
    return ProduceResponse(
        responses=[
            TopicProduceResponse(
                name=t.name,
                partition_responses=[_response(p.index, AppendResult(error, -1, -1)) for p in t.partition_data],
            )
            for t in request.topic_data
        ]
    )


def _name_current_leaders(ctx: RequestContext, response: ProduceResponse) -> None:
    """KIP-951: a NOT_LEADER_OR_FOLLOWER answer says who leads now, and where it listens."""
    cluster, leaders = ctx.broker.cluster, set()
    for topic in response.responses:
        for p in topic.partition_responses:
            if p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                lead = cluster.leadership(topic.name, p.index)
                if lead is not None and lead.leader >= 0:
                    p.current_leader = LeaderIdAndEpoch(lead.leader, lead.epoch)
                    leaders.add(lead.leader)
    response.node_endpoints = [NodeEndpoint(n, *ctx.endpoint(cluster.node(n)), None) for n in sorted(leaders)]


async def _make_durable(pending: list[tuple[Partition, AppendResult, int]]) -> None:
    if len(pending) == 1:
        part, result, wait_for = pending[0]
        await part.make_durable(result, wait_for)
    elif pending:
        async with trio.open_nursery() as nursery:
            for part, result, wait_for in pending:
                nursery.start_soon(part.make_durable, result, wait_for)
