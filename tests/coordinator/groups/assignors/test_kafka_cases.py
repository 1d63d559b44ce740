"""Kafka's own assignor test cases (kafka_cases.json: inputs, expected outputs, and the
properties Kafka's test asserts), run against our assignors."""

from __future__ import annotations

import itertools
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from coordinator.groups.assignors import ASSIGNORS
from coordinator.groups.assignors.spec import AssignorError, GroupSpec, SubscriptionType, TopicId
from tests.coordinator.groups.assignors.support import (
    Result,
    Topics,
    check_balanced,
    check_valid,
    kafka_uuid,
    member,
    spec,
)

DATA = json.loads((Path(__file__).parent / "kafka_cases.json").read_text())
IDS = {alias: kafka_uuid(text) for alias, text in DATA["topic_ids"].items()}


def _topic(alias: str) -> TopicId:
    return IDS[alias]


def _decode(result: Result) -> dict[str, dict[str, list[int]]]:
    names = {v: k for k, v in IDS.items()}
    return {m: {names.get(t, str(t)): sorted(p) for t, p in a.items()} for m, a in result.items()}


def _build(case: dict[str, Any], members: list[dict[str, Any]]) -> tuple[GroupSpec, Topics]:
    topics = Topics({_topic(t): n for t, n in case["topics"].items()})
    subs = {m["id"]: member(map(_topic, m["topics"]), instance=m.get("instance_id")) for m in members}
    assignments = {m["id"]: {_topic(t): frozenset(p) for t, p in m.get("assignment", {}).items()} for m in members}
    return spec(subs, assignments, SubscriptionType[case["subscription_type"]]), topics


def _generated(case: dict[str, Any]) -> tuple[GroupSpec, Topics]:
    gen = case["generated"]
    # Kafka draws random topic ids; fixed ones keep the test deterministic.
    topic_ids = [
        uuid.UUID(int=(i * 0x9E3779B97F4A7C15_F39CC0605CEDC835) % (1 << 128)) for i in range(1, gen["topics"] + 1)
    ]
    topics = Topics({t: gen["partitions"] for t in topic_ids})
    names = sorted(f"member{i}" for i in range(1, gen["members"] + 1))  # Kafka's TreeMap order
    return spec({n: member(topic_ids) for n in names}, {}, SubscriptionType[case["subscription_type"]]), topics


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["kafka_test"] for c in DATA["cases"]])
def test_kafka_case(case: dict[str, Any]) -> None:
    assignor = ASSIGNORS[case["assignor"]]
    group, topics = _generated(case) if "generated" in case else _build(case, case["members"])
    if case.get("expected_error"):
        with pytest.raises(AssignorError):
            assignor.assign(group, topics)
        return
    result = assignor.assign(group, topics)
    if "expected" in case:
        assert _decode(result) == case["expected"]
    if "valid" in case.get("check", []):
        check_valid(group, topics, result)
    if "balanced" in case.get("check", []):
        check_balanced(result)
    if "then" in case:
        again_group, again_topics = _build(case, case["then"]["members"])
        again = assignor.assign(again_group, again_topics)
        for new_id, old_id in case["then"]["same_as_first"].items():
            assert again[new_id] == result[old_id]


# -- CommonAssignorTests ----------------------------------------------------------------------

COMMON = DATA["common"]


def _common(
    run: dict[str, Any], rack_aware: bool, racks: dict[str, str], instances: bool = False
) -> tuple[GroupSpec, Topics]:
    counts = {_topic(t): n for t, n in COMMON["topics"].items()}
    # MetadataImageBuilder.addRacks: 4 brokers on rack0..rack3, partition i on brokers i%4, (i+1)%4.
    partition_racks = {
        t: [frozenset({f"rack{i % 4}", f"rack{(i + 1) % 4}"}) for i in range(n)] for t, n in counts.items()
    }
    topics = Topics(counts, partition_racks if rack_aware else {})
    subs = {
        m: member(counts, rack=racks.get(m) if rack_aware else None, instance=f"instance{m}" if instances else None)
        for m in ("A", "B", "C")
    }
    return spec(subs, {}, SubscriptionType[run["subscription_type"]]), topics


def _with(group: GroupSpec, order: list[str], members: dict[str, Any], assignments: Result) -> GroupSpec:
    return GroupSpec(
        members={m: members[m] for m in order},
        subscription_type=group.subscription_type,
        assignments={m: assignments[m] for m in order if m in assignments},
    )


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize(
    "run", COMMON["runs"], ids=[f"{r['kafka_test']}[{r['subscription_type']}]" for r in COMMON["runs"]]
)
def test_common_assignor_property(run: dict[str, Any], rack_aware: bool) -> None:
    assignor = ASSIGNORS[run["assignor"]]
    check = run["check"]
    if check == "assignment_reuse":
        group, topics = _common(run, rack_aware, {"A": "rack1", "B": "rack2", "C": "rack3"})
        first = assignor.assign(group, topics)
        inputs = {m: dict(a) for m, a in first.items()}
        second = assignor.assign(_with(group, list(group.members), dict(group.members), inputs), topics)
        for m in group.members:
            # The map that went in comes back, unchanged and uncopied.
            assert second[m] is inputs[m]
    elif check == "iteration_order_stickiness":
        group, topics = _common(run, rack_aware, {"B": "rack1"})
        first = assignor.assign(group, topics)
        for order in itertools.permutations(group.members):
            again = assignor.assign(_with(group, list(order), dict(group.members), first), topics)
            assert dict(again) == dict(first), order
    elif check == "static_member_replacement":
        group, topics = _common(run, rack_aware, {"B": "rack1"}, instances=True)
        first = assignor.assign(group, topics)
        # B rejoins as B2 with B's instance id; Kafka's TargetAssignmentBuilder hands B2 B's
        # target assignment. Nothing may move.
        members = dict(group.members)
        members["B2"] = members.pop("B")
        previous = {"A": first["A"], "B2": first["B"], "C": first["C"]}
        again = assignor.assign(_with(group, ["A", "C", "B2"], members, previous), topics)
        assert again == previous
    elif check == "member_replacement":
        group, topics = _common(run, rack_aware, {"B": "rack1"})
        first = assignor.assign(group, topics)
        # B leaves and D joins: D takes exactly B's partitions, nobody else moves.
        members = dict(group.members)
        members["D"] = members.pop("B")
        again = assignor.assign(_with(group, ["A", "C", "D"], members, {"A": first["A"], "C": first["C"]}), topics)
        assert again == {"A": first["A"], "C": first["C"], "D": first["B"]}
    else:  # pragma: no cover - a typo in the data file
        raise AssertionError(check)
