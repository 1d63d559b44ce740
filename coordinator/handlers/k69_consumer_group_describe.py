"""ConsumerGroupDescribe (key 69), v0-v1 (KIP-848).

v0: each group's state, epochs, assignor and members with their current and target assignment.
v1: each member's type, 0 classic protocol or 1 consumer protocol (KIP-1099).
Unknown groups and groups of another type: GROUP_ID_NOT_FOUND; an empty id: INVALID_GROUP_ID.
Authorized operations are not computed (Kafka's "not asked", INT32_MIN). Answers
UNSUPPORTED_VERSION when group.coordinator.rebalance.protocols lacks "consumer".
Authorization: DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED); a group assigning a topic the
principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED (Kafka 4.x); authorized operations
when asked.
"""

from __future__ import annotations

from coordinator.groups.consumer.describe import DescribedConsumerMember, DescribedTopicPartitions
from coordinator.handlers.authz import split_authorized
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_describe import (
    Assignment,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedGroup,
    Member,
    TopicPartitions,
)


def _assignment(parts: tuple[DescribedTopicPartitions, ...]) -> Assignment:
    return Assignment(topic_partitions=[TopicPartitions(p.topic_id, p.topic_name, list(p.partitions)) for p in parts])


def _member(m: DescribedConsumerMember, version: int) -> Member:
    return Member(
        member_id=m.member_id,
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        member_epoch=m.member_epoch,
        client_id=m.client_id,
        client_host=m.client_host,
        subscribed_topic_names=list(m.subscribed_topic_names),
        subscribed_topic_regex=m.subscribed_topic_regex,
        assignment=_assignment(m.assignment),
        target_assignment=_assignment(m.target_assignment),
        member_type=m.member_type if version >= 1 else -1,
    )


async def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    version = ctx.api_version
    names = list(request.group_ids)
    _, denied = split_authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, names)
    allowed = [g for g in names if g not in denied]
    described = await ctx.broker.groups.consumer_group_describe(allowed) if allowed else []
    response = ConsumerGroupDescribeResponse(
        groups=[
            DescribedGroup(
                error_code=g.error_code,
                error_message=g.error_message,
                group_id=g.group_id,
                group_state=g.group_state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name=g.assignor_name,
                members=[_member(m, version) for m in g.members],
            )
            for g in described
        ]
    )
    for g in response.groups:
        if ctx.broker.authorizer is not None and _hides_topics(ctx, g):
            g.error_code, g.members = ErrorCode.TOPIC_AUTHORIZATION_FAILED, []
            g.error_message = "The group has described topic(s) that the client is not authorized to describe."
        elif request.include_authorized_operations and g.error_code == ErrorCode.NONE:
            g.authorized_operations = ctx.authorized_operations(ResourceType.GROUP, g.group_id)
    response.groups += [
        DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None, group_id=g) for g in denied
    ]
    return response


def _hides_topics(ctx: RequestContext, group: DescribedGroup) -> bool:
    """Kafka 4.x: a group whose (target) assignments name a topic the principal may not DESCRIBE is
    answered TOPIC_AUTHORIZATION_FAILED, without members."""
    names = {
        tp.topic_name for m in group.members for a in (m.assignment, m.target_assignment) for tp in a.topic_partitions
    }
    return any(not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, n) for n in names)
