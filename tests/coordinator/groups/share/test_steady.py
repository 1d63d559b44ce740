"""The settled share-partition checks a steady ShareGroupHeartbeat reuses (steady.py): reused while
nothing changed, and asked afresh, with Kafka's answers, once a record was replayed on the group
(a subscription change, a finished initialization), a topic changed, or an unfinished
initialization falls due for its retry."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.share import records as r
from coordinator.groups.share import steady
from coordinator.groups.share.state_partitions import INITIALIZE_RETRY_INTERVAL_MS, StateInit
from tests.coordinator.groups.share.support import ShareTestContext

CHECKS = ("initialized_assignment_pending", "uninitialized_subscribed", "without_deleted_topics")


def tps(*items: tuple[Any, list[int]]) -> tuple[TopicPartitions, ...]:
    return tuple(TopicPartitions(t, tuple(p)) for t, p in sorted(items, key=lambda i: i[0].bytes))


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each check of state_partitions.py is really computed."""
    calls: Counter[str] = Counter()
    for name in CHECKS:
        real = getattr(steady, name)

        def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(steady, name, counted)
    return calls


def steady_group(c: ShareTestContext, topics: list[str]) -> int:
    """m1 joined, initialized and heartbeating at its epoch: that epoch."""
    joined = c.sjoin("m1", topics)
    c.sleep(5_000)
    c.sg("m1", joined.member_epoch)
    c.take_records()
    return joined.member_epoch


def test_steady_heartbeats_reuse_the_checks_and_answer_as_before(asked: Counter[str]) -> None:
    c = ShareTestContext()
    c.registry.add("foo", 2)
    epoch = steady_group(c, ["foo"])
    asked.clear()
    for _ in range(3):
        c.sleep(5_000)
        result, init = c.sg("m1", epoch)
        assert (result.error_code, result.member_epoch, result.assignment, init) == (0, epoch, None, None)
    assert asked == Counter() and c.take_records() == []
    assert c.timers.deadline(("share", "session-timeout-g-m1")) == c.clock.time_ms() + 10_000


def test_a_grown_topic_is_initialized_and_assigned_after_steady_heartbeats(asked: Counter[str]) -> None:
    c = ShareTestContext()
    foo = c.registry.add("foo", 2)
    epoch = steady_group(c, ["foo"])
    asked.clear()
    c.registry.grow("foo", 3)
    c.sleep(1)
    grown, init = c.sg("m1", epoch)
    assert init == StateInit("g", grown.member_epoch, {foo: {2: -1}}) and asked["uninitialized_subscribed"] == 1
    c.initialized(init)  # a record replayed outside any heartbeat: the pending check is asked again
    again, more = c.sg("m1", grown.member_epoch)
    assert more is None and again.assignment == tps((foo, [0, 1, 2]))
    assert again.member_epoch == grown.member_epoch + 1


def test_a_subscription_change_after_steady_heartbeats_initializes_and_assigns_the_new_topic() -> None:
    c = ShareTestContext()
    foo, bar = c.registry.add("foo", 1), c.registry.add("bar", 2)
    epoch = steady_group(c, ["foo"])
    changed, init = c.sg("m1", epoch, topics=["foo", "bar"])
    assert init == StateInit("g", changed.member_epoch, {bar: {0: -1, 1: -1}})
    c.initialized(init)
    again, _ = c.sg("m1", changed.member_epoch)
    assert again.assignment == tps((foo, [0]), (bar, [0, 1]))


def test_an_unfinished_initialization_is_retried_by_a_steady_heartbeat_when_due(asked: Counter[str]) -> None:
    """Kafka subscribedTopicsChangeMap: an initializing entry older than the retry interval counts as
    not started; "nothing to initialize" was cached only until then."""
    c = ShareTestContext()
    foo = c.registry.add("foo", 2)
    joined, init = c.sg("m1", 0, topics=["foo"])
    assert init is not None  # the share coordinator never answers
    epoch, waited = joined.member_epoch, 0
    while waited + 5_000 < INITIALIZE_RETRY_INTERVAL_MS:
        c.sleep(5_000)
        waited += 5_000
        assert c.sg("m1", epoch)[1] is None
    assert asked["uninitialized_subscribed"] == 2  # the join's and the first heartbeat's; then reused
    c.sleep(INITIALIZE_RETRY_INTERVAL_MS - waited)
    _, retried = c.sg("m1", epoch)
    assert retried == StateInit("g", epoch, {foo: {0: -1, 1: -1}})


def test_a_topic_deleted_after_steady_heartbeats_leaves_the_share_partition_state() -> None:
    c = ShareTestContext()
    foo = c.registry.add("foo", 1)
    c.registry.add("bar", 1)
    epoch = steady_group(c, ["foo", "bar"])
    c.registry.delete("bar")
    c.sleep(1)
    after, _ = c.sg("m1", epoch)
    assert after.assignment == tps((foo, [0]))
    info = r.TopicPartitionsInfo(foo, "foo", (0,))
    assert c.take_records()[0] == r.ShareGroupStatePartitionMetadataRecord("g", (), (info,), ())


def test_every_replayed_record_makes_the_cached_answers_stale() -> None:
    c = ShareTestContext()
    c.registry.add("foo", 2)
    steady_group(c, ["foo"])
    group = c.sgroup()
    before = group.replayed
    c.sg("m1", group.members["m1"].member_epoch, rack_id="rack-a")  # one member record, no epoch bump
    assert group.replayed == before + 1 and group.steady.pending_at == before
