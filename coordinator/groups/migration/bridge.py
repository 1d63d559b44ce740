"""How the KIP-848 core meets classic groups on a shard (the core's ClassicBridge), Kafka 4.2:

- a consumer-protocol join to an Empty classic group deletes it (maybeDeleteEmptyClassicGroup);
- to a non-empty classic group it upgrades it when group.consumer.migration.policy allows
  (validateOnlineUpgrade + convertToConsumerGroup): parked JoinGroup/SyncGroup answered
  REBALANCE_IN_PROGRESS, the classic group's tombstone, the consumer group's records;
- when the last consumer-protocol members leave a group of classic members it downgrades it
  (validateOnlineDowngradeWithFencedMembers + convertToClassicGroup): the consumer group's
  tombstones and the classic group's record are written without replay, the classic group is put
  in place directly and starts a rebalance its members rejoin, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

from coordinator.groups.consumer.context import ConsumerOpContext, Persisted
from coordinator.groups.consumer.describe import group_tombstones
from coordinator.groups.consumer.errors import group_id_not_found
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import ConsumerGroupMember
from coordinator.groups.consumer.membership import schedule_session_timeout
from coordinator.groups.consumer.replay import replay_consumer_record
from coordinator.groups.group import ClassicGroup
from coordinator.groups.migration.convert import ConversionError, classic_from_consumer, consumer_records_from_classic
from coordinator.groups.rebalance import prepare_rebalance, reschedule_member_heartbeat
from coordinator.groups.record_types import GroupTombstone
from coordinator.groups.requests import JoinGroupResult, SyncGroupResult
from coordinator.groups.shard import GroupContext
from coordinator.groups.state import GroupState
from coordinator.observe.reasons import because, explain_parked
from protocol.errors import ErrorCode


class HasGroupContext(Protocol):
    """The shard operation behind a ConsumerOpContext (consumer_context.ShardConsumerContext)."""

    @property
    def op(self) -> GroupContext: ...


def _op(ctx: ConsumerOpContext) -> GroupContext:
    return cast(HasGroupContext, ctx).op


class ShardClassicBridge:
    def empty_classic_tombstones(self, group: Any) -> list[Any] | None:
        if isinstance(group, ClassicGroup) and group.is_in(GroupState.EMPTY):
            return [GroupTombstone(group.group_id)]
        return None

    def upgrade(self, ctx: ConsumerOpContext, group: Any, records: list[Any]) -> ConsumerGroup | None:
        if not isinstance(group, ClassicGroup):
            return None
        gid = group.group_id
        settings = ctx.settings
        if not settings.migration_policy.upgrade_enabled:
            raise group_id_not_found(
                f"Cannot upgrade classic group {gid} to consumer group because online upgrade is disabled."
            )
        if not group.uses_consumer_protocol:
            raise group_id_not_found(
                f"Cannot upgrade classic group {gid} to consumer group because the group "
                "does not use the consumer embedded protocol."
            )
        if len(group.members) > settings.max_size:
            raise group_id_not_found(
                f"Cannot upgrade classic group {gid} to consumer group because the group "
                "size exceeds the consumer group maximum size."
            )
        try:
            creation = consumer_records_from_classic(group, ctx.topics)
        except ConversionError:
            raise group_id_not_found(
                f"Cannot upgrade classic group {gid} to consumer group because the embedded "
                "consumer protocol is malformed."
            ) from None
        op = _op(ctx)
        # Members waiting on the classic rebalance learn that another one has started.
        why = f"group {gid} is upgraded to the consumer protocol: rejoin"
        for member in group.members.values():
            for reply, answer in (
                (member.awaiting_join, JoinGroupResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id)),
                (member.awaiting_sync, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS)),
            ):
                if reply is not None:
                    explain_parked(reply, ErrorCode.REBALANCE_IN_PROGRESS, why)
                    op.complete(reply, answer)
            member.awaiting_join = member.awaiting_sync = None
        records.append(GroupTombstone(gid))
        records.extend(creation)
        # The group the heartbeat continues with: exactly what replaying the records will build.
        built: dict[str, Any] = {}
        for record in creation:
            replay_consumer_record(built, record)
        upgraded: ConsumerGroup = built[gid]
        for converted in upgraded.members.values():
            assert converted.classic_member_metadata is not None
            schedule_session_timeout(
                ctx, gid, converted.member_id, converted.classic_member_metadata.session_timeout_ms
            )
        ctx.explain(
            ErrorCode.NONE,
            f"group {gid} upgraded from classic (generation {group.generation_id}) to a "
            f"consumer group at epoch {upgraded.group_epoch}",
        )
        return upgraded

    def downgrade_on_leave(
        self, ctx: ConsumerOpContext, group: ConsumerGroup, leaving: Sequence[ConsumerGroupMember], records: list[Any]
    ) -> bool:
        if not downgrade_allowed(ctx, group, leaving):
            return False
        convert_to_classic(ctx, group, [m.member_id for m in leaving], None, records)
        return True

    def replaceable_on_replay(self, group: Any) -> bool:
        return isinstance(group, ClassicGroup) and group.is_simple()


CLASSIC_BRIDGE = ShardClassicBridge()


def downgrade_allowed(ctx: ConsumerOpContext, group: ConsumerGroup, leaving: Sequence[ConsumerGroupMember]) -> bool:
    """Kafka validateOnlineDowngradeWithFencedMembers: the members left would all be classic ones
    (and there are some), the policy allows it, and they fit in group.max.size."""
    remaining = group.num_members() - len(leaving)
    if any(m.use_classic_protocol for m in leaving) or group.num_classic_members != remaining:
        return False
    if remaining <= 0 or not ctx.settings.migration_policy.downgrade_enabled:
        return False
    return remaining <= _op(ctx).shard.config.max_size


def convert_to_classic(
    ctx: ConsumerOpContext,
    group: ConsumerGroup,
    leaving: Sequence[str],
    joining: ConsumerGroupMember | None,
    records: list[Any],
    rebalance: bool = True,
) -> ClassicGroup:
    """Kafka convertToClassicGroup: the consumer group's tombstones and the classic group's record,
    written as they are (not replayed); the classic group replaces the consumer group at once and
    starts a rebalance when a member left (or a replacing member changed its subscription)."""
    op = _op(ctx)
    gid = group.group_id
    tombstones = group_tombstones(group)
    if joining is not None:
        # The replacing member's records were written under its new id: delete those instead.
        replaced = group.static_member_id(joining.instance_id)
        tombstones = [_renamed(r, replaced, joining.member_id) for r in tombstones]
    classic = classic_from_consumer(group, leaving, joining, ctx.topics, ctx.now_ms)
    records.extend(Persisted(r) for r in tombstones)
    records.append(Persisted(classic.snapshot()))
    op.shard.groups[gid] = classic
    for member in classic.members.values():
        reschedule_member_heartbeat(op, classic, member)
    ctx.explain(
        ErrorCode.NONE,
        f"group {gid} downgraded from a consumer group (epoch {group.group_epoch}) to a "
        "classic group: its last consumer-protocol member left",
    )
    if rebalance:
        because(f"group {gid} was downgraded to the classic protocol")
        prepare_rebalance(op, classic)
    return classic


def _renamed(record: Any, old_id: str | None, new_id: str) -> Any:
    if getattr(record, "member_id", None) == old_id:
        return type(record)(record.group_id, new_id)
    return record
