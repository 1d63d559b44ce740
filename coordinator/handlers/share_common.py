"""What ShareFetch (78) and ShareAcknowledge (79) share on the wire: their acknowledgement batches
read into the share service's terms, the GROUP READ check Kafka makes first, and the current
leader (with its endpoint) of every partition answered NOT_LEADER_OR_FOLLOWER (KIP-951)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from coordinator.share.partition import AckBatch
from coordinator.share.service import AckPartition, PartitionAnswer, ShareRequest, ShareService
from protocol.errors import ErrorCode


def service_or_error(ctx: RequestContext) -> tuple[ShareService | None, int]:
    """The broker's share service, or why the request cannot be served: share groups off
    (UNSUPPORTED_VERSION, as KafkaApis when the share protocol is disabled)."""
    share = ctx.broker.share
    if share is None:
        explain(ErrorCode.UNSUPPORTED_VERSION, "share groups are not enabled (group.share.enable=false)")
        return None, ErrorCode.UNSUPPORTED_VERSION
    return share, ErrorCode.NONE


def group_denied(ctx: RequestContext, group_id: str | None) -> bool:
    """KafkaApis: share fetch and acknowledge need READ on the group."""
    if ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id or ""):
        return False
    explain(ErrorCode.GROUP_AUTHORIZATION_FAILED, f"not authorized to read group {group_id}")
    return True


def topic_reader(ctx: RequestContext) -> Callable[[str], bool]:
    cache: dict[str, bool] = {}

    def authorized(topic: str) -> bool:
        if topic not in cache:
            cache[topic] = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic)
        return cache[topic]

    return authorized


def ack_partitions(topics: Iterable[Any]) -> list[AckPartition]:
    return [
        AckPartition(
            t.topic_id,
            p.partition_index,
            tuple(
                AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types)) for b in p.acknowledgement_batches
            ),
        )
        for t in topics
        for p in t.partitions
        if p.acknowledgement_batches
    ]


def share_request(ctx: RequestContext, request: Any, **fetch: Any) -> ShareRequest:
    """What ShareFetch and ShareAcknowledge both carry (group, member, session epoch, piggybacked
    acknowledgements, v2's renew flag); `fetch`: ShareFetch's own fields (fetch, wanted, forgotten)."""
    v2 = ctx.api_version >= 2
    return ShareRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        epoch=request.share_session_epoch,
        acks=ack_partitions(request.topics),
        is_renew=v2 and request.is_renew_ack,
        supports_renew=v2,
        connection_id=ctx.connection_id,
        **fetch,
    )


def topic_responses(
    ctx: RequestContext,
    answers: Sequence[PartitionAnswer],
    partition: Callable[[PartitionAnswer, tuple[int, int]], Any],
    topic: Callable[..., Any],
) -> tuple[list[Any], set[int]]:
    """Each topic's answer with its partitions' (built by `partition` from the answer and its
    (leader, epoch), (-1, -1) unless NOT_LEADER_OR_FOLLOWER), and the leaders named."""
    grouped: dict[Any, list[PartitionAnswer]] = {}
    for a in answers:
        grouped.setdefault(a.topic_id, []).append(a)
    leaders: set[int] = set()
    responses = []
    for topic_id, partitions in grouped.items():
        out = []
        for a in partitions:
            lead = _leader_of(ctx, a)
            if lead is not None:
                leaders.add(lead[0])
            out.append(partition(a, lead or (-1, -1)))
        responses.append(topic(topic_id=topic_id, partitions=out))
    return responses, leaders


def _leader_of(ctx: RequestContext, answer: PartitionAnswer) -> tuple[int, int] | None:
    """(leader, epoch) for an answer that says NOT_LEADER_OR_FOLLOWER, else None."""
    if ErrorCode.NOT_LEADER_OR_FOLLOWER not in (answer.error, answer.ack_error):
        return None
    topic = ctx.broker.topics.by_id(answer.topic_id)
    lead = None if topic is None else ctx.broker.cluster.leadership(topic.name, answer.partition)
    return None if lead is None or lead.leader < 0 else (lead.leader, lead.epoch)


def endpoints(ctx: RequestContext, leaders: Iterable[int], make: Callable[..., Any]) -> list[Any]:
    """The leaders' endpoints on the listener this request came in on (as Produce and Fetch)."""
    cluster = ctx.broker.cluster
    return [make(n, *ctx.endpoint(cluster.node(n)), None) for n in sorted(leaders)]
