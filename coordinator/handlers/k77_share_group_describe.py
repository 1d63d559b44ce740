"""ShareGroupDescribe (key 77), v1 (KIP-932; v0 was Kafka 4.0's early access, removed in 4.1).

Each group's state (Empty, Stable, or Dead for an unknown one), epochs, assignor ("simple") and
members with their subscriptions and current assignment. Unknown groups and groups of another
type: GROUP_ID_NOT_FOUND; an empty id: INVALID_GROUP_ID; without DESCRIBE on the group:
GROUP_AUTHORIZATION_FAILED, and a group whose members hold a topic the client may not DESCRIBE
is TOPIC_AUTHORIZATION_FAILED with no members (KafkaApis). Authorized operations are computed when
asked for.
Answers UNSUPPORTED_VERSION when group.share.enable is off.
"""

from __future__ import annotations

from coordinator.groups.share.describe import DescribedShareGroup, DescribedShareMember
from coordinator.handlers.request_context import RequestContext
from coordinator.observe.reasons import explain
from coordinator.security.authorization import AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.share_group_describe import (
    Assignment,
    DescribedGroup,
    Member,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
    TopicPartitions,
)


def _member(m: DescribedShareMember) -> Member:
    return Member(
        member_id=m.member_id,
        rack_id=m.rack_id,
        member_epoch=m.member_epoch,
        client_id=m.client_id,
        client_host=m.client_host,
        subscribed_topic_names=list(m.subscribed_topic_names),
        assignment=Assignment(
            topic_partitions=[TopicPartitions(t.topic_id, t.topic_name, list(t.partitions)) for t in m.assignment]
        ),
    )


def _group(g: DescribedShareGroup) -> DescribedGroup:
    return DescribedGroup(
        error_code=g.error_code,
        error_message=g.error_message,
        group_id=g.group_id,
        group_state=g.group_state,
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
        assignor_name=g.assignor_name,
        members=[_member(m) for m in g.members],
    )


async def handle(ctx: RequestContext, request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    group_ids = list(request.group_ids)
    if not ctx.broker.groups.share.settings.enabled:
        explain(ErrorCode.UNSUPPORTED_VERSION, "share groups are not enabled (group.share.enable)")
        return ShareGroupDescribeResponse(
            groups=[DescribedGroup(error_code=ErrorCode.UNSUPPORTED_VERSION, group_id=g) for g in group_ids]
        )
    refused = [g for g in group_ids if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g)]
    allowed = [g for g in group_ids if g not in refused]
    described = await ctx.broker.groups.share_group_describe(allowed) if allowed else []
    groups = [DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=g) for g in refused]
    for g in described:
        group = _group(g)
        hidden = {t.topic_name for m in g.members for t in m.assignment}
        if ctx.broker.authorizer is not None and not all(
            ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name) for name in hidden
        ):
            explain(ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"group {g.group_id!r} holds topics the client may not see")
            groups.append(
                DescribedGroup(
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    error_message="The group has described topic(s) that the client is not authorized to describe.",
                    group_id=g.group_id,
                )
            )
            continue
        if request.include_authorized_operations and not g.error_code:
            group.authorized_operations = ctx.authorized_operations(ResourceType.GROUP, g.group_id)
        groups.append(group)
    return ShareGroupDescribeResponse(groups=groups)
