"""ConsumerGroupHeartbeat (key 68), v0-v1 (KIP-848, the consumer rebalance protocol).

v0: a joining member (epoch 0) with an empty MemberId gets one made by the coordinator.
v1: SubscribedTopicRegex (RE2 syntax, resolved by the coordinator); the member makes its own id
(KIP-1082), so an empty MemberId is INVALID_REQUEST.
Member epoch 0 joins, -1 leaves, -2 is a static member leaving for its session timeout. The rules
are in coordinator/groups/consumer/heartbeat.py; this handler only maps fields. Answers
UNSUPPORTED_VERSION when group.coordinator.rebalance.protocols lacks "consumer".
Authorization (Kafka 4.x KafkaApis): READ on the group (else GROUP_AUTHORIZATION_FAILED), DESCRIBE
on every subscribed topic name (else TOPIC_AUTHORIZATION_FAILED); regex subscriptions are not
filtered by DESCRIBE here (Kafka 4.1+ resolves them per principal).
"""

from __future__ import annotations

from functools import lru_cache

from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.consumer_ops import ConsumerHeartbeatParams
from coordinator.handlers.authz import refused, split_authorized
from coordinator.handlers.request_context import RequestContext, java_inet_text
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from protocol.messages.consumer_group_heartbeat import TopicPartitions as WireTopicPartitions

# A member heartbeats every few seconds from the same address: format it once (Kafka's "/ip").
_client_address = lru_cache(maxsize=4096)(java_inet_text)


async def handle(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    if ctx.broker.authorizer is not None:
        if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
            return refused(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED, f"no READ on group {request.group_id}")
        if request.subscribed_topic_names:  # Kafka 4.x KafkaApis: DESCRIBE on every subscribed topic
            _, denied = split_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, request.subscribed_topic_names)
            if denied:
                why = f"no DESCRIBE on subscribed topics {', '.join(sorted(denied))}"
                return refused(ctx, request, ErrorCode.TOPIC_AUTHORIZATION_FAILED, why)
    owned = request.topic_partitions
    result = await ctx.broker.groups.consumer_group_heartbeat(
        ConsumerHeartbeatParams(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            instance_id=request.instance_id,
            rack_id=request.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            subscribed_topic_names=request.subscribed_topic_names,
            subscribed_topic_regex=request.subscribed_topic_regex if ctx.api_version >= 1 else None,
            server_assignor=request.server_assignor,
            topic_partitions=None
            if owned is None
            else tuple(TopicPartitions(tp.topic_id, tuple(tp.partitions)) for tp in owned),
            client_id=ctx.client_id,
            client_host=_client_address(ctx.client_host),
            api_version=ctx.api_version,
        )
    )
    assignment = (
        None
        if result.assignment is None
        else Assignment(
            topic_partitions=[WireTopicPartitions(tp.topic_id, list(tp.partitions)) for tp in result.assignment]
        )
    )
    return ConsumerGroupHeartbeatResponse(
        error_code=result.error_code,
        error_message=result.error_message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=assignment,
    )
