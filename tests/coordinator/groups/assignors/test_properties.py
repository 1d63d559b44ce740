"""Hypothesis properties of the assignors: exactly-once, subscription respected, balance
(homogeneous uniform), stability (no membership change -> no change), removal moves only the
removed member's partitions (homogeneous uniform), and equal inputs -> equal outputs."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.groups.assignors import ASSIGNORS
from coordinator.groups.assignors.spec import Assignment, GroupSpec, SubscriptionType, TopicId
from tests.coordinator.groups.assignors.support import Topics, check_balanced, check_valid, member, spec

TOPIC_IDS = [uuid.UUID(int=(i * 0x2545F4914F6CDD1D_9E3779B97F4A7C15) % (1 << 128)) for i in range(1, 7)]
GONE = uuid.UUID(int=12345)  # a topic the metadata no longer has, still in old assignments

settings.register_profile("assignors", max_examples=150, deadline=None, derandomize=True)
settings.load_profile("assignors")


@st.composite
def groups(draw: Any, homogeneous: bool) -> tuple[GroupSpec, Topics]:
    """Random topics, members, subscriptions and a valid current target assignment (each
    partition held by at most one member, possibly one that no longer subscribes to it)."""
    n_topics = draw(st.integers(1, 5))
    counts = {t: draw(st.integers(1, 12)) for t in TOPIC_IDS[:n_topics]}
    n_members = draw(st.integers(1, 7))
    member_ids = [f"m{i}" for i in draw(st.permutations(range(n_members)))]
    topic_list = list(counts)
    if homogeneous:
        common = draw(st.sets(st.sampled_from(topic_list), min_size=1))
        subs = {m: member(common) for m in member_ids}
    else:
        subs = {m: member(draw(st.sets(st.sampled_from(topic_list)))) for m in member_ids}
    held: dict[str, dict[TopicId, set[int]]] = {m: {} for m in member_ids}
    for t, n in list(counts.items()) + [(GONE, 3)]:
        for p in range(n):
            owner = draw(st.sampled_from([None, *member_ids]))
            if owner is not None:
                held[owner].setdefault(t, set()).add(p)
    assignments: dict[str, Assignment] = {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in held.items()}
    kind = SubscriptionType.HOMOGENEOUS if homogeneous else None
    return spec(subs, assignments, kind), Topics(counts)


def _again(group: GroupSpec, result: Any, members: list[str] | None = None) -> GroupSpec:
    order = list(group.members) if members is None else members
    return GroupSpec(
        members={m: group.members[m] for m in order},
        subscription_type=group.subscription_type,
        assignments={m: result[m] for m in order if m in result},
    )


@given(data=st.data(), name=st.sampled_from(sorted(ASSIGNORS)), homogeneous=st.booleans())
def test_every_partition_exactly_once_to_a_subscriber(data: Any, name: str, homogeneous: bool) -> None:
    group, topics = data.draw(groups(homogeneous))
    check_valid(group, topics, ASSIGNORS[name].assign(group, topics))


@given(data=st.data())
def test_uniform_homogeneous_is_balanced(data: Any) -> None:
    group, topics = data.draw(groups(homogeneous=True))
    check_balanced(ASSIGNORS["uniform"].assign(group, topics))


@given(data=st.data(), name=st.sampled_from(sorted(ASSIGNORS)), homogeneous=st.booleans())
def test_no_membership_change_no_assignment_change(data: Any, name: str, homogeneous: bool) -> None:
    group, topics = data.draw(groups(homogeneous))
    assignor = ASSIGNORS[name]
    first = assignor.assign(group, topics)
    assert assignor.assign(_again(group, first), topics) == first


@given(data=st.data())
def test_uniform_homogeneous_removal_moves_only_the_removed_members_partitions(data: Any) -> None:
    group, topics = data.draw(groups(homogeneous=True))
    assignor = ASSIGNORS["uniform"]
    stable = assignor.assign(group, topics)
    if len(group.members) < 2:
        return
    gone = data.draw(st.sampled_from(list(group.members)))
    # Kafka's member order (a HashMap's) is not stable between runs either.
    rest = data.draw(st.permutations([m for m in group.members if m != gone]))
    after = assignor.assign(_again(group, stable, rest), topics)
    for m in rest:
        for t, partitions in stable[m].items():
            assert partitions <= after[m].get(t, frozenset()), f"{m} lost part of {t}"


@given(data=st.data(), name=st.sampled_from(sorted(ASSIGNORS)), homogeneous=st.booleans())
def test_equal_inputs_equal_outputs(data: Any, name: str, homogeneous: bool) -> None:
    group, topics = data.draw(groups(homogeneous))
    # The same values built in another insertion order (dicts and sets compare equal).
    mirrored = GroupSpec(
        members={m: member(reversed(sorted(s.subscribed_topic_ids))) for m, s in group.members.items()},
        subscription_type=group.subscription_type,
        assignments={
            m: {t: frozenset(sorted(ps, reverse=True)) for t, ps in reversed(list(a.items()))}
            for m, a in reversed(list(group.assignments.items()))
        },
    )
    assert mirrored == group
    assignor = ASSIGNORS[name]
    assert assignor.assign(mirrored, topics) == assignor.assign(group, topics)
