"""JoinGroup from a classic-protocol member of a consumer group (Kafka 4.2
GroupMetadataManager.classicGroupJoinToConsumerGroup). A JoinGroup is a consumer-group heartbeat
in disguise: the subscription comes from the embedded ConsumerProtocol metadata, the group epoch
is bumped when it changed, the target is recomputed and the member reconciled; the answer is
immediate (member epoch as generation, no leader). A static member replacing the last
consumer-protocol member downgrades the group. The other classic APIs: classic_members.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from coordinator.groups.consumer.context import Persisted
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import METADATA_REFRESH_INTERVAL_MS, ConsumerGroup
from coordinator.groups.consumer.heartbeat import kafka_uuid_text
from coordinator.groups.consumer.member import ConsumerGroupMember
from coordinator.groups.consumer.membership import (
    check_not_full,
    fence_by_timer,
    join_timeout_key,
    schedule_session_timeout,
    static_member,
    sync_timeout_key,
)
from coordinator.groups.consumer.rebalance import (
    maybe_reconcile,
    member_metadata_changed,
    update_subscription_metadata,
    update_target_assignment,
)
from coordinator.groups.consumer.records import ClassicMemberMetadata, TopicPartitions
from coordinator.groups.consumer.regex_refresh import maybe_update_regexes
from coordinator.groups.consumer_context import ShardConsumerContext
from coordinator.groups.group import CONSUMER_PROTOCOL_TYPE
from coordinator.groups.migration.bridge import convert_to_classic
from coordinator.groups.migration.classic_members import answer_error, classic_context
from coordinator.groups.migration.convert import ConversionError, classic_protocols, member_subscription
from coordinator.groups.requests import UNKNOWN_MEMBER_ID, JoinGroupParams, JoinGroupResult
from coordinator.groups.shard import GroupContext
from protocol.errors import ErrorCode

__all__ = ["join_consumer_group", "supports_classic_protocols"]


def supports_classic_protocols(group: ConsumerGroup, protocol_type: str, names: list[str]) -> bool:
    """Kafka ConsumerGroup.supportsClassicProtocols: a protocol every classic member supports."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    if group.is_empty():
        return bool(names)
    return any(group.classic_protocols.get(name, 0) == group.num_classic_members for name in names)


def schedule_sync_timeout(ctx: ShardConsumerContext, group_id: str, member_id: str, timeout_ms: int) -> None:
    ctx.timers.schedule(
        sync_timeout_key(group_id, member_id),
        ctx.now_ms + timeout_ms,
        lambda c: fence_by_timer(
            c, group_id, member_id, "left: the member failed to sync within the rebalance timeout"
        ),
    )


# -- JoinGroup ----------------------------------------------------------------------------------


def join_consumer_group(op: GroupContext, group: ConsumerGroup, p: JoinGroupParams) -> JoinGroupResult:
    ctx = classic_context(op)
    unknown = p.member_id == UNKNOWN_MEMBER_ID
    member_id = kafka_uuid_text(ctx) if unknown else p.member_id
    try:
        check_not_full(ctx, group, member_id)
        if not supports_classic_protocols(group, p.protocol_type, [name for name, _ in p.protocols]):
            raise ConsumerGroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Member {member_id}'s protocols are not supported."
            )
        if unknown and p.group_instance_id is None and p.request_version >= 4:
            ctx.explain(
                ErrorCode.MEMBER_ID_REQUIRED,
                f"JoinGroup v{p.request_version} without a member id: rejoin "
                f"consumer group {group.group_id} with member id {member_id!r} (KIP-394)",
            )
            return JoinGroupResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)
        return _join(ctx, group, p, member_id, unknown)
    except ConsumerGroupError as exc:
        return JoinGroupResult(answer_error(ctx, exc), p.member_id)


