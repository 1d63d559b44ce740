"""Fetch (key 1), v4-v16.

v4: isolation level (READ_COMMITTED reads up to the last stable offset and gets the aborted
transactions its batches overlap, UnifiedLog.read with FetchIsolation.TXN_COMMITTED; kafkajs
asks for it by default), last_stable_offset, aborted_transactions. v5+: log_start_offset.
v7+: fetch sessions: we never create one (answer
session_id 0, which every client accepts and then keeps sending full fetches); a non-zero
session id is FETCH_SESSION_ID_NOT_FOUND. v9+: current_leader_epoch, checked by the leader
(FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); a broker that does not lead a partition answers
NOT_LEADER_OR_FOLLOWER for it, and any such error answers the fetch at once (no long poll).
v11+: rack_id, preferred_read_replica (-1). v12: flexible, tagged diverging_epoch etc. (defaults).
v13+: topics by id, not name (KIP-516); an unknown id is UNKNOWN_TOPIC_ID per partition.
librdkafka fetches at v16 when Metadata gave it topic ids, and @platformatic/kafka only fetches
correctly with them. v15: replica state (tagged, followers only). v16: NOT_LEADER_OR_FOLLOWER
carries the current leader and its endpoint (KIP-951).
Authorization: READ on each topic (else TOPIC_AUTHORIZATION_FAILED for its partitions).
"""

from __future__ import annotations

from coordinator.broker.fetch import FetchResult, FetchWant, fetch
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.leadership import leader_error
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.fetch import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
)

READ_COMMITTED = 1


async def handle(ctx: RequestContext, request: FetchRequest) -> FetchResponse:
    data = ctx.broker.data
    if request.session_id != 0:
        explain(
            ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
            f"fetch session {request.session_id} does not exist "
            "(this broker never creates sessions: send full fetches with session id 0)",
        )
        return FetchResponse(error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, session_id=0, responses=[])
    by_id = ctx.api_version >= 13
    names = [_topic_name(ctx, topic.topic_id) if by_id else topic.topic for topic in request.topics]
    denied: set[str] = set()
    if ctx.broker.authorizer is not None:  # KafkaApis.handleFetchRequest: READ on each topic
        _, denied = split_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (n for n in names if n))
    leader_errors = [
        ErrorCode.TOPIC_AUTHORIZATION_FAILED
        if name in denied
        else leader_error(ctx, name, p.partition, p.current_leader_epoch)
        if name
        else ErrorCode.NONE
        for name, topic in zip(names, request.topics)
        for p in topic.partitions
    ]
    wants = [
        FetchWant(name or "", p.partition, p.fetch_offset, p.partition_max_bytes)
        for name, topic in zip(names, request.topics)
        for p in topic.partitions
    ]
    served = [want for want, error in zip(wants, leader_errors) if error == ErrorCode.NONE]
    wait_ms = request.max_wait_ms if len(served) == len(wants) else 0  # an error answers at once
    committed = request.isolation_level == READ_COMMITTED
    fetched = iter(
        await fetch(
            data,
            served,
            max_wait_ms=wait_ms,
            min_bytes=request.min_bytes,
            max_bytes=request.max_bytes,
            committed=committed,
        )
    )
    results = [next(fetched) if error == ErrorCode.NONE else FetchResult(error, -1, -1, b"") for error in leader_errors]
    responses, i = [], 0
    for name, topic in zip(names, request.topics):
        partitions = []
        for p in topic.partitions:
            result = results[i]
            i += 1
            error = result.error
            if name is None:
                error = ErrorCode.UNKNOWN_TOPIC_ID
                explain(error, f"no topic has id {topic.topic_id}")
            elif error:
                _explain(name, p.partition, p.fetch_offset, result)
            partitions.append(
                PartitionData(
                    partition_index=p.partition,
                    error_code=error,
                    high_watermark=result.high_watermark,
                    last_stable_offset=result.last_stable_offset,
                    log_start_offset=result.log_start_offset,
                    aborted_transactions=_aborted(result, committed),
                    preferred_read_replica=-1,
                    records=result.records,
                )
            )
        responses.append(FetchableTopicResponse(topic=topic.topic, topic_id=topic.topic_id, partitions=partitions))
    response = FetchResponse(error_code=ErrorCode.NONE, session_id=0, responses=responses)
    if ctx.api_version >= 16:  # as KafkaApis: the leader is named only with its endpoint (kafka-python
        _name_current_leaders(ctx, response, names)  # 3.0 at v12 follows an id it cannot resolve)
    return response


def _aborted(result: FetchResult, committed: bool) -> list[AbortedTransaction] | None:
    if not committed:
        return None
    return [AbortedTransaction(producer_id=pid, first_offset=first) for pid, first in result.aborted or ()]


_LEADER_MOVED = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)


def _name_current_leaders(ctx: RequestContext, response: FetchResponse, names: list[str | None]) -> None:
    """KIP-951 (v16): who leads a partition we do not, or whose leader epoch the fetcher is behind."""
    cluster, leaders = ctx.broker.cluster, set()
    for name, topic in zip(names, response.responses):
        for p in topic.partitions:
            if p.error_code in _LEADER_MOVED and name is not None:
                lead = cluster.leadership(name, p.partition_index)
                if lead is not None and lead.leader >= 0:
                    p.current_leader = LeaderIdAndEpoch(lead.leader, lead.epoch)
                    leaders.add(lead.leader)
    if ctx.api_version >= 16:
        response.node_endpoints = [NodeEndpoint(n, *ctx.endpoint(cluster.node(n)), None) for n in sorted(leaders)]


def _topic_name(ctx: RequestContext, topic_id) -> str | None:
    topic = ctx.broker.topics.by_id(topic_id)
    return None if topic is None or topic.internal else topic.name


def _explain(topic: str, partition: int, offset: int, result) -> None:
    if result.error == ErrorCode.OFFSET_OUT_OF_RANGE:
        explain(
            result.error,
            f"fetch offset {offset} of {topic}-{partition} is outside "
            f"[log start {result.log_start_offset}, high watermark {result.high_watermark}]",
        )
    elif result.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        explain(result.error, f"{topic}-{partition} does not exist")
