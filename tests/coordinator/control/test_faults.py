"""Fault rules: every matcher, every action's decision, FIFO errors, the n-th match, lifetimes
on an injected clock, hits, the index, and the one-line refusals at add time."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from coordinator.control.errors import ControlError
from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import Decision, FaultRules, RequestInfo
from coordinator.runtime.clock import FakeClock
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages import fetch, heartbeat, join_group, leave_group, metadata, offset_commit, produce

NC = int(ErrorCode.NOT_COORDINATOR)
LOAD = int(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)


def commit(
    group: str = "g",
    member: str = "m",
    topic: str = "t",
    partitions: tuple[int, ...] = (0,),
    instance: str | None = None,
) -> Any:
    return offset_commit.OffsetCommitRequest(
        group_id=group,
        member_id=member,
        group_instance_id=instance,
        topics=[
            offset_commit.OffsetCommitRequestTopic(
                name=topic,
                partitions=[offset_commit.OffsetCommitRequestPartition(partition_index=p) for p in partitions],
            )
        ],
    )


def info(
    request: Any,
    api: int = ApiKey.OFFSET_COMMIT,
    version: int = 8,
    broker: int = 0,
    client: str = "c",
    state: Any = None,
    resolve: Any = None,
) -> RequestInfo:
    return RequestInfo(int(api), version, broker, client, 7, request, group_state=state, resolve_topic=resolve)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_000)


@pytest.fixture
def rules(clock: FakeClock) -> FaultRules:
    return FaultRules(clock, node_ids=lambda: [0, 1, 2])


def test_no_rule_is_inactive_and_matches_nothing(rules: FaultRules) -> None:
    assert rules.active is False
    assert rules.match(info(commit())) is None
    assert not rules.wants(ApiKey.OFFSET_COMMIT)


def test_the_issue_example_fails_one_commit_then_ends(rules: FaultRules) -> None:
    rule_id = rules.add(FaultSpec(api="OffsetCommit", errors=["NOT_COORDINATOR"], count=1))
    assert rules.active and rules.wants(ApiKey.OFFSET_COMMIT) and not rules.wants(ApiKey.HEARTBEAT)
    assert rules.match(info(commit())) == Decision(rule_id, error_code=NC)
    assert rules.match(info(commit())) is None
    assert rules.active is False
    [view] = rules.list()
    assert (view.id, view.api, view.hits, view.matched, view.remaining, view.active) == (
        rule_id,
        "OffsetCommit",
        1,
        1,
        0,
        False,
    )
    assert view.rule == {"api": "OffsetCommit", "errors": ["NOT_COORDINATOR"], "count": 1}


def test_fifo_errors_are_consumed_one_per_request_and_none_lets_one_through(rules: FaultRules) -> None:
    rules.add(FaultSpec(api=ApiKey.JOIN_GROUP, errors=["COORDINATOR_LOAD_IN_PROGRESS", "NONE", 16]))
    req = join_group.JoinGroupRequest(group_id="g")
    decisions = [rules.match(info(req, ApiKey.JOIN_GROUP, 5)) for _ in range(4)]
    assert [d.error_code if d else "none" for d in decisions] == [LOAD, None, NC, "none"]
    assert decisions[1] is not None and decisions[1].applies  # NONE: this one is applied as usual


def test_one_error_every_time_until_removed(rules: FaultRules) -> None:
    rule_id = rules.add(FaultSpec(api="Heartbeat", error="REBALANCE_IN_PROGRESS"))
    req = heartbeat.HeartbeatRequest(group_id="g")
    for _ in range(5):
        decision = rules.match(info(req, ApiKey.HEARTBEAT, 4))
        assert decision is not None and decision.error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert rules.list()[0].hits == 5
    rules.remove(rule_id)
    assert rules.match(info(req, ApiKey.HEARTBEAT, 4)) is None and rules.list() == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (FaultSpec(api="OffsetCommit", delay_ms=500), Decision(1, delay_ms=500)),
        (FaultSpec(api="OffsetCommit", drop_response=True), Decision(1, drop_response=True)),
        (FaultSpec(api="OffsetCommit", close="after"), Decision(1, close_after=True)),
        (FaultSpec(api="OffsetCommit", close="before"), Decision(1, close_before=True)),
        (FaultSpec(api="OffsetCommit", throttle_ms=250), Decision(1, throttle_ms=250)),
        (
            FaultSpec(api="OffsetCommit", error="NOT_COORDINATOR", delay_ms=100, throttle_ms=5),
            Decision(1, error_code=NC, delay_ms=100, throttle_ms=5),
        ),
        (FaultSpec(api="OffsetCommit", delay_ms=100, close="after"), Decision(1, delay_ms=100, close_after=True)),
    ],
)
def test_each_action_becomes_its_decision(rules: FaultRules, spec: FaultSpec, expected: Decision) -> None:
    rules.add(spec)
    decision = rules.match(info(commit()))
    assert decision == expected
    assert decision.applies == (expected.error_code is None and not expected.close_before)


def test_nth_acts_on_that_request_only_and_count_extends_it(rules: FaultRules) -> None:
    rules.add(FaultSpec(api="OffsetCommit", nth=3, error="NOT_COORDINATOR"))
    hits = [rules.match(info(commit())) is not None for _ in range(5)]
    assert hits == [False, False, True, False, False]
    view = rules.list()[0]
    assert (view.matched, view.hits, view.active) == (3, 1, False)
    rules.clear()
    rules.add(FaultSpec(api="OffsetCommit", nth=2, count=2, delay_ms=1))
    assert [rules.match(info(commit())) is not None for _ in range(4)] == [False, True, True, False]


def test_count_and_until_and_for_ms_lifetimes(rules: FaultRules, clock: FakeClock) -> None:
    rules.add(FaultSpec(api="OffsetCommit", delay_ms=1, count=2))
    assert [rules.match(info(commit())) is not None for _ in range(3)] == [True, True, False]
    rules.clear()
    rules.add(FaultSpec(api="OffsetCommit", delay_ms=1, for_ms=500))
    assert rules.list()[0].until_ms == 1_500
    clock.advance(499)
    assert rules.match(info(commit())) is not None
    clock.advance(1)
    assert rules.match(info(commit())) is None
    assert rules.list()[0].active is False and rules.active is False
    rules.clear()
    rules.add(FaultSpec(api="OffsetCommit", delay_ms=1, until_ms=3_000))
    clock.advance(1_500)  # now 3_000: listing alone ends it too
    assert [v.active for v in rules.list()] == [False] and rules.active is False


@pytest.mark.parametrize(
    ("spec", "hit", "miss"),
    [
        (FaultSpec(api="OffsetCommit", min_version=8, max_version=9, delay_ms=1), {"version": 8}, {"version": 7}),
        (FaultSpec(api="OffsetCommit", broker=1, delay_ms=1), {"broker": 1}, {"broker": 2}),
        (FaultSpec(api="OffsetCommit", client_id="app-1", delay_ms=1), {"client": "app-1"}, {"client": "app-2"}),
        (
            FaultSpec(api="OffsetCommit", group="orders", delay_ms=1),
            {"request": commit(group="orders")},
            {"request": commit(group="billing")},
        ),
        (
            FaultSpec(api="OffsetCommit", member="m-9", delay_ms=1),
            {"request": commit(member="m-9")},
            {"request": commit(member="m-1")},
        ),
        (
            FaultSpec(api="OffsetCommit", member="instance-a", delay_ms=1),
            {"request": commit(instance="instance-a")},
            {"request": commit(instance="instance-b")},
        ),
        (
            FaultSpec(api="OffsetCommit", topic="t", delay_ms=1),
            {"request": commit(topic="t")},
            {"request": commit(topic="u")},
        ),
        (
            FaultSpec(api="OffsetCommit", topic="t", partition=2, delay_ms=1),
            {"request": commit(partitions=(1, 2))},
            {"request": commit(partitions=(0, 1))},
        ),
    ],
)
def test_each_matcher(rules: FaultRules, spec: FaultSpec, hit: dict[str, Any], miss: dict[str, Any]) -> None:
    rules.add(spec)
    base: dict[str, Any] = {"request": commit()}
    assert rules.match(info(**{**base, **miss})) is None
    assert rules.match(info(**{**base, **hit})) is not None


def test_member_and_topic_in_nested_and_id_named_requests(rules: FaultRules) -> None:
    rules.add(FaultSpec(api="LeaveGroup", member="static-1", delay_ms=1))
    rules.add(FaultSpec(api="Fetch", topic="orders", partition=3, delay_ms=2))
    leave = leave_group.LeaveGroupRequest(
        group_id="g", members=[leave_group.MemberIdentity(member_id="", group_instance_id="static-1")]
    )
    assert rules.match(info(leave, ApiKey.LEAVE_GROUP, 4)) is not None
    topic_id = uuid.uuid4()
    by_id = fetch.FetchRequest(
        topics=[fetch.FetchTopic(topic_id=topic_id, partitions=[fetch.FetchPartition(partition=3)])]
    )
    assert rules.match(info(by_id, ApiKey.FETCH, 13)) is None  # nobody can name the topic
    assert rules.match(info(by_id, ApiKey.FETCH, 13, resolve={topic_id: "orders"}.get)) == Decision(2, delay_ms=2)


def test_group_state_is_asked_only_when_a_rule_names_one(rules: FaultRules) -> None:
    asked: list[str] = []

    def state_of(group: str) -> str | None:
        asked.append(group)
        return {"g": "CompletingRebalance"}.get(group)

    rules.add(FaultSpec(api="OffsetCommit", group="other", delay_ms=1))
    assert rules.match(info(commit(), state=state_of)) is None and asked == []
    rules.add(FaultSpec(api="OffsetCommit", group_state="completingrebalance", error="REBALANCE_IN_PROGRESS"))
    assert rules.match(info(commit(group="g"), state=state_of)) is not None
    assert rules.match(info(commit(group="h"), state=state_of)) is None  # unknown group: no state
    assert rules.match(info(commit(group="g"))) is None  # nobody to ask: no match
    assert asked == ["g", "h"]


def test_any_api_rules_and_first_match_wins(rules: FaultRules) -> None:
    first = rules.add(FaultSpec(group="g", delay_ms=10))
    rules.add(FaultSpec(api="OffsetCommit", error="NOT_COORDINATOR"))
    assert rules.wants(ApiKey.HEARTBEAT) and rules.wants(ApiKey.FETCH)
    assert rules.match(info(commit())) == Decision(first, delay_ms=10)
    assert rules.match(info(heartbeat.HeartbeatRequest(group_id="g"), ApiKey.HEARTBEAT, 4)) == Decision(
        first, delay_ms=10
    )
    assert rules.match(info(commit(group="x"))) == Decision(2, error_code=NC)
    views = rules.list()
    assert [(v.hits, v.matched) for v in views] == [(2, 2), (1, 1)]


def test_clear_and_unknown_removal(rules: FaultRules) -> None:
    rules.add(FaultSpec(api="Metadata", error="LEADER_NOT_AVAILABLE"))
    rules.add(FaultSpec(api="Produce", delay_ms=5))
    assert rules.clear() == 2 and not rules.active
    with pytest.raises(ControlError) as refused:
        rules.remove(99)
    assert refused.value.status == 404


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (FaultSpec(api="OffsetComit", error="NOT_COORDINATOR"), "unknown API 'OffsetComit'"),
        (FaultSpec(api=99, error="NOT_COORDINATOR"), "unknown API key 99"),
        (FaultSpec(api="WriteTxnMarkers", error="NOT_COORDINATOR"), "WriteTxnMarkers is not served by this broker"),
        (FaultSpec(api="OffsetCommit", error="NOT_A_COORDINATOR"), "unknown error 'NOT_A_COORDINATOR'"),
        (FaultSpec(api="OffsetCommit", errors=[9999]), "unknown error code 9999"),
        (FaultSpec(api="OffsetCommit", errors=[]), "errors is empty"),
        (FaultSpec(api="OffsetCommit", error="NONE"), "error NONE is no error"),
        (FaultSpec(api="OffsetCommit", errors=["NOT_COORDINATOR"], error="NOT_COORDINATOR"), "not both"),
        (FaultSpec(api="OffsetCommit", errors=["NOT_COORDINATOR"], count=3), "count 3 exceeds the 1 errors"),
        (FaultSpec(api="OffsetCommit", min_version=9, max_version=8, delay_ms=1), "min_version 9 is above"),
        (FaultSpec(api="OffsetCommit", min_version=12, delay_ms=1), "never served"),
        (FaultSpec(api="OffsetCommit", broker=7, delay_ms=1), "unknown broker 7 (brokers: 0, 1, 2)"),
        (FaultSpec(api="OffsetCommit", partition=1, delay_ms=1), "partition needs topic"),
        (FaultSpec(api="OffsetCommit", group_state="Rebalancing", delay_ms=1), "unknown group state 'Rebalancing'"),
        (FaultSpec(api="Fetch", group="g", delay_ms=1), "Fetch requests never name a group"),
        (FaultSpec(api="Metadata", member="m", delay_ms=1), "Metadata requests never name a member"),
        (FaultSpec(api="Heartbeat", topic="t", delay_ms=1), "Heartbeat requests never name a topic"),
        (FaultSpec(api="OffsetCommit"), "a rule needs an action"),
        (FaultSpec(api="OffsetCommit", close="before", delay_ms=5), "takes no other action"),
        (FaultSpec(api="OffsetCommit", close="after", error="NOT_COORDINATOR"), 'close "after" applies'),
        (FaultSpec(api="OffsetCommit", drop_response=True, error="NOT_COORDINATOR"), "drop_response applies"),
        (FaultSpec(api="OffsetCommit", delay_ms=-1), "delay_ms must be a non-negative integer"),
        (FaultSpec(api="OffsetCommit", delay_ms=1, count=0), "count must be at least 1"),
        (FaultSpec(api="OffsetCommit", delay_ms=1, nth=0), "nth counts from 1"),
        (FaultSpec(api="OffsetCommit", delay_ms=1, until_ms=1_000), "until_ms 1000 is not after now (1000)"),
        (FaultSpec(api="OffsetCommit", delay_ms=1, until_ms=5_000, for_ms=5), "not both"),
        (FaultSpec(api="OffsetCommit", delay_ms=1, for_ms=0), "for_ms must be positive"),
    ],
)
def test_refusals_are_one_line_400s(rules: FaultRules, spec: FaultSpec, reason: str) -> None:
    with pytest.raises(ControlError) as refused:
        rules.add(spec)
    assert refused.value.status == 400
    assert reason in refused.value.message and "\n" not in refused.value.message
    assert rules.active is False and rules.list() == []


def test_names_and_keys_are_accepted_in_any_spelling(rules: FaultRules) -> None:
    rules.add(FaultSpec(api="offset_commit", errors=["not_coordinator", "16"]))
    rules.add(FaultSpec(api="8", error=int(ErrorCode.NOT_COORDINATOR)))
    assert [v.api for v in rules.list()] == ["OffsetCommit", "OffsetCommit"]


def test_a_hundred_rules_on_other_apis_leave_this_api_unindexed(rules: FaultRules) -> None:
    for i in range(100):
        rules.add(FaultSpec(api="Produce", client_id=f"c{i}", delay_ms=1))
    assert not rules.wants(ApiKey.OFFSET_COMMIT) and rules.match(info(commit())) is None
    meta = metadata.MetadataRequest(topics=None)
    assert rules.match(info(meta, ApiKey.METADATA, 12)) is None
    prod = produce.ProduceRequest(acks=1)
    assert rules.match(info(prod, ApiKey.PRODUCE, 9, client="c42")) == Decision(43, delay_ms=1)
