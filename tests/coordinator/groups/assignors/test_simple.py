"""The share-group assignor "simple": Kafka's SimpleAssignorTest cases (as data: topics, members'
subscriptions and current assignments, the assignable partitions, and what Kafka asserts: the
exact result where Kafka states one, else every assignable partition assigned), plus the
properties the KIP states (balance within one, desired sharing, stickiness, only assignable
partitions, only subscribed topics) over many random groups."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from coordinator.groups.assignors.simple import SimpleAssignor
from coordinator.groups.assignors.spec import AssignorError, GroupSpec, SubscriptionType
from tests.coordinator.groups.assignors.support import Topics, member

T1, T2, T3, T4 = (uuid.UUID(int=n) for n in (11, 12, 13, 14))
NAMES = {"T1": T1, "T2": T2, "T3": T3, "T4": T4}
HOMO, HETERO = SubscriptionType.HOMOGENEOUS, SubscriptionType.HETEROGENEOUS
ASSIGNOR = SimpleAssignor()

# (name, topics {alias: partitions}, members {id: (subscribed aliases, current {alias: parts})},
#  subscription type, assignable {alias: parts} or None, expected result or None, partitions assigned)
CASES: list[tuple[Any, ...]] = [
    ("NoSubscribedTopic", {"T1": 3}, {"A": ([], {})}, HOMO, None, {}, 0),
    ("TwoMembersAndTwoTopicsHomogeneous", {"T1": 3, "T3": 2}, {"A": (["T1", "T3"], {}), "B": (["T1", "T3"], {})},
     HOMO, None, None, 5),
    ("TwoMembersAndTwoTopicsHomogeneousWithAllowedMap", {"T1": 3, "T3": 3},
     {"A": (["T1", "T3"], {}), "B": (["T1", "T3"], {})}, HOMO, {"T1": [0, 1, 2], "T3": [0, 1]}, None, 5),
    ("TwoMembersAndTwoTopicsHomogeneousWithNonAssignableTopic", {"T1": 3, "T3": 2},
     {"A": (["T1", "T3"], {}), "B": (["T1", "T3"], {})}, HOMO, {"T1": [0, 1, 2]}, None, 3),
    ("ThreeMembersThreeTopicsHeterogeneous", {"T1": 3, "T2": 3, "T3": 2},
     {"A": (["T1", "T2"], {}), "B": (["T3"], {}), "C": (["T2", "T3"], {})}, HETERO, None, None, 8),
    ("ThreeMembersThreeTopicsHeterogeneousWithAllowedMap", {"T1": 3, "T2": 3, "T3": 2},
     {"A": (["T1", "T2"], {}), "B": (["T3"], {}), "C": (["T2", "T3"], {})}, HETERO,
     {"T1": [0, 1], "T2": [0, 2], "T3": [1]}, None, 5),
    ("ThreeMembersThreeTopicsHeterogeneousWithNonAssignableTopic", {"T1": 3, "T2": 3, "T3": 2},
     {"A": (["T1", "T2"], {}), "B": (["T3"], {}), "C": (["T2", "T3"], {})}, HETERO,
     {"T1": [0, 1, 2], "T2": [0, 1, 2]}, {"A": {"T1": [0, 1, 2], "T2": [0, 2]}, "B": {}, "C": {"T2": [1]}}, 6),
    ("OneMemberNoAssignedTopicHeterogeneous", {"T1": 3, "T2": 2}, {"A": (["T1", "T2"], {}), "B": ([], {})},
     HETERO, None, {"A": {"T1": [0, 1, 2], "T2": [0, 1]}, "B": {}}, 5),
    ("CurrentAssignmentHeterogeneous", {"T1": 3, "T2": 3, "T3": 2, "T4": 1},
     {"A": (["T1", "T2", "T3"], {"T1": [0, 1, 2], "T2": [0, 2]}), "B": (["T3", "T4"], {"T3": [0, 1]})},
     HETERO, None, None, 9),
]  # fmt: skip


def _spec(members: dict[str, Any], sub_type: SubscriptionType, assignable: dict[str, list[int]] | None) -> GroupSpec:
    return GroupSpec(
        members={m: member([NAMES[t] for t in subs]) for m, (subs, _) in members.items()},
        subscription_type=sub_type,
        assignments={m: {NAMES[t]: frozenset(p) for t, p in cur.items()} for m, (_, cur) in members.items()},
        assignable=None if assignable is None else {NAMES[t]: frozenset(p) for t, p in assignable.items()},
    )


def _assigned(result: dict[str, Any]) -> set[tuple[uuid.UUID, int]]:
    return {(t, p) for a in result.values() for t, parts in a.items() for p in parts}


@pytest.mark.parametrize(("name", "topics", "members", "sub_type", "assignable", "expected", "count"), CASES)
def test_kafka_simple_assignor_cases(name, topics, members, sub_type, assignable, expected, count):
    result = ASSIGNOR.assign(_spec(members, sub_type, assignable), Topics({NAMES[t]: n for t, n in topics.items()}))
    assert len(_assigned(result)) == count
    if expected is not None:
        names = {v: k for k, v in NAMES.items()}
        assert {m: {names[t]: sorted(p) for t, p in a.items() if p} for m, a in result.items()} == expected


def test_name_and_empty_groups():
    assert ASSIGNOR.name == "simple"
    for sub_type in (HOMO, HETERO):
        assert ASSIGNOR.assign(GroupSpec({}, sub_type), Topics({})) == {}


def test_a_topic_missing_from_the_metadata_is_an_assignor_error():
    with pytest.raises(AssignorError, match="doesn't exist in the topic metadata"):
        ASSIGNOR.assign(GroupSpec({"A": member([T2])}, HOMO), Topics({T1: 3}))


def _check(spec: GroupSpec, topics: Topics, result: dict[str, Any]) -> None:
    """What Kafka's builders promise: every assignable partition of a subscribed topic assigned,
    none more often than the desired sharing (over all partitions for a homogeneous group, per
    topic for a heterogeneous one), nothing unassignable or unsubscribed, counts within one."""
    homogeneous = spec.subscription_type == HOMO
    all_targets = [(t, p) for t, n in topics.counts.items() for p in range(n) if spec.is_partition_assignable(t, p)]
    for topic_id, count in topics.counts.items():
        subscribers = [m for m, s in spec.members.items() if topic_id in s.subscribed_topic_ids]
        if not subscribers:
            continue
        targets = [p for p in range(count) if spec.is_partition_assignable(topic_id, p)]
        pool = all_targets if homogeneous else targets
        sharing = 0 if not pool else -(-len(subscribers) // len(pool))
        holders = {p: [m for m in subscribers if p in result.get(m, {}).get(topic_id, ())] for p in targets}
        assert all(1 <= len(h) <= sharing for h in holders.values()), (topic_id, sharing, holders)
        for m, a in result.items():
            assert m in subscribers or not a.get(topic_id)
            assert set(a.get(topic_id, ())) <= set(targets)
        if not homogeneous:
            counts = [len(result.get(m, {}).get(topic_id, ())) for m in subscribers]
            assert max(counts) - min(counts) <= 1, (topic_id, counts)
    if homogeneous:
        counts = [sum(len(p) for p in result.get(m, {}).values()) for m in spec.members]
        assert max(counts) - min(counts) <= 1, counts


@pytest.mark.parametrize("seed", range(40))
def test_growing_and_shrinking_groups_stay_balanced_and_sticky(seed):
    """Kafka's testIncrementalAssignment{Increasing,Decreasing}Members{Homogeneous,Heterogeneous},
    with random sizes: members join one at a time, then leave, each round starting from the last
    result; every round is balanced and shares as desired, and in a homogeneous group with no
    more members than partitions a member keeps as much of what it had as its new count allows
    (stickiness; balance comes first, so heterogeneous groups and shared partitions may move)."""
    rng = random.Random(seed)
    counts = {T1: rng.randint(1, 12), T2: rng.randint(1, 8), T3: rng.randint(1, 4)}
    topics = Topics(counts)
    hetero = seed % 2 == 1
    choices = [[T1, T2, T3], [T2], [T3], [T1, T2]] if hetero else [[T1, T2, T3]]
    assignable = None
    if seed % 4 == 3:
        assignable = {t: frozenset(p for p in range(n) if rng.random() < 0.7) for t, n in counts.items()}
    subs: dict[str, list[uuid.UUID]] = {}
    current: dict[str, Any] = {}
    sub_type = HETERO if hetero else HOMO
    order = [f"M{i}" for i in range(rng.randint(2, 30))]
    for step in order + [f"-{m}" for m in reversed(order[1:])]:
        before = len(subs)
        if step.startswith("-"):
            del subs[step[1:]]
            current.pop(step[1:], None)
        else:
            subs[step] = choices[len(subs) % len(choices)]
        spec = GroupSpec({m: member(t) for m, t in subs.items()}, sub_type, dict(current), assignable)
        result = ASSIGNOR.assign(spec, topics)
        _check(spec, topics, result)
        targets = sum(1 for t, n in counts.items() for p in range(n) if spec.is_partition_assignable(t, p))
        if not hetero and max(len(subs), before) <= targets:  # no sharing before or after
            for m, old in current.items():  # stickiness: of what it had, a member keeps what it can
                old_set, new_set = _flat(old), _flat(result.get(m, {}))
                assert len(old_set & new_set) >= min(len(old_set), len(new_set)), (step, m, old_set, new_set)
        current = {m: result.get(m, {}) for m in subs}


def _flat(assignment: Any) -> set[tuple[uuid.UUID, int]]:
    return {(t, p) for t, parts in assignment.items() for p in parts}
