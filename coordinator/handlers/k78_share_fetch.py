"""ShareFetch (key 78), v1-v2 (KIP-932: records acquired for a share group member).

v1: the stable version (Kafka 4.1; v0 was 4.0's early access): MaxRecords and BatchSize.
v2: ShareAcquireMode (KIP-1206: 1 = record_limit, exactly MaxRecords) and IsRenewAck (KIP-1222:
a request that only renews acquisition locks fetches nothing).
The rules live in coordinator/share/service.py; this handler maps fields and answers GROUP READ
failures and disabled share groups with the top-level code, as KafkaApis does.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.handlers.share_common import (
    endpoints,
    group_denied,
    service_or_error,
    share_request,
    topic_reader,
    topic_responses,
)
from coordinator.share.fetch import ShareFetchParams
from protocol.errors import ErrorCode
from protocol.messages.share_fetch import (
    AcquiredRecords,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
    ShareFetchableTopicResponse,
    ShareFetchRequest,
    ShareFetchResponse,
)

RECORD_LIMIT = 1  # ShareAcquireMode


async def handle(ctx: RequestContext, request: ShareFetchRequest) -> ShareFetchResponse:
    share, error = service_or_error(ctx)
    if share is None:
        return ShareFetchResponse(error_code=error)
    if group_denied(ctx, request.group_id):
        return ShareFetchResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    v2 = ctx.api_version >= 2
    answer = await share.share_fetch(
        share_request(
            ctx,
            request,
            fetch=ShareFetchParams(
                group_id=request.group_id or "",
                member_id=request.member_id or "",
                max_wait_ms=request.max_wait_ms,
                min_bytes=request.min_bytes,
                max_bytes=request.max_bytes,
                max_records=request.max_records,
                batch_size=request.batch_size,
                record_limit=v2 and request.share_acquire_mode == RECORD_LIMIT,
            ),
            wanted=[(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions],
            forgotten=[(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions],
        ),
        topic_reader(ctx),
    )
    if answer.error:
        return ShareFetchResponse(error_code=answer.error, error_message=answer.message)
    responses, leaders = topic_responses(
        ctx,
        answer.partitions,
        lambda a, lead: PartitionData(
            partition_index=a.partition,
            error_code=a.error,
            error_message=a.message,
            acknowledge_error_code=a.ack_error,
            acknowledge_error_message=a.ack_message,
            current_leader=LeaderIdAndEpoch(*lead),
            records=a.records,
            acquired_records=[AcquiredRecords(r.first_offset, r.last_offset, r.delivery_count) for r in a.acquired],
        ),
        ShareFetchableTopicResponse,
    )
    return ShareFetchResponse(
        acquisition_lock_timeout_ms=answer.lock_timeout_ms,
        responses=responses,
        node_endpoints=endpoints(ctx, leaders, NodeEndpoint),
    )
