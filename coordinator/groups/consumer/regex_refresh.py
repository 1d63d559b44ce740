"""Regex subscriptions: when to resolve them, and the resolution operation (Kafka
GroupMetadataManager.maybeUpdateRegularExpressions, refreshRegularExpressions and
handleRegularExpressionsResult).

A heartbeat that brings a new regex validates it and, like a heartbeat in a group whose regexes
are stale, schedules one resolution of all the group's regexes; Kafka runs it on an executor and
applies its result as a later write, we run it as a timer due at once (key `<group>-regex`,
"is scheduled" = a refresh is under way). Refreshes are at least 10 s apart and happen when a
regex is unresolved, when topics were created since the last one, or every
group.consumer.regex.refresh.interval.ms. The result writes one ConsumerGroupRegularExpression
record per regex still in use and bumps the group epoch when a regex's topics or the metadata
hash changed; the next heartbeat then computes the new target assignment.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

from coordinator.groups.consumer import regex as re2_regex
from coordinator.groups.consumer.context import ConsumerOpContext
from coordinator.groups.consumer.group import EMPTY_RESOLVED, METADATA_REFRESH_INTERVAL_MS, ConsumerGroup
from coordinator.groups.consumer.member import ConsumerGroupMember
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupMetadataRecord,
    ConsumerGroupRegularExpressionRecord,
    ConsumerGroupRegularExpressionTombstone,
)
from coordinator.groups.consumer.subscriptions import compute, dec_regex, dec_value, inc_regex, inc_value
from protocol.errors import ErrorCode

REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000


class RegexUpdate(enum.Enum):
    NO_CHANGE = 0
    REGEX_UPDATED = 1
    REGEX_UPDATED_AND_RESOLVED = 2

    @property
    def regex_updated(self) -> bool:
        return self is not RegexUpdate.NO_CHANGE


def regex_refresh_key(group_id: str) -> str:
    return f"{group_id}-regex"


def maybe_update_regexes(
    ctx: ConsumerOpContext,
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    updated: ConsumerGroupMember,
    records: list[Any],
) -> RegexUpdate:
    """Records the member's regex change (a tombstone when it was the last user of the old
    one) and schedules a resolution when one is due. Raises INVALID_REGULAR_EXPRESSION."""
    now = ctx.now_ms
    gid = group.group_id
    old, new = member.subscribed_topic_regex, updated.subscribed_topic_regex
    require_refresh = False
    result = RegexUpdate.NO_CHANGE
    if old != new:
        result = RegexUpdate.REGEX_UPDATED
        if old and group.num_subscribed_members(old) == 1:
            records.append(ConsumerGroupRegularExpressionTombstone(gid, old))
        if new:
            if group.num_subscribed_members(new) == 0:
                re2_regex.throw_if_invalid(new)
                require_refresh = True
            elif new in group.resolved_regexes:
                result = RegexUpdate.REGEX_UPDATED_AND_RESOLVED
    if not require_refresh and not group.subscribed_regexes:
        return result
    key = regex_refresh_key(gid)
    if ctx.timers.is_scheduled(key):
        return result
    last_refresh = group.last_resolved_regex_refresh_time_ms()
    if now <= last_refresh + ctx.settings.regex_batch_refresh_min_interval_ms:
        return result
    regexes = dict(group.subscribed_regexes)
    if old:
        compute(regexes, old, dec_value)
    if new:
        compute(regexes, new, inc_value)
    require_refresh |= len(regexes) != len(group.resolved_regexes)
    require_refresh |= group.last_resolved_regex_version() < ctx.topics.version
    require_refresh |= now > last_refresh + ctx.settings.regex_refresh_interval_ms
    if require_refresh and regexes:
        wanted = frozenset(regexes)
        ctx.timers.schedule(key, now, lambda c: refresh_regexes(c, gid, wanted))
    return result


def refresh_regexes(ctx: ConsumerOpContext, group_id: str, regexes: Iterable[str]) -> None:
    """The resolution operation: resolve `regexes` against the topics now, write the results."""
    resolved = re2_regex.resolve(sorted(regexes), ctx.topics.names())
    version, timestamp = ctx.topics.version, ctx.now_ms
    group = ctx.groups.get(group_id)
    if not isinstance(group, ConsumerGroup):
        return  # the group is gone (or is no longer a consumer group)
    names = dict(group.subscribed_topic_names)
    records: list[Any] = []
    bump = False
    for regex, topics in resolved.items():
        if group.num_subscribed_members(regex) == 0:
            continue
        previous = group.resolved_regexes.get(regex, EMPTY_RESOLVED)
        if previous.topics != topics:
            bump = True
            for topic in previous.topics:
                compute(names, topic, dec_regex)
            for topic in topics:
                compute(names, topic, inc_regex)
        records.append(ConsumerGroupRegularExpressionRecord(group_id, regex, tuple(sorted(topics)), version, timestamp))
    new_hash = metadata_hash(names, ctx.topics)
    bump |= new_hash != group.metadata_hash
    epoch = group.group_epoch + 1
    if bump:
        records.append(ConsumerGroupMetadataRecord(group_id, epoch, new_hash))
        ctx.explain(ErrorCode.NONE, f"group {group_id} epoch bumped to {epoch}: regex subscriptions resolved")
    for record in records:
        ctx.emit(record)
    if bump:
        group.set_metadata_refresh_deadline(ctx.now_ms + METADATA_REFRESH_INTERVAL_MS, epoch)


def on_topics_changed(ctx: ConsumerOpContext, topic_names: Iterable[str]) -> list[str]:
    """Kafka onNewMetadataImage for consumer groups: every group subscribed to a created, deleted
    or resized topic recomputes its metadata hash on its next heartbeat (and bumps its epoch if
    it changed). Created topics also make regexes stale through `TopicsView.version`. Returns
    the ids of the groups asked to refresh."""
    names = set(topic_names)
    touched = []
    for group in ctx.groups.values():
        if isinstance(group, ConsumerGroup) and names.intersection(group.subscribed_topic_names):
            group.request_metadata_refresh()
            touched.append(group.group_id)
    return touched
