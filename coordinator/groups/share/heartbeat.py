"""ShareGroupHeartbeat (API 76, KIP-932) as an operation: `share_group_heartbeat(ctx, params)`
(Kafka 4.2 GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid +
GroupMetadataManager.shareGroupHeartbeat / shareGroupLeave).

Epoch 0 joins (the client made its member id, v1), -1 leaves, any other epoch heartbeats (the
previous epoch is accepted). A heartbeat (1) records the member's new rack, subscription or
client details and bumps the group epoch when its subscription, the subscribed topics' metadata
hash (KIP-1101) or the set of initialized share-partitions changed; (2) computes a new target
assignment with the simple assignor when the group epoch is ahead of it; (3) moves the member to
its target (a share member revokes nothing); (4) notes the subscribed share-partitions whose state
the share coordinator must initialize first (returned as a StateInit, written as initializing).
A steady heartbeat (nothing changed) writes nothing and reuses the settled share-partition checks
(steady.py). Errors are Kafka's codes and messages; an operation that answers an error emits no record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from coordinator.groups.assignors.spec import SubscriptionType
from coordinator.groups.consumer.errors import ConsumerGroupError, invalid_request, unknown_member
from coordinator.groups.consumer.group import METADATA_REFRESH_INTERVAL_MS
from coordinator.groups.consumer.member import Assignment, to_topic_partitions
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.consumer.subscriptions import subscription_type
from coordinator.groups.share.context import ShareContext
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.share.member import LEAVE_GROUP_MEMBER_EPOCH, ShareGroupMember, reconcile
from coordinator.groups.share.membership import (
    check_not_full,
    fence_member,
    get_or_create_member,
    group_for_heartbeat,
    schedule_session_timeout,
    share_group,
)
from coordinator.groups.share.records import ShareGroupMetadataRecord
from coordinator.groups.share.state_partitions import StateInit, initializing_record
from coordinator.groups.share.steady import assignment_pending, deleted_topics_record, to_initialize
from coordinator.groups.share.target_assignment import update_target_assignment
from protocol.errors import ErrorCode


@dataclass(frozen=True)
class ShareHeartbeatParams:
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: Sequence[str] | None = None  # None: unchanged
    client_id: str = ""
    client_host: str = ""  # Kafka stores InetAddress.toString(), e.g. "/127.0.0.1"


@dataclass(frozen=True)
class ShareHeartbeatResult:
    error_code: int = 0
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    partitions: Assignment = field(default_factory=dict)  # the member's whole assignment now
    send_assignment: bool = False  # Kafka sets Assignment only on a join, a full request or a change

    @property
    def assigned(self) -> tuple[TopicPartitions, ...]:
        """The member's whole assignment in record form (built on demand: a steady answer omits it)."""
        return to_topic_partitions(self.partitions)

    @property
    def assignment(self) -> tuple[TopicPartitions, ...] | None:
        """What the response's Assignment carries (None: left out, nothing changed)."""
        return self.assigned if self.send_assignment else None


HeartbeatAnswer = tuple[ShareHeartbeatResult, StateInit | None]


def _blank(value: str | None) -> bool:
    """Kafka throwIfEmptyString: non-null but empty after trimming."""
    return value is not None and not value.strip()


def validate(p: ShareHeartbeatParams) -> None:
    """GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid (v1: the member id is
    the client's, so it may never be empty)."""
    if _blank(p.member_id):
        raise invalid_request("MemberId can't be empty.")
    if _blank(p.group_id):
        raise invalid_request("GroupId can't be empty.")
    if _blank(p.rack_id):
        raise invalid_request("RackId can't be empty.")
    if p.member_epoch == 0:
        if not p.subscribed_topic_names:
            raise invalid_request("SubscribedTopicNames must be set in first request.")
    elif p.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
        raise invalid_request("MemberEpoch is invalid.")


def share_group_heartbeat(ctx: ShareContext, p: ShareHeartbeatParams) -> HeartbeatAnswer:
    """The service has run `validate` on `p` before routing it here."""
    try:
        if p.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            return _leave(ctx, p), None
        return _heartbeat(ctx, p)
    except ConsumerGroupError as exc:
        ctx.explain(exc.code, exc.message)
        return ShareHeartbeatResult(error_code=exc.code, error_message=exc.message), None


def _with_request_fields(member: ShareGroupMember, p: ShareHeartbeatParams) -> ShareGroupMember:
    """The member as the request describes it: null rack or subscription means unchanged; the
    client id and host are always the request's. The same object when nothing changed."""
    rack_id = p.rack_id if p.rack_id is not None else member.rack_id
    names = frozenset(p.subscribed_topic_names) if p.subscribed_topic_names is not None else None
    subscribed = names if names is not None else member.subscribed_topic_names
    fields = (rack_id, subscribed, p.client_id, p.client_host)
    if fields == (member.rack_id, member.subscribed_topic_names, member.client_id, member.client_host):
        return member
    return replace(
        member, rack_id=rack_id, subscribed_topic_names=subscribed, client_id=p.client_id, client_host=p.client_host
    )


