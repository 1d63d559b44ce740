"""JoinGroup (API 11) against a classic group (Kafka GroupMetadataManager.classicGroupJoin*).

Checks the request, creates the group for an unknown member, then joins a new or an existing
member. The answer is either immediate (errors, MEMBER_ID_REQUIRED, the current generation for a
follower with unchanged metadata) or a ParkedReply completed when the join phase ends.
A newly created group is written at once as an empty group, as Kafka does. A JoinGroup for a
consumer group goes to migration/classic_members.py (an Empty one is deleted first); one for a
share group is INCONSISTENT_GROUP_PROTOCOL (Kafka classicGroupJoin).
"""

from __future__ import annotations

from dataclasses import replace

from coordinator.groups.consumer.describe import empty_group_tombstones
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.group import ClassicGroup
from coordinator.groups.member import ClassicMember
from coordinator.groups.migration.classic_join import join_consumer_group
from coordinator.groups.rebalance import maybe_prepare_rebalance_or_complete_join, schedule_heartbeat, set_awaiting_join
from coordinator.groups.record_types import GroupMetadataRecord
from coordinator.groups.requests import UNKNOWN_MEMBER_ID, JoinGroupParams, JoinGroupResult
from coordinator.groups.shard import GroupContext
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.state import GroupState
from coordinator.groups.static import update_static_member_then_rebalance_or_complete_join
from coordinator.observe.reasons import explain
from coordinator.runtime.operation import ParkedReply
from protocol.errors import ErrorCode

JoinAnswer = JoinGroupResult | ParkedReply[JoinGroupResult]


def join_group(ctx: GroupContext, p: JoinGroupParams) -> JoinAnswer:
    config = ctx.shard.config
    if not config.min_session_timeout_ms <= p.session_timeout_ms <= config.max_session_timeout_ms:
        explain(
            ErrorCode.INVALID_SESSION_TIMEOUT,
            f"session timeout {p.session_timeout_ms} ms is outside [group.min.session.timeout.ms "
            f"{config.min_session_timeout_ms}, group.max.session.timeout.ms {config.max_session_timeout_ms}]",
        )
        return JoinGroupResult(ErrorCode.INVALID_SESSION_TIMEOUT, p.member_id)
    if p.rebalance_timeout_ms < 0:  # JoinGroup v0 carries no rebalance timeout
        p = _with_rebalance_timeout(p, p.session_timeout_ms)

    existing = ctx.shard.groups.get(p.group_id)
    if isinstance(existing, ShareGroup):
        # Kafka classicGroupJoin: a group of a type a classic member cannot join.
        explain(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"group {p.group_id!r} is a share group")
        return JoinGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID)
    if isinstance(existing, ConsumerGroup):
        if not existing.is_empty():
            # Kafka classicGroupJoinToConsumerGroup: a classic member joins a consumer group.
            return join_consumer_group(ctx, existing, p)
        # Kafka maybeDeleteEmptyConsumerGroup: an Empty consumer group makes way for a classic one
        # (whatever group.consumer.migration.policy says).
        explain(ErrorCode.NONE, f"empty consumer group {p.group_id!r} is deleted: a classic member joins")
        for record in empty_group_tombstones(existing) or ():
            ctx.apply(record)

    is_unknown_member = p.member_id == UNKNOWN_MEMBER_ID
    written_before = len(ctx.records)
    group = ctx.shard.group(p.group_id)
    created = False
    if group is None:
        if not is_unknown_member:
            explain(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"group {p.group_id!r} does not exist, so member "
                f"{p.member_id!r} cannot be in it; join with an empty member id",
            )
            return JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, p.member_id)
        group = ctx.shard.create_group(p.group_id, ctx.now_ms)
        created = True

    if not _accepts_joining_member(group, p.member_id, config.max_size):
        explain(
            ErrorCode.GROUP_MAX_SIZE_REACHED,
            f"group {p.group_id!r} already has group.max.size={config.max_size} members",
        )
        answer: JoinAnswer = JoinGroupResult(ErrorCode.GROUP_MAX_SIZE_REACHED, p.member_id)
    elif is_unknown_member:
        answer = _join_new_member(ctx, group, p)
    else:
        answer = _join_existing_member(ctx, group, p)

    if created and len(ctx.records) == written_before:
        # Kafka writes the new group even when the join itself produced nothing to write.
        ctx.persist(GroupMetadataRecord(p.group_id, "", 0, None, None, ctx.now_ms, ()))
    return answer


def _with_rebalance_timeout(p: JoinGroupParams, rebalance_timeout_ms: int) -> JoinGroupParams:
    return replace(p, rebalance_timeout_ms=rebalance_timeout_ms)


def _accepts_joining_member(group: ClassicGroup, member_id: str, max_size: int) -> bool:
    """group.max.size (Kafka acceptJoiningMember). While preparing a rebalance the awaiting
    members are counted, because members that will not rejoin are on their way out."""
    if group.is_in(GroupState.EMPTY, GroupState.DEAD):
        return True
    if group.is_in(GroupState.PREPARING_REBALANCE):
        member = group.members.get(member_id)
        return (member is not None and member.is_awaiting_join) or group.num_awaiting_join < max_size
    return group.has_member(member_id) or len(group.members) < max_size


