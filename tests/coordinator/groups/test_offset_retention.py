"""Offset retention (ClassicGroup.offsetExpirationCondition, cleanupExpiredOffsets): the timer
runs every check interval through the op path; tombstones for expired offsets, then a group
tombstone for an Empty group left without offsets."""

from coordinator.groups.group_config import GroupConfig
from coordinator.groups.record_types import GroupTombstone
from coordinator.groups.records import OffsetTombstone
from coordinator.groups.requests import LeaveGroupParams
from coordinator.groups.retention import retention_key, schedule_offset_expiration
from coordinator.groups.state import GroupState
from tests.support.group_context import GroupTestContext

from .offset_helpers import commit, consumer_protocols

RETENTION, CHECK = 10_000, 1_000


def _ctx() -> GroupTestContext:
    c = GroupTestContext(GroupConfig(offsets_retention_ms=RETENTION, offsets_retention_check_interval_ms=CHECK))
    schedule_offset_expiration(c.shard, c.clock.time_ms())
    return c


def _checks(c: GroupTestContext, n: int, member: str | None = None) -> None:
    """Advance through n retention checks (heartbeating `member` so it stays)."""
    for _ in range(n):
        c.sleep(CHECK)
        if member is not None:
            c.heartbeat(member, c.group().generation_id)


def test_simple_group_offsets_expire_from_their_commit_then_the_group_goes():
    c = _ctx()
    c.send(commit(offsets={0: 1}))
    c.sleep(3_000)
    c.send(commit(offsets={1: 1}))
    c.take_records()
    _checks(c, 6)  # t=9_000
    assert c.take_records() == []
    assert c.timers.deadline(retention_key()) == 10_000  # rescheduled each run
    _checks(c, 1)  # t=10_000: partition 0 is exactly retention old
    assert c.take_records() == [OffsetTombstone("g", "t", 0)]
    _checks(c, 3)
    assert c.take_records() == [OffsetTombstone("g", "t", 1), GroupTombstone("g")]
    assert c.shard.group("g") is None and len(c.shard.offsets) == 0


def test_empty_consumer_group_counts_from_when_it_became_empty():
    c = _ctx()
    (m,) = c.stable_group(1, protocols=consumer_protocols("t"))
    c.send(commit(generation=1, member=m))  # committed at t=0
    c.sleep(5_000)
    c.send(LeaveGroupParams.single("g", m))  # Empty at t=5_000
    assert c.group().is_in(GroupState.EMPTY)
    c.take_records()
    c.sleep(9_000)  # t=14_000: 14s after the commit, 9s after Empty
    assert c.take_records() == []
    c.sleep(1_000)
    assert c.take_records() == [OffsetTombstone("g", "t", 0), GroupTombstone("g")]


def test_stable_consumer_group_keeps_subscribed_topics_and_expires_the_others():
    c = _ctx()
    (m,) = c.stable_group(1, protocols=consumer_protocols("t"), session_ms=60_000)
    c.send(commit(topic="t", generation=1, member=m))
    c.send(commit(topic="old", generation=1, member=m))
    c.take_records()
    _checks(c, 10, member=m)
    assert c.take_records() == [OffsetTombstone("g", "old", 0)]
    _checks(c, 50, member=m)
    assert c.take_records() == []  # "t" is subscribed: kept however old; the group stays
    assert c.shard.offsets.get("g", "t", 0) is not None


def test_client_expire_timestamp_wins_both_ways():
    c = _ctx()
    c.send(commit(topic="short", retention=2_000, version=2))
    c.send(commit(topic="long", retention=30_000, version=2))
    c.take_records()
    c.sleep(2_000)
    assert c.take_records() == [OffsetTombstone("g", "short", 0)]
    c.sleep(27_000)
    assert c.take_records() == []  # past the broker's retention, but the client asked 30s
    c.sleep(1_000)
    assert c.take_records() == [OffsetTombstone("g", "long", 0), GroupTombstone("g")]


def test_rebalancing_group_offsets_do_not_expire():
    c = _ctx()
    a, b = c.stable_group(2, protocols=consumer_protocols("t"), session_ms=60_000, rebalance_ms=120_000)
    c.send(commit(topic="old", generation=2, member=a))
    c.join(
        a, client_id="c0", protocols=consumer_protocols("t"), session_ms=60_000, rebalance_ms=120_000
    )  # PreparingRebalance until b rejoins
    assert c.group().is_in(GroupState.PREPARING_REBALANCE)
    c.take_records()
    c.sleep(30_000)
    assert c.take_records() == []


def test_empty_group_without_offsets_is_deleted_at_the_next_check():
    c = _ctx()
    (m,) = c.stable_group(1)
    c.send(LeaveGroupParams.single("g", m))
    c.take_records()
    c.sleep(CHECK)
    assert c.take_records() == [GroupTombstone("g")]
    assert c.shard.group("g") is None
