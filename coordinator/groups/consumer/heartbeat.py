"""ConsumerGroupHeartbeat (API 68, KIP-848) for consumer-protocol members: the operation
`consumer_group_heartbeat(ctx, params) -> ConsumerHeartbeatResult` (Kafka 4.2
GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid + GroupMetadataManager
.consumerGroupHeartbeat). Epoch 0 joins (or rejoins), -1 leaves, -2 is a static member leaving
for at most its session timeout, any other epoch is a regular heartbeat. Errors are Kafka's codes
and messages; an operation that answers an error emits no record. v0: the coordinator makes the
member id; v1+: the client does (KIP-1082).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from coordinator.groups.consumer.context import ConsumerOpContext
from coordinator.groups.consumer.errors import ConsumerGroupError, group_id_not_found, invalid_request
from coordinator.groups.consumer.group import METADATA_REFRESH_INTERVAL_MS, ConsumerGroup
from coordinator.groups.consumer.member import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupMember,
    to_topic_partitions,
)
from coordinator.groups.consumer.membership import (
    check_not_full,
    consumer_group,
    dynamic_member,
    fence_members,
    get_member,
    schedule_session_timeout,
    static_leave_records,
    static_member,
)
from coordinator.groups.consumer.rebalance import (
    maybe_reconcile,
    member_metadata_changed,
    update_subscription_metadata,
    update_target_assignment,
)
from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.consumer.regex_refresh import RegexUpdate, maybe_update_regexes
from protocol.errors import ErrorCode

CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1


@dataclass(frozen=True)
class ConsumerHeartbeatParams:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: Sequence[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: Sequence[TopicPartitions] | None = None  # owned partitions; None = unchanged
    client_id: str = ""
    client_host: str = ""  # Kafka stores InetAddress.toString(), e.g. "/127.0.0.1"
    api_version: int = 1


@dataclass(frozen=True)
class ConsumerHeartbeatResult:
    error_code: int = 0
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: tuple[TopicPartitions, ...] | None = None  # None: no change to report


def consumer_group_heartbeat(
    ctx: ConsumerOpContext, params: ConsumerHeartbeatParams, validated: bool = False
) -> ConsumerHeartbeatResult:
    """`validated`: the caller already ran `validate` (GroupCoordinatorService does, before routing)."""
    try:
        if not validated:
            validate(params, ctx.settings.assignors)
        if params.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return _leave(ctx, params)
        return _heartbeat(ctx, params)
    except ConsumerGroupError as exc:
        ctx.explain(exc.code, exc.message)
        return ConsumerHeartbeatResult(error_code=exc.code, error_message=exc.message)


def _blank(value: str | None) -> bool:
    """Kafka throwIfEmptyString: non-null but empty after trimming."""
    return value is not None and not value.strip()


def validate(p: ConsumerHeartbeatParams, assignors: Sequence[str]) -> None:
    """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid."""
    if (
        p.api_version >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION
        or p.member_epoch > 0
        or p.member_epoch == LEAVE_GROUP_MEMBER_EPOCH
    ) and _blank(p.member_id):
        raise invalid_request("MemberId can't be empty.")
    if _blank(p.group_id):
        raise invalid_request("GroupId can't be empty.")
    if _blank(p.instance_id):
        raise invalid_request("InstanceId can't be empty.")
    if _blank(p.rack_id):
        raise invalid_request("RackId can't be empty.")
    if p.member_epoch == 0:
        if p.rebalance_timeout_ms == -1:
            raise invalid_request("RebalanceTimeoutMs must be provided in first request.")
        if p.topic_partitions is None or len(p.topic_partitions) > 0:
            raise invalid_request("TopicPartitions must be empty when (re-)joining.")
        # An empty list of names or an empty regex is a member subscribed to nothing.
        if p.subscribed_topic_names is None and p.subscribed_topic_regex is None:
            raise invalid_request(
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
            )
    elif p.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if p.instance_id is None:
            raise invalid_request("InstanceId can't be null.")
    elif p.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid_request("MemberEpoch is invalid.")
    if p.server_assignor is not None and p.server_assignor not in assignors:
        raise ConsumerGroupError(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            (f"ServerAssignor {p.server_assignor} is not supported. Supported assignors: {', '.join(assignors)}."),
        )


def kafka_uuid_text(ctx: ConsumerOpContext) -> str:
    """Uuid.randomUuid().toString(): URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(ctx.new_uuid().bytes).decode("ascii").rstrip("=")


