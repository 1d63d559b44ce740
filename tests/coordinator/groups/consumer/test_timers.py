"""Session timeouts and revocation (rebalance) deadlines of consumer-group members (Kafka
testSessionTimeoutLifecycle/Expiration, testRebalanceTimeoutLifecycle/Expiration, onLoaded)."""

from __future__ import annotations

from coordinator.groups.consumer.member import MemberState
from coordinator.groups.consumer.membership import on_loaded
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupCurrentMemberAssignmentTombstone,
    ConsumerGroupMemberMetadataTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
)
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from tests.coordinator.groups.consumer.harness import Harness

G = "g"
SESSION = f"session-timeout-{G}-m1"


def fenced(member_id: str, epoch: int, names: list[str], h: Harness) -> list[object]:
    return [
        ConsumerGroupCurrentMemberAssignmentTombstone(G, member_id),
        ConsumerGroupTargetAssignmentMemberTombstone(G, member_id),
        ConsumerGroupMemberMetadataTombstone(G, member_id),
        ConsumerGroupMetadataRecord(G, epoch, metadata_hash(names, h.topics)),
    ]


def test_session_timeout_lifecycle() -> None:
    h = Harness()
    h.topics.add("foo", 6)
    h.join(G, "m1", ["foo"])
    assert h.timers.deadline(SESSION) == 45_000
    h.advance(30_000)
    h.heartbeat(G, "m1", 1)
    assert h.timers.deadline(SESSION) == 75_000  # every heartbeat pushes it back
    h.heartbeat(G, "m1", -1)
    assert not h.timers.is_scheduled(SESSION)


def test_session_timeout_expiration_fences_the_member() -> None:
    h = Harness(ConsumerGroupSettings(session_timeout_ms=45_000))
    h.topics.add("foo", 6)
    h.join(G, "m1", ["foo"])
    assert h.advance(44_999) == []
    assert h.advance(1) == fenced("m1", 2, [], h)
    assert h.group(G).members == {} and h.group(G).group_epoch == 2
    assert h.last is not None and h.rebuilt() == h.groups


def test_timer_for_a_member_that_is_gone_does_nothing() -> None:
    h = Harness()
    h.topics.add("foo", 6)
    h.join(G, "m1", ["foo"])
    h.timers.schedule("stray", h.now_ms, h.timers.timers[SESSION][1])  # the same action, fired early
    h.heartbeat(G, "m1", -1)
    assert h.advance(0) == []


def revoking_member(h: Harness) -> None:
    """m1 owns foo 0-5; m2 joins, m1 must revoke 3-5 (UNREVOKED_PARTITIONS at epoch 1)."""
    h.topics.add("foo", 6)
    foo = h.topics.by_name("foo").topic_id  # type: ignore[union-attr]
    h.join(G, "m1", ["foo"], rebalance_timeout_ms=12_000)
    h.assignors["uniform"].prepare({"m1": {foo: {0, 1, 2}}, "m2": {foo: {3, 4, 5}}})
    h.join(G, "m2", ["foo"])
    h.heartbeat(G, "m1", 1)
    assert h.group(G).members["m1"].state == MemberState.UNREVOKED_PARTITIONS


def test_rebalance_timeout_lifecycle() -> None:
    h = Harness()
    revoking_member(h)
    key = f"rebalance-timeout-{G}-m1"
    assert h.timers.deadline(key) == 12_000
    foo = h.topics.by_name("foo").topic_id  # type: ignore[union-attr]
    h.advance(1000)
    h.heartbeat(G, "m1", 1, owned=[(foo, [0, 1, 2])])  # revoked: the deadline goes away
    assert not h.timers.is_scheduled(key)
    assert h.group(G).members["m1"].member_epoch == 2


def test_rebalance_timeout_expiration_fences_a_member_that_does_not_revoke() -> None:
    h = Harness()
    revoking_member(h)
    h.advance(5000)
    h.heartbeat(G, "m1", 1)  # still owning: nothing changes, the deadline stays
    assert h.timers.deadline(f"rebalance-timeout-{G}-m1") == 12_000
    assert h.advance(7000) == fenced("m1", 3, ["foo"], h)
    assert set(h.group(G).members) == {"m2"}
    assert not h.timers.is_scheduled(SESSION)  # fencing cancels the member's other timers too


def test_rebalance_timeout_ignored_when_the_member_moved_on() -> None:
    h = Harness()
    revoking_member(h)
    # Re-point the deadline action at an epoch the member already left (Kafka: "Ignoring rebalance timeout").
    from coordinator.groups.consumer.membership import schedule_rebalance_timeout

    h.run(lambda ctx: schedule_rebalance_timeout(ctx, G, "m1", 0, 10))
    assert h.advance(10) == []
    assert "m1" in h.group(G).members


def test_on_loaded_schedules_sessions_and_revocation_deadlines() -> None:
    h = Harness()
    revoking_member(h)
    h.timers.timers.clear()  # as after a restart: the groups come back by replay, timers do not
    h.run(on_loaded)
    assert h.timers.deadline(SESSION) == 45_000
    assert h.timers.deadline(f"session-timeout-{G}-m2") == 45_000
    assert h.timers.deadline(f"rebalance-timeout-{G}-m1") == 12_000
    assert not h.timers.is_scheduled(f"rebalance-timeout-{G}-m2")
