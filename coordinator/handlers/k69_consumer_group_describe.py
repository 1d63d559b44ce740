"""ConsumerGroupDescribe (key 69), v0-v1 (KIP-848).

v0: each group's state, epochs, assignor and members with their current and target assignment.
v1: each member's type, 0 classic protocol or 1 consumer protocol (KIP-1099).
Unknown groups and groups of another type: GROUP_ID_NOT_FOUND; an empty id: INVALID_GROUP_ID.
Authorized operations are not computed (Kafka's "not asked", INT32_MIN). Answers
UNSUPPORTED_VERSION when group.coordinator.rebalance.protocols lacks "consumer".
"""

from __future__ import annotations

from coordinator.groups.consumer.describe import DescribedConsumerMember, DescribedTopicPartitions
from coordinator.handlers.request_context import RequestContext
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
    described = await ctx.broker.groups.consumer_group_describe(list(request.group_ids))
    return ConsumerGroupDescribeResponse(
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