def _group_for_heartbeat(ctx: ConsumerOpContext, group_id: str, create: bool, records: list[Any]) -> ConsumerGroup:
    """Kafka getOrMaybeCreateConsumerGroup: a new group is a fresh object that replay
    materializes; an empty classic group is deleted and replaced."""
    existing = ctx.groups.get(group_id)
    if existing is None:
        if not create:
            raise group_id_not_found(f"Consumer group {group_id} not found.")
        return ConsumerGroup(group_id)
    if isinstance(existing, ConsumerGroup):
        return existing
    if create:
        tombstones = ctx.classic.empty_classic_tombstones(existing)
        if tombstones is not None:
            records.extend(tombstones)
            return ConsumerGroup(group_id)
        upgraded = ctx.classic.upgrade(ctx, existing, records)
        if upgraded is not None:
            return upgraded
    raise group_id_not_found(f"Group {group_id} is not a consumer group.")


def _heartbeat(ctx: ConsumerOpContext, p: ConsumerHeartbeatParams) -> ConsumerHeartbeatResult:
    records: list[Any] = []
    gid = p.group_id
    create = p.member_epoch == 0
    group = _group_for_heartbeat(ctx, gid, create, records)
    check_not_full(ctx, group, p.member_id)
    member_id = p.member_id or kafka_uuid_text(ctx)
    if p.instance_id is None:
        member = dynamic_member(group, member_id, p.member_epoch, p.topic_partitions, create)
    else:
        member = static_member(group, member_id, p.member_epoch, p.instance_id, p.topic_partitions, create, records)

    # 1. The member and its subscription; the group epoch when either changed.
    updated = _with_request_fields(member, p)
    names_changed = member_metadata_changed(gid, member, updated, records)
    regex_update = maybe_update_regexes(ctx, group, member, updated, records)
    subscription_changed = names_changed or regex_update.regex_updated
    group_epoch, sub_type = group.group_epoch, None
    # A new group leaves epoch 0 at once; an unresolved new regex waits for its resolution.
    bump = group_epoch == 0 or names_changed or regex_update is RegexUpdate.REGEX_UPDATED_AND_RESOLVED
    refreshed = bump or group.has_metadata_expired(ctx.now_ms)
    bumped = False
    if refreshed:
        group_epoch, sub_type, bumped = update_subscription_metadata(ctx, group, bump, member, updated, records)

    # 2. A new target assignment when the group epoch is ahead of it.
    if group_epoch > group.assignment_epoch:
        target = update_target_assignment(
            ctx,
            group,
            group_epoch,
            member,
            updated,
            sub_type if sub_type is not None else group.subscription_type,
            records,
        )
        target_epoch = group_epoch
    else:
        target_epoch = group.assignment_epoch
        target = group.target_assignment_of(updated.member_id, updated.instance_id)

    # 3. Reconcile the member towards its target.
    updated = maybe_reconcile(
        ctx, group, updated, target_epoch, target, subscription_changed, p.topic_partitions, records
    )
    schedule_session_timeout(ctx, gid, member_id)
    if bumped:
        why = f"member {member_id} joined or changed its subscription" if bump else "the subscribed topics changed"
        ctx.explain(ErrorCode.NONE, f"group {gid} epoch bumped to {group_epoch}: {why}")
    _emit_all(ctx, records)
    if refreshed:
        live = ctx.groups.get(gid)
        if isinstance(live, ConsumerGroup):
            live.set_metadata_refresh_deadline(ctx.now_ms + METADATA_REFRESH_INTERVAL_MS, group_epoch)

    # The assignment goes out on a (re)join, on a full request (after an error or timeout the
    # client sends every field) and whenever it changed.
    full = (
        p.rebalance_timeout_ms != -1
        and p.topic_partitions is not None
        and (p.subscribed_topic_names is not None or p.subscribed_topic_regex is not None)
    )
    send_assignment = p.member_epoch == 0 or full or updated.assigned_partitions != member.assigned_partitions
    return ConsumerHeartbeatResult(
        member_id=updated.member_id,
        member_epoch=updated.member_epoch,
        heartbeat_interval_ms=ctx.settings.heartbeat_interval_for(gid),
        assignment=to_topic_partitions(updated.assigned_partitions) if send_assignment else None,
    )


