"""What a group waits for on a manual clock: the server timers that must fire before it moves on.

Under clock.mode=manual time stands still until someone advances it, so a group whose join phase
waits for group.initial.rebalance.delay.ms waits for ever, and nothing on the wire says why.
`group_waits` names the timers a group (or one of its members) waits on and how far the clock
must go for each (`initial rebalance delay: advance >= 100 ms`); `kgc control group`, the live
page and the transcript show them. Session timeouts are deadlines, not waits: they are not listed.
Timer keys are the groups code's own (rebalance.py, consumer/membership.py); the join timer is
the initial delay exactly when Kafka's rule makes it one (the group was Empty, the delay > 0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinator.control.plane_api import TimerWait
from coordinator.groups.consumer.membership import join_timeout_key, rebalance_timeout_key, sync_timeout_key
from coordinator.groups.consumer_context import consumer_timer_key
from coordinator.groups.group import ClassicGroup
from coordinator.groups.placement import partition_for
from coordinator.groups.rebalance import join_key, sync_key
from coordinator.groups.state import GroupState
from coordinator.runtime.clock import Clock
from coordinator.runtime.timers import Timers

# consumer-group member timers: (key, what the member waits for)
_MEMBER_TIMERS = (
    (rebalance_timeout_key, "rebalance timeout (revoking its partitions)"),
    (join_timeout_key, "join timeout (a classic member rejoining)"),
    (sync_timeout_key, "sync timeout (a classic member syncing)"),
)


def group_waits(group: Any, partition: int, timers: Timers, now_ms: int, initial_delay_ms: int) -> list[TimerWait]:
    """The timers `group` (led on __consumer_offsets-`partition`) waits on, soonest first."""
    found: list[TimerWait] = []

    def add(key: tuple[Any, ...], what: str, member: str | None = None) -> None:
        deadline = timers.deadline((partition, *key))
        if deadline is not None and deadline > now_ms:
            found.append(TimerWait(what, member, deadline, deadline - now_ms))

    group_id = group.group_id
    if isinstance(group, ClassicGroup):
        if group.is_in(GroupState.PREPARING_REBALANCE):
            initial = group.previous_state is GroupState.EMPTY and initial_delay_ms > 0
            add(join_key(group_id), "initial rebalance delay" if initial else "rebalance timeout (join phase)")
        if group.is_in(GroupState.COMPLETING_REBALANCE):
            add(sync_key(group_id), "sync timeout (members that do not SyncGroup leave)")
    else:
        for member_id in list(getattr(group, "members", {})):
            for key, what in _MEMBER_TIMERS:
                add(consumer_timer_key(key(group_id, member_id)), what, member_id)
    return sorted(found, key=lambda w: w.deadline_ms)


def waits_of(runtime: Any, clock: Clock) -> Callable[[str], list[TimerWait]]:
    """group id -> what it waits on, for the group runtime's groups and timers."""

    def of(group_id: str) -> list[TimerWait]:
        partition = partition_for(group_id, runtime.num_partitions)
        shard = runtime.shard(partition)
        group = None if shard is None else shard.groups.get(group_id)
        if group is None:
            return []
        delay = shard.config.initial_rebalance_delay_ms
        return group_waits(group, partition, runtime.timers, clock.time_ms(), delay)

    return of


def waits_text(waits: list[TimerWait]) -> str:
    """`initial rebalance delay: advance >= 100 ms; ...` (what the transcript's text says too)."""
    return "; ".join(f"{w.timer}{' of ' + w.member if w.member else ''}: advance >= {w.advance_ms} ms" for w in waits)
