"""group.initial.rebalance.delay.ms: the first rebalance of an Empty group waits, and waits
again while new members keep arriving, capped by the rebalance timeout
(Kafka tryCompleteInitialRebalanceElseSchedule)."""

from coordinator.groups.group_config import GroupConfig
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def test_first_rebalance_is_delayed_and_extended_by_new_members():
    c = GroupTestContext(GroupConfig(initial_rebalance_delay_ms=3_000))
    a = c.join("", client_id="a", version=3)
    assert not a.done and c.join_deadline() == 3_000
    c.sleep(1_000)
    b = c.join("", client_id="b", version=3)
    c.sleep(2_000)  # first delay over, but b arrived meanwhile: wait another delay
    assert not a.done and not b.done
    assert c.join_deadline() == 6_000
    c.sleep(2_999)
    assert not a.done
    c.sleep(1)
    assert a.done and b.done
    assert a.value.generation_id == b.value.generation_id == 1
    assert a.value.leader == "a-uuid1"
    assert [m for m, _, _ in a.value.members] == ["a-uuid1", "b-uuid2"]


def test_delay_extension_is_capped_by_the_rebalance_timeout():
    c = GroupTestContext(GroupConfig(initial_rebalance_delay_ms=3_000))
    a = c.join("", client_id="a", version=3, rebalance_ms=5_000)
    c.sleep(1_000)
    c.join("", client_id="b", version=3, rebalance_ms=5_000)
    c.sleep(2_000)
    assert c.join_deadline() == 5_000  # min(delay, 5000 - 3000 remaining)
    c.sleep(1_000)
    late = c.join("", client_id="late", version=3, rebalance_ms=5_000)
    c.sleep(1_000)  # remaining is 0: no further extension despite the late member
    assert a.done and late.done
    assert a.value.generation_id == 1 and len(a.value.members) == 3


def test_initial_rebalance_does_not_complete_early_even_if_everyone_joined():
    c = GroupTestContext(GroupConfig(initial_rebalance_delay_ms=3_000))
    a = c.join("", version=3)
    assert not a.done and str(c.group().state) == "PreparingRebalance"
    c.sleep(3_000)
    assert a.done and a.value.error == ErrorCode.NONE


def test_later_rebalances_are_not_delayed():
    c = GroupTestContext(GroupConfig(initial_rebalance_delay_ms=3_000))
    a = c.join("", version=3)
    c.sleep(3_000)
    c.sync(a.value.member_id, 1, [])
    again = c.join(a.value.member_id, version=3)  # leader rejoin in Stable
    assert again.done and again.value.generation_id == 2


def test_zero_delay_completes_the_first_rebalance_at_once():
    c = GroupTestContext(GroupConfig(initial_rebalance_delay_ms=0))
    a = c.join("", version=3)
    assert a.done and a.value.generation_id == 1
