"""Reconciliation state machine, one transition per test (ported from Kafka's
CurrentAssignmentBuilderTest; Kafka 4.2 semantics for KAFKA-19974 and KAFKA-19449, and Kafka 4.3's
assignment epochs, KIP-1251: a kept or revoking partition keeps the epoch it was assigned at, a
handed-over one gets the target epoch)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pytest

from coordinator.groups.consumer.current_assignment import CurrentAssignmentBuilder
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import ResolvedRegularExpression
from coordinator.groups.consumer.member import ConsumerGroupMember, MemberState
from coordinator.groups.consumer.records import TopicPartitions
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import FakeTopics

TOPICS = FakeTopics()
T1 = TOPICS.add("topic1", 10)
T2 = TOPICS.add("topic2", 10)


def a(p1: Iterable[int] = (), p2: Iterable[int] = ()) -> dict[uuid.UUID, frozenset[int]]:
    out = {T1: frozenset(p1), T2: frozenset(p2)}
    return {t: p for t, p in out.items() if p}


def owned(p1: Iterable[int] = (), p2: Iterable[int] = ()) -> tuple[TopicPartitions, ...]:
    return (TopicPartitions(T1, tuple(p1)), TopicPartitions(T2, tuple(p2)))


def ep(*held: tuple[dict, int]) -> dict[uuid.UUID, dict[int, int]]:
    """Assignment epochs: each (assignment, epoch) pair's partitions at that epoch (Kafka's
    toAssignmentWithEpochs / mkAssignmentWithEpochs)."""
    out: dict[uuid.UUID, dict[int, int]] = {}
    for assignment, epoch in held:
        for topic_id, parts in assignment.items():
            out.setdefault(topic_id, {}).update(dict.fromkeys(parts, epoch))
    return out


def m(
    state: MemberState,
    epoch: int,
    previous: int,
    assigned: dict,
    pending: dict | None = None,
    names: Iterable[str] = ("topic1", "topic2"),
    regex: str = "",
    epochs: dict | None = None,
) -> ConsumerGroupMember:
    """A member; its partitions were assigned at `epoch` unless `epochs` says otherwise."""
    return ConsumerGroupMember(
        "member",
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=state,
        subscribed_topic_names=frozenset(names),
        subscribed_topic_regex=regex,
        assigned_partitions=assigned,
        partitions_pending_revocation=pending or {},
        assignment_epochs=ep((assigned, epoch), (pending or {}, epoch)) if epochs is None else epochs,
    )


def build(
    member: ConsumerGroupMember,
    epoch: int,
    target: dict,
    owner_epoch: Any = -1,
    *,
    owned_parts: tuple[TopicPartitions, ...] | None = None,
    changed: bool = False,
    regexes: dict | None = None,
) -> ConsumerGroupMember:
    fn = owner_epoch if callable(owner_epoch) else (lambda t, p: owner_epoch)
    return CurrentAssignmentBuilder(
        member,
        target_epoch=epoch,
        target=target,
        current_partition_epoch=fn,
        topics=TOPICS,
        resolved_regexes=regexes,
        has_subscription_changed=changed,
        owned=owned_parts,
    ).build()


S, UNREV, UNREL = MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS, MemberState.UNRELEASED_PARTITIONS


def test_stable_to_stable() -> None:
    member = m(S, 10, 10, a({1, 2, 3}, {4, 5, 6}))
    kept = a({1, 2, 3}, {4, 5, 6})
    assert build(member, 11, kept, 10) == m(S, 11, 10, kept, epochs=ep((kept, 10)))
    assert build(member, 10, a({1}), 10) is member  # same epoch, no subscription change


def test_stable_to_stable_with_new_partitions() -> None:
    member = m(S, 10, 10, a({1, 2, 3}, {4, 5, 6}))
    got = build(member, 11, a({1, 2, 3, 4}, {4, 5, 6, 7}))
    assert got == m(
        S, 11, 10, a({1, 2, 3, 4}, {4, 5, 6, 7}), epochs=ep((a({1, 2, 3}, {4, 5, 6}), 10), (a({4}, {7}), 11))
    )


def test_stable_to_unrevoked_partitions() -> None:
    member = m(S, 10, 10, a({1, 2, 3}, {4, 5, 6}))
    assert build(member, 11, a({2, 3, 4}, {5, 6, 7})) == m(UNREV, 10, 10, a({2, 3}, {5, 6}), a({1}, {4}))


def test_stable_to_unreleased_partitions() -> None:
    member = m(S, 10, 10, a({1, 2, 3}, {4, 5, 6}))
    kept = a({1, 2, 3}, {4, 5, 6})
    assert build(member, 11, a({1, 2, 3, 4}, {4, 5, 6, 7}), 10) == m(UNREL, 11, 10, kept, epochs=ep((kept, 10)))


def test_already_revoked_partitions_do_not_hold_the_member() -> None:
    member = m(S, 10, 10, a({1, 2, 3}, {4, 5, 6}))
    got = build(member, 11, a({1, 2, 3}, {4, 5, 7}), lambda t, p: 10 if t == T2 else -1, owned_parts=())
    assert got == m(UNREL, 11, 10, a({1, 2, 3}, {4, 5}), epochs=ep((a({1, 2, 3}, {4, 5}), 10)))


def test_unrevoked_partitions_to_stable() -> None:
    member = m(UNREV, 10, 10, a({2, 3}, {5, 6}), a({1}, {4}))
    got = build(member, 11, a({2, 3}, {5, 6}), owned_parts=owned({2, 3}, {5, 6}))
    assert got == m(S, 11, 10, a({2, 3}, {5, 6}), epochs=ep((a({2, 3}, {5, 6}), 10)))


def test_remains_in_unrevoked_partitions() -> None:
    member = m(UNREV, 10, 10, a({2, 3}, {5, 6}), a({1}, {4}))
    for parts in (None, owned({1, 2, 3}, {5, 6}), owned({2, 3}, {4, 5, 6})):
        assert build(member, 12, a({3}, {6}), owned_parts=parts) is member


@pytest.mark.parametrize("target_epoch", [12, 10])
def test_unrevoked_to_unrevoked_keeps_the_epoch(target_epoch: int) -> None:
    """KAFKA-19974: no epoch bump from UNREVOKED to UNREVOKED (4.1 moved to epoch + 1)."""
    member = m(UNREV, 10, 10, a({2, 3}, {5, 6}), a({1}, {4}))
    got = build(member, target_epoch, a({3}, {6}), owned_parts=owned({2, 3}, {5, 6}))
    assert got == m(UNREV, 10, 10, a({3}, {6}), a({2}, {5}))


def test_unrevoked_to_unreleased() -> None:
    member = m(UNREV, 11, 10, a({2, 3}, {5, 6}), a({1}, {4}))
    got = build(member, 11, a({2, 3, 4}, {5, 6, 7}), 10, owned_parts=owned({2, 3}, {5, 6}))
    assert got == m(UNREL, 11, 11, a({2, 3}, {5, 6}))


def test_unreleased_partitions_to_stable_once_released() -> None:
    member = m(UNREL, 11, 10, a({2, 3}, {5, 6}))
    assert build(member, 11, a({2, 3, 4}, {5, 6, 7}), 10) == m(UNREL, 11, 11, a({2, 3}, {5, 6}))
    assert build(member, 11, a({2, 3, 4}, {5, 6, 7}), -1) == m(S, 11, 11, a({2, 3, 4}, {5, 6, 7}))


def test_unreleased_to_unrevoked_when_the_target_moves_on() -> None:
    member = m(UNREL, 11, 10, a({2, 3}, {5, 6}))
    got = build(member, 12, a({3}, {6, 7}), owned_parts=None)
    assert got == m(UNREV, 11, 11, a({3}, {6}), a({2}, {5}))


def test_own_pending_partition_is_not_unreleased() -> None:
    """KAFKA-19449: a partition this member itself is revoking counts as free for it."""
    member = m(UNREV, 10, 10, a({2, 3}), a({1}))
    got = build(member, 11, a({1, 2, 3}), lambda t, p: 10, owned_parts=owned({2, 3}))
    # foo-2/3 kept from epoch 10; foo-1, which it was itself revoking, is handed over anew at 11.
    assert got == m(S, 11, 10, a({1, 2, 3}), epochs=ep((a({2, 3}), 10), (a({1}), 11)))


def test_subscription_change_revokes_unsubscribed_topics_at_once() -> None:
    """KAFKA-19431: same epoch, topic2 no longer subscribed; the previous epoch is updated."""
    member = m(S, 10, 9, a({1, 2}, {3}), names=("topic1",))
    got = build(member, 10, a({1, 2}, {3}), changed=True, owned_parts=owned({1, 2}, {3}))
    assert got == m(UNREV, 10, 10, a({1, 2}), a((), {3}), names=("topic1",))
    # Already revoked: the assignment shrinks, the state stays.
    got = build(member, 10, a({1, 2}, {3}), changed=True, owned_parts=owned({1, 2}))
    assert got == m(S, 10, 10, a({1, 2}), names=("topic1",))
    # Nothing to drop: unchanged.
    kept = m(S, 10, 9, a({1, 2}), names=("topic1",))
    assert build(kept, 10, a({1, 2}), changed=True) is kept


def test_subscription_to_nothing_revokes_everything() -> None:
    member = m(S, 10, 9, a({1}, {3}), names=())
    got = build(member, 10, a({1}, {3}), changed=True, owned_parts=None)
    assert got == m(UNREV, 10, 10, {}, a({1}, {3}), names=())


def test_regex_topics_count_as_subscribed_once_resolved() -> None:
    member = m(S, 10, 10, {}, names=(), regex="topic.*")
    target = a({1}, {2})
    assert build(member, 11, target) == replace(member, member_epoch=11, previous_member_epoch=10)
    resolved = {"topic.*": ResolvedRegularExpression(frozenset({"topic1", "topic2"}), 1, 0)}
    assert build(member, 11, target, regexes=resolved).assigned_partitions == target


def test_unknown_state() -> None:
    member = m(MemberState.UNKNOWN, 11, 11, a({1}))
    for parts in (None, owned({1})):
        with pytest.raises(ConsumerGroupError) as info:
            build(member, 11, a({1}), owned_parts=parts)
        assert info.value.code == ErrorCode.FENCED_MEMBER_EPOCH
    assert build(member, 12, a({1}), owned_parts=()) == m(S, 12, 11, a({1}), epochs=ep((a({1}), 11)))
