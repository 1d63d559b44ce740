"""ConsumerGroupHeartbeat (API 68) and ConsumerGroupDescribe (API 69) as operations on a shard.

Each runs the KIP-848 core (groups/consumer) against a `ShardConsumerContext` over the runtime's
operation, with the classic bridge that converts groups between protocols (migration/). The
request checks Kafka's GroupCoordinatorService makes before routing (INVALID_REQUEST,
UNSUPPORTED_ASSIGNOR) are in `validate_heartbeat`, which the service calls first.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.groups.consumer.describe import DescribedConsumerGroup, describe_consumer_groups
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.heartbeat import (
    ConsumerHeartbeatParams,
    ConsumerHeartbeatResult,
    consumer_group_heartbeat,
    validate,
)
from coordinator.groups.consumer.membership import fence_by_timer
from coordinator.groups.consumer_context import ShardConsumerContext
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.migration.bridge import CLASSIC_BRIDGE
from coordinator.groups.shard import GroupContext
from coordinator.observe.reasons import because, explain
from protocol.errors import ErrorCode

__all__ = [
    "ConsumerDescribeParams",
    "ConsumerHeartbeatParams",
    "ConsumerHeartbeatResult",
    "DescribedConsumerGroup",
    "consumer_group_describe",
    "consumer_heartbeat",
    "fence_member",
    "validate_heartbeat",
]


@dataclass(frozen=True)
class ConsumerDescribeParams:
    group_ids: list[str]


def validate_heartbeat(config: GroupConfig, p: ConsumerHeartbeatParams) -> ConsumerHeartbeatResult | None:
    """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid: the error answer, or
    None when the request may go to its group."""
    try:
        validate(p, config.consumer.assignors)
    except ConsumerGroupError as exc:
        explain(exc.code, exc.message)
        return ConsumerHeartbeatResult(error_code=exc.code, error_message=exc.message)
    return None


def consumer_heartbeat(op: GroupContext, p: ConsumerHeartbeatParams) -> ConsumerHeartbeatResult:
    """The service has run `validate_heartbeat` on `p` before routing it here."""
    return consumer_group_heartbeat(ShardConsumerContext.of(op, CLASSIC_BRIDGE), p, validated=True)


def fence_member(op: GroupContext, group_id: str, member_id: str, reason: str) -> ErrorCode:
    """Fence one member as its session timeout would (the control plane's "expire member")."""
    ctx = ShardConsumerContext.of(op, CLASSIC_BRIDGE)
    group = op.shard.consumer_group(group_id)
    if group is None or member_id not in group.members:
        explain(ErrorCode.UNKNOWN_MEMBER_ID, f"no member {member_id!r} in consumer group {group_id!r}")
        return ErrorCode.UNKNOWN_MEMBER_ID
    because(reason)
    fence_by_timer(ctx, group_id, member_id, f"left: {reason}")
    return ErrorCode.NONE


def consumer_group_describe(op: GroupContext, p: ConsumerDescribeParams) -> list[DescribedConsumerGroup]:
    """Kafka consumerGroupDescribe; an empty group id is INVALID_GROUP_ID (GroupCoordinatorService)."""
    ctx = ShardConsumerContext.of(op, CLASSIC_BRIDGE)
    out = []
    for group_id in p.group_ids:
        if not group_id:
            explain(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
            out.append(DescribedConsumerGroup("", ErrorCode.INVALID_GROUP_ID))
            continue
        (described,) = describe_consumer_groups(ctx.groups, ctx.topics, ctx.settings, [group_id])
        if described.error_code:
            explain(described.error_code, described.error_message or "")
        out.append(described)
    return out