def _heartbeat(ctx: ShareContext, p: ShareHeartbeatParams) -> HeartbeatAnswer:
    gid, member_id = p.group_id, p.member_id
    create = p.member_epoch == 0
    group = group_for_heartbeat(ctx, gid, create)
    check_not_full(ctx, group, member_id)
    member = get_or_create_member(group, member_id, p.member_epoch, create)
    # Share-partition entries of topics deleted since go first (Kafka maybeCleanupShareGroupState
    # runs when a topic is deleted); the rest of the heartbeat sees the group without them.
    cleanup = deleted_topics_record(group, ctx.topics)
    if cleanup is not None:
        ctx.emit(cleanup)
    records: list[Any] = []

    # 1. The member; the group epoch when its subscription, the topics or the initialized
    #    share-partitions changed (or the metadata refresh deadline passed).
    updated = _with_request_fields(member, p)
    subscription_changed = False
    if updated is not member:  # the same object when nothing changed
        records.append(updated.metadata_record(gid))
        subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names
    init_pending = assignment_pending(group)
    bump = subscription_changed or init_pending
    group_epoch = group.group_epoch
    names = group.subscribed_topic_names
    sub_type: SubscriptionType | None = None  # the group's, worked out only when a target is computed
    refreshed = bump or group.has_metadata_expired(ctx.now_ms)
    if refreshed:
        names = group.compute_subscribed_topic_names(member, updated)
        new_hash = metadata_hash(names, ctx.topics)
        num_members = group.num_members() + (0 if group.has_member(member_id) else 1)
        sub_type = subscription_type({}, names, num_members)
        bump = bump or new_hash != group.metadata_hash
        if bump:
            group_epoch += 1
            records.append(ShareGroupMetadataRecord(gid, group_epoch, new_hash))
            why = (
                f"member {member_id} joined or changed its subscription"
                if subscription_changed
                else "share-partitions were initialized"
                if init_pending
                else "the subscribed topics changed"
            )
            ctx.explain(ErrorCode.NONE, f"share group {gid} epoch bumped to {group_epoch}: {why}")

    # 2. A new target assignment when the group epoch is ahead of it.
    if group_epoch > group.assignment_epoch:
        if sub_type is None:
            sub_type = group.subscription_type
        target = update_target_assignment(group, group_epoch, updated, sub_type, ctx.topics, records)
        target_epoch = group_epoch
    else:
        target_epoch = group.assignment_epoch
        target = group.target_assignment.get(member_id, {})

    # 3. The member jumps to its target (Kafka maybeReconcile + ShareGroupAssignmentBuilder).
    if bump or not updated.is_reconciled_to(target_epoch):
        reconciled = reconcile(updated, target_epoch, target, bump, ctx.topics)
        if reconciled != updated:
            records.append(reconciled.assignment_record(gid))
        updated = reconciled
    settings = ctx.settings(gid)  # read once: the session timeout and the heartbeat interval
    schedule_session_timeout(ctx, gid, member_id, settings.session_timeout_ms)

    # 4. Share-partitions to initialize before members may fetch them.
    init = _initialization(ctx, group, group_epoch, names, records)
    ctx.emit_all(records)
    if refreshed:
        live = ctx.groups.get(gid)
        if isinstance(live, ShareGroup):
            live.set_metadata_refresh_deadline(ctx.now_ms + METADATA_REFRESH_INTERVAL_MS, group_epoch)

    # The assignment goes out on a join, on a full request (the client sends its subscription
    # after an error or timeout) and whenever it changed.
    full = p.subscribed_topic_names is not None
    return ShareHeartbeatResult(
        member_id=updated.member_id,
        member_epoch=updated.member_epoch,
        heartbeat_interval_ms=settings.heartbeat_interval_ms,
        partitions=updated.assigned_partitions,
        send_assignment=create or full or _changed(updated.assigned_partitions, member.assigned_partitions),
    ), init


def _changed(new: Assignment, old: Assignment) -> bool:
    return new is not old and new != old


def _initialization(
    ctx: ShareContext, group: ShareGroup, group_epoch: int, names: Any, records: list[Any]
) -> StateInit | None:
    """Kafka maybeCreateInitializeShareGroupStateRequest: the subscribed partitions not yet
    initialized (nor being initialized) become initializing, at the new group epoch."""
    if not names:  # Kafka's early exits; with no topics at all nothing is found to initialize
        return None
    new = to_initialize(group, names, ctx.topics, ctx.now_ms)
    if not new:
        return None
    record = initializing_record(group.group_id, group.state_partitions, new, ctx.topics)
    if record is None:
        return None
    records.append(record)
    return StateInit(group.group_id, group_epoch, {t: dict.fromkeys(v.partitions, -1) for t, v in new.items()})


def _leave(ctx: ShareContext, p: ShareHeartbeatParams) -> ShareHeartbeatResult:
    """Kafka shareGroupLeave: the member is fenced; the answer echoes its id and epoch -1."""
    group = share_group(ctx, p.group_id)
    member = group.members.get(p.member_id)
    if member is None:
        raise unknown_member(p.member_id, p.group_id)
    records: list[Any] = []
    fence_member(ctx, group, member, records, "left the group")
    ctx.emit_all(records)
    return ShareHeartbeatResult(member_id=p.member_id, member_epoch=p.member_epoch)


__all__ = ["ShareHeartbeatParams", "ShareHeartbeatResult", "share_group_heartbeat", "validate"]