def _join_new_member(ctx: GroupContext, group: ClassicGroup, p: JoinGroupParams) -> JoinAnswer:
    if group.is_in(GroupState.DEAD):
        explain(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {group.group_id!r} is Dead (being deleted)")
        return JoinGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, p.member_id)
    if not group.supports_protocols(p.protocol_type, [name for name, _ in p.protocols]):
        _explain_inconsistent(group, p)
        return JoinGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, p.member_id)
    new_member_id = ctx.shard.new_member_id(p.group_instance_id or p.client_id)
    if p.group_instance_id is not None:
        existing_id = group.static_members.get(p.group_instance_id)
        if existing_id is not None:
            return update_static_member_then_rebalance_or_complete_join(ctx, group, p, existing_id, new_member_id)
        return add_member_then_rebalance_or_complete_join(ctx, group, p, new_member_id)
    if p.request_version >= 4:
        # KIP-394: hand out the id and wait for the member to come back with it. The id
        # expires after the session timeout if it never does.
        group.pending_join_members[new_member_id] = None
        schedule_heartbeat(ctx, group, new_member_id, p.session_timeout_ms)
        explain(
            ErrorCode.MEMBER_ID_REQUIRED,
            f"JoinGroup v{p.request_version} without a member id: rejoin with member id {new_member_id!r} (KIP-394)",
        )
        return JoinGroupResult(ErrorCode.MEMBER_ID_REQUIRED, new_member_id)
    return add_member_then_rebalance_or_complete_join(ctx, group, p, new_member_id)


def _join_existing_member(ctx: GroupContext, group: ClassicGroup, p: JoinGroupParams) -> JoinAnswer:
    if group.is_in(GroupState.DEAD):
        explain(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {group.group_id!r} is Dead (being deleted)")
        return JoinGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, p.member_id)
    if not group.supports_protocols(p.protocol_type, [name for name, _ in p.protocols]):
        _explain_inconsistent(group, p)
        return JoinGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, p.member_id)
    if group.is_pending_member(p.member_id):
        if p.group_instance_id is not None:
            # Pending ids are only handed to dynamic members (Kafka: IllegalStateException).
            explain(
                ErrorCode.UNKNOWN_SERVER_ERROR, f"pending member id {p.member_id!r} came back with a group.instance.id"
            )
            return JoinGroupResult(ErrorCode.UNKNOWN_SERVER_ERROR, p.member_id)
        return add_member_then_rebalance_or_complete_join(ctx, group, p, p.member_id)

    error = group.validate_existing_member(p.member_id, p.group_instance_id)
    if error is not None:
        return JoinGroupResult(ErrorCode(error), p.member_id)
    member = group.members[p.member_id]

    if group.is_in(GroupState.PREPARING_REBALANCE):
        return update_member_then_rebalance_or_complete_join(ctx, group, member, p)
    if group.is_in(GroupState.COMPLETING_REBALANCE):
        if member.matches(p.protocols):
            # Probably a lost JoinGroup answer: hand out the current generation again.
            return current_generation(group, member.member_id)
        return update_member_then_rebalance_or_complete_join(ctx, group, member, p)
    if group.is_in(GroupState.STABLE):
        if group.is_leader(member.member_id) or not member.matches(p.protocols):
            # A leader's rejoin always rebalances: it is how the leader asks for a new
            # assignment when something outside member metadata (topic metadata) changed.
            return update_member_then_rebalance_or_complete_join(ctx, group, member, p)
        return current_generation(group, member.member_id)
    # Empty: the member is stale; it must reset its generation and join again.
    explain(
        ErrorCode.UNKNOWN_MEMBER_ID,
        f"group {group.group_id!r} is Empty: member {p.member_id!r} is stale and must join again without a member id",
    )
    return JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, p.member_id)


def _explain_inconsistent(group: ClassicGroup, p: JoinGroupParams) -> None:
    explain(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        f"protocol type {p.protocol_type!r} with protocols {[n for n, _ in p.protocols]} does not match "
        f"group {group.group_id!r} (type {group.protocol_type!r}, protocols every member supports: "
        f"{group.candidate_protocols() if group.members else []})",
    )


def current_generation(group: ClassicGroup, member_id: str) -> JoinGroupResult:
    return JoinGroupResult(
        error=ErrorCode.NONE,
        member_id=member_id,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader=group.leader_id or "",
        members=group.leader_view() if group.is_leader(member_id) else [],
    )


def add_member_then_rebalance_or_complete_join(
    ctx: GroupContext, group: ClassicGroup, p: JoinGroupParams, member_id: str
) -> ParkedReply[JoinGroupResult]:
    reply: ParkedReply[JoinGroupResult] = ParkedReply()
    member = ClassicMember(
        member_id=member_id,
        group_instance_id=p.group_instance_id,
        client_id=p.client_id,
        client_host=p.client_host,
        rebalance_timeout_ms=p.rebalance_timeout_ms,
        session_timeout_ms=p.session_timeout_ms,
        protocol_type=p.protocol_type,
        protocols=list(p.protocols),
        awaiting_join=reply,
        is_new=True,
    )
    if group.is_in(GroupState.PREPARING_REBALANCE) and group.previous_state is GroupState.EMPTY:
        group.new_member_added = True  # extends the initial rebalance delay
    group.add(member)
    # A parked new member cannot heartbeat and we cannot see it disconnect, so it gets the
    # new-member join timeout instead of its session timeout (Kafka, KIP-394 discussion).
    schedule_heartbeat(ctx, group, member_id, ctx.shard.config.new_member_join_timeout_ms)
    maybe_prepare_rebalance_or_complete_join(ctx, group)
    return reply


def update_member_then_rebalance_or_complete_join(
    ctx: GroupContext, group: ClassicGroup, member: ClassicMember, p: JoinGroupParams
) -> ParkedReply[JoinGroupResult]:
    reply: ParkedReply[JoinGroupResult] = ParkedReply()
    group.update_protocols(member, p.protocols, p.rebalance_timeout_ms, p.session_timeout_ms)
    set_awaiting_join(ctx, member, reply)
    maybe_prepare_rebalance_or_complete_join(ctx, group)
    return reply
