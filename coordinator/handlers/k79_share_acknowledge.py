"""ShareAcknowledge (key 79), v1-v2 (KIP-932: acknowledgements outside a ShareFetch).

v1: the stable version (Kafka 4.1; v0 was 4.0's early access).
v2: IsRenewAck (KIP-1222: Renew acknowledgements) and AcquisitionLockTimeoutMs in the answer.
Epoch 0 cannot open a share session (INVALID_SHARE_SESSION_EPOCH); -1 ends it after the
acknowledgements. The rules live in coordinator/share/service.py.
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
from protocol.errors import ErrorCode
from protocol.messages.share_acknowledge import (
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareAcknowledgeTopicResponse,
)


async def handle(ctx: RequestContext, request: ShareAcknowledgeRequest) -> ShareAcknowledgeResponse:
    share, error = service_or_error(ctx)
    if share is None:
        return ShareAcknowledgeResponse(error_code=error)
    if group_denied(ctx, request.group_id):
        return ShareAcknowledgeResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    answer = await share.share_acknowledge(share_request(ctx, request), topic_reader(ctx))
    if answer.error:
        return ShareAcknowledgeResponse(error_code=answer.error, error_message=answer.message)
    responses, leaders = topic_responses(
        ctx,
        answer.partitions,
        lambda a, lead: PartitionData(
            partition_index=a.partition,
            error_code=a.ack_error,
            error_message=a.ack_message,
            current_leader=LeaderIdAndEpoch(*lead),
        ),
        ShareAcknowledgeTopicResponse,
    )
    return ShareAcknowledgeResponse(
        acquisition_lock_timeout_ms=answer.lock_timeout_ms,
        responses=responses,
        node_endpoints=endpoints(ctx, leaders, NodeEndpoint),
    )
