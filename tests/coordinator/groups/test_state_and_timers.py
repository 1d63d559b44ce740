"""GroupState's transition table, the timer wheel and the clocks."""

import pytest

from coordinator.groups.group import ClassicGroup
from coordinator.groups.state import VALID_PREVIOUS_STATES, GroupState, IllegalStateTransition
from coordinator.runtime.clock import FakeClock
from coordinator.runtime.timers import ShardTimers, Timers

S = GroupState


def test_transition_table_is_kafkas():
    assert VALID_PREVIOUS_STATES == {
        S.EMPTY: {S.PREPARING_REBALANCE},
        S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
        S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
        S.STABLE: {S.COMPLETING_REBALANCE},
        S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
    }


@pytest.mark.parametrize("state", list(S))
def test_can_rebalance_derives_from_the_table(state):
    assert state.can_rebalance == (state in {S.EMPTY, S.STABLE, S.COMPLETING_REBALANCE})


def test_illegal_transition_raises_and_legal_one_records_previous_state_and_time():
    group = ClassicGroup("g", now_ms=0)
    with pytest.raises(IllegalStateTransition):
        group.transition_to(S.STABLE, 5)
    group.transition_to(S.PREPARING_REBALANCE, 7)
    assert (group.state, group.previous_state, group.state_timestamp_ms) == (S.PREPARING_REBALANCE, S.EMPTY, 7)


def test_state_names_parse_case_insensitively():
    assert S.parse("completingrebalance") is S.COMPLETING_REBALANCE
    assert S.parse("bogus") is None
    assert str(S.PREPARING_REBALANCE) == "PreparingRebalance"


def test_timers_fire_in_deadline_order_and_reschedule_replaces():
    timers = Timers()
    timers.schedule("a", 30, lambda: "a")
    timers.schedule("b", 10, lambda: "b")
    timers.schedule("c", 10, lambda: "c")
    timers.schedule("a", 20, lambda: "a2")  # replaces the 30 ms timer
    assert timers.cancel("c") and not timers.cancel("c")
    assert timers.keys() == ["b", "a"] and timers.next_deadline() == 10
    assert _due(timers, 9) == []
    fired = _due(timers, 25)
    assert [(t.key, t.deadline_ms, t.action()) for t in fired] == [("b", 10, "b"), ("a", 20, "a2")]
    assert len(timers) == 0 and timers.next_deadline() is None


def test_same_deadline_fires_in_scheduling_order():
    timers = Timers()
    for key in ["x", "y", "z"]:
        timers.schedule(key, 5, lambda: None)
    assert [t.key for t in _due(timers, 5)] == ["x", "y", "z"]


def test_shard_views_prefix_their_keys_and_unload_cancels_only_their_own():
    timers = Timers()
    zero, one = ShardTimers(timers, 0), ShardTimers(timers, 1)
    zero.schedule(("heartbeat", "g", "m"), 10, lambda: None)
    one.schedule(("heartbeat", "g", "m"), 20, lambda: None)
    assert zero.keys() == [("heartbeat", "g", "m")] and zero.deadline(("heartbeat", "g", "m")) == 10
    assert timers.keys() == [(0, "heartbeat", "g", "m"), (1, "heartbeat", "g", "m")]
    assert timers.cancel_partition(0) == 1
    assert zero.keys() == [] and one.deadline(("heartbeat", "g", "m")) == 20


def _due(timers: Timers, now_ms: int) -> list:
    """Pop every timer due at now_ms, in firing order (what the runtime's loop does)."""
    due = []
    while (timer := timers.pop_expired(now_ms)) is not None:
        due.append(timer)
    return due


def test_fake_clock_only_moves_forward():
    clock = FakeClock(100)
    clock.advance(50)
    assert clock.time_ms() == 150
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_rescheduling_does_not_grow_the_heap_without_bound():
    """A heartbeat reschedules its member's session timer every time: the queue's storage stays
    proportional to the live timers, and firing order is unchanged."""
    timers = Timers()
    for member in range(100):
        for beat in range(50):
            timers.schedule(("heartbeat", "g", f"m{member}"), 1_000 + beat * 10 + member, lambda: None)
    assert len(timers) == 100
    assert len(timers._heap) <= 4 * 100 + 1
    fired = _due(timers, 10_000)
    assert [t.key[2] for t in fired] == [f"m{member}" for member in range(100)]
    assert [t.deadline_ms for t in fired] == [1_490 + member for member in range(100)]


def _run_against_model(seed: int, partial: bool) -> None:
    """Random schedules (later, earlier, same deadline), cancels and pops against a naive model:
    live timers sorted by (deadline, scheduling order). `partial`: driven as the runtime drives
    it, `next_wake` (never after the earliest deadline) before each round of pops; else the full
    settle of `next_deadline` after every step."""
    import random

    rng = random.Random(seed)
    timers, model = Timers(), {}  # model: key -> (deadline, order)
    order, now = 0, 0
    for _ in range(20_000):
        roll = rng.random()
        key = f"k{rng.randrange(40)}"
        if roll < 0.6:
            deadline = now + rng.choice([0, 1, 5, 50, 200])
            timers.schedule(key, deadline, lambda: None)
            model[key] = (deadline, order)
            order += 1
        elif roll < 0.7:
            assert timers.cancel(key) == (model.pop(key, None) is not None)
        else:
            if partial:
                wake = timers.next_wake(now, rng.choice([0, 3, 20]))
                assert (wake is None) == (not model)
                assert wake is None or wake <= min(v[0] for v in model.values())
            now += rng.randrange(30)
            expected = sorted((v, k) for k, v in model.items() if v[0] <= now)
            assert [(t.key, t.deadline_ms) for t in _due(timers, now)] == [(k, v[0]) for v, k in expected]
            for _, k in expected:
                del model[k]
        if not partial:
            assert timers.next_deadline() == (min(v[0] for v in model.values()) if model else None)
            assert len(timers) == len(model) and len(timers._heap) <= 4 * max(len(model), 16) + 1


def test_lazy_heap_fires_exactly_as_a_sorted_reference_does():
    _run_against_model(11, partial=False)


def test_partial_settling_fires_exactly_as_a_sorted_reference_does():
    _run_against_model(12, partial=True)


def test_next_wake_re_pushes_only_entries_near_now_and_never_sleeps_past_a_deadline():
    """Session timers all moved later by heartbeats: the driver's wake-up settles the entries whose
    old deadline is near, not all of them at once (one long step), and nothing fires early."""
    timers = Timers()
    for member in range(1_000):
        timers.schedule(("heartbeat", "g", member), 1_000 + member, lambda: None)
    for member in range(1_000):
        timers.schedule(("heartbeat", "g", member), 45_000 + member, lambda: None)  # a heartbeat
    assert timers.next_wake(0, 100) == 1_000  # a lower bound: the stale entry's old deadline
    assert timers.next_wake(1_000, 100) == 1_101  # entries due by 1,100 re-pushed, 899 left stale
    assert timers._heap[0][0] == 1_101
    assert timers.pop_expired(1_100) is None
    fired = _due(timers, 50_000)
    assert [t.deadline_ms for t in fired] == [45_000 + member for member in range(1_000)]