def _join(
    ctx: ShardConsumerContext, group: ConsumerGroup, p: JoinGroupParams, member_id: str, unknown: bool
) -> JoinGroupResult:
    gid = group.group_id
    records: list[Any] = []
    if p.group_instance_id is None:
        member = group.members.get(member_id) or ConsumerGroupMember(member_id)
    else:
        member = static_member(group, member_id, -1, p.group_instance_id, (), unknown, records, classic=True)
    existing_static = group.static_member(p.group_instance_id)
    downgrade = existing_static is not None and _downgrade_on_replacement(ctx, group, existing_static)
    try:
        subscription = member_subscription(p.protocols[0][1] if p.protocols else b"")
    except ConversionError as exc:
        raise ConsumerGroupError(
            ErrorCode.UNKNOWN_SERVER_ERROR,
            f"Malformed embedded consumer protocol in subscription deserialization: {exc}",
        ) from None
    updated = replace(
        member,
        instance_id=p.group_instance_id if p.group_instance_id is not None else member.instance_id,
        rack_id=subscription.rack_id if subscription.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=p.rebalance_timeout_ms if p.rebalance_timeout_ms != -1 else member.rebalance_timeout_ms,
        subscribed_topic_names=frozenset(subscription.topics),
        subscribed_topic_regex="",
        client_id=p.client_id,
        client_host=p.client_host,
        classic_member_metadata=ClassicMemberMetadata(p.session_timeout_ms, classic_protocols(p.protocols)),
    )
    owned = _owned(ctx, subscription.owned_partitions)

    names_changed = member_metadata_changed(gid, member, updated, records)
    regex_update = maybe_update_regexes(ctx, group, member, updated, records)
    bump = names_changed or regex_update.regex_updated
    group_epoch, sub_type = group.group_epoch, group.subscription_type
    refreshed = bump or group.has_metadata_expired(ctx.now_ms)
    if refreshed:
        group_epoch, sub_type, bumped = update_subscription_metadata(ctx, group, bump, member, updated, records)
        if bumped:
            ctx.explain(
                ErrorCode.NONE,
                f"group {gid} epoch bumped to {group_epoch}: classic member {member_id} "
                "joined or changed its subscription",
            )
    if downgrade:
        if not bump:
            updated = maybe_reconcile(
                ctx,
                group,
                updated,
                group.assignment_epoch,
                group.target_assignment_of(updated.member_id, updated.instance_id),
                False,
                owned,
                records,
            )
        convert_to_classic(ctx, group, (), updated, records, rebalance=bump)
        # Kafka writes the whole result without replay: the classic group is already in place.
        records = [r if isinstance(r, Persisted) else Persisted(r) for r in records]
    else:
        if group_epoch > group.assignment_epoch:
            target = update_target_assignment(ctx, group, group_epoch, member, updated, sub_type, records)
            target_epoch = group_epoch
        else:
            target_epoch = group.assignment_epoch
            target = group.target_assignment_of(updated.member_id, updated.instance_id)
        updated = maybe_reconcile(ctx, group, updated, target_epoch, target, bump, owned, records)
    for record in records:
        ctx.emit(record)
    live = ctx.groups.get(gid)
    if refreshed and isinstance(live, ConsumerGroup):
        live.set_metadata_refresh_deadline(ctx.now_ms + METADATA_REFRESH_INTERVAL_MS, group_epoch)
    ctx.timers.cancel(join_timeout_key(gid, updated.member_id))
    if not downgrade:
        schedule_session_timeout(ctx, gid, updated.member_id, p.session_timeout_ms)
        schedule_sync_timeout(ctx, gid, updated.member_id, p.rebalance_timeout_ms)
    return JoinGroupResult(
        ErrorCode.NONE,
        updated.member_id,
        generation_id=updated.member_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        protocol_name=p.protocols[0][0],
    )


def _downgrade_on_replacement(ctx: ShardConsumerContext, group: ConsumerGroup, replaced: ConsumerGroupMember) -> bool:
    """Kafka validateOnlineDowngradeWithReplacedMember: the replaced static member is the last one
    using the consumer protocol."""
    if replaced.use_classic_protocol or group.num_classic_members != group.num_members() - 1:
        return False
    if not ctx.settings.migration_policy.downgrade_enabled:
        return False
    return group.num_members() <= ctx.op.shard.config.max_size


def _owned(ctx: ShardConsumerContext, partitions: Any) -> tuple[TopicPartitions, ...]:
    """The partitions the member says it owns (ConsumerProtocolSubscription v1+), by topic id."""
    out = []
    for tp in partitions:
        topic = ctx.topics.by_name(tp.topic)
        if topic is not None:
            out.append(TopicPartitions(topic.topic_id, tuple(tp.partitions)))
    return tuple(out)