def _with_request_fields(member: ConsumerGroupMember, p: ConsumerHeartbeatParams) -> ConsumerGroupMember:
    """The member as the request describes it; null fields (and rebalance timeout -1) mean
    unchanged. The same object when nothing changed (the common heartbeat)."""
    fields = (
        p.instance_id if p.instance_id is not None else member.instance_id,
        p.rack_id if p.rack_id is not None else member.rack_id,
        p.rebalance_timeout_ms if p.rebalance_timeout_ms != -1 else member.rebalance_timeout_ms,
        p.server_assignor if p.server_assignor is not None else member.server_assignor,
        frozenset(p.subscribed_topic_names) if p.subscribed_topic_names is not None else member.subscribed_topic_names,
        p.subscribed_topic_regex if p.subscribed_topic_regex is not None else member.subscribed_topic_regex,
        p.client_id,
        p.client_host,
        None,
    )
    current = (
        member.instance_id,
        member.rack_id,
        member.rebalance_timeout_ms,
        member.server_assignor,
        member.subscribed_topic_names,
        member.subscribed_topic_regex,
        member.client_id,
        member.client_host,
        member.classic_member_metadata,
    )
    if fields == current:
        return member
    (instance_id, rack_id, rebalance_timeout_ms, server_assignor, names, regex, client_id, client_host, classic) = (
        fields
    )
    return replace(
        member,
        instance_id=instance_id,
        rack_id=rack_id,
        rebalance_timeout_ms=rebalance_timeout_ms,
        server_assignor=server_assignor,
        subscribed_topic_names=names,
        subscribed_topic_regex=regex,
        client_id=client_id,
        client_host=client_host,
        classic_member_metadata=classic,
    )


def _leave(ctx: ConsumerOpContext, p: ConsumerHeartbeatParams) -> ConsumerHeartbeatResult:
    """Kafka consumerGroupLeave: -1 fences the member; -2 keeps a static member's assignment
    (epoch -2) until it rejoins or its session expires."""
    group = consumer_group(ctx, p.group_id)
    records: list[Any] = []
    if p.instance_id is None:
        member = get_member(group, p.member_id)
        fence_members(ctx, group, [member], records, "left the group")
        result = ConsumerHeartbeatResult(member_id=p.member_id, member_epoch=p.member_epoch)
    else:
        static = group.static_member(p.instance_id)
        if static is None:
            raise ConsumerGroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {p.instance_id} is unknown.")
        member = static
        if member.member_id != p.member_id:
            raise ConsumerGroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                (
                    f"Static member {p.member_id} with instance id {p.instance_id} was fenced by member "
                    f"{member.member_id}."
                ),
            )
        if p.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            records.extend(static_leave_records(group, member))
            result = ConsumerHeartbeatResult(member_id=member.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        else:
            fence_members(ctx, group, [member], records, "left the group")
            result = ConsumerHeartbeatResult(member_id=p.member_id, member_epoch=p.member_epoch)
    _emit_all(ctx, records)
    return result


def _emit_all(ctx: ConsumerOpContext, records: list[Any]) -> None:
    for record in records:
        ctx.emit(record)


__all__ = ["ConsumerHeartbeatParams", "ConsumerHeartbeatResult", "consumer_group_heartbeat", "validate"]
