"""KIP-848 with real clients: confluent-kafka (librdkafka 2.16) with `group.protocol=consumer`, and
classic members (confluent classic, kafka-python, aiokafka) sharing groups with it.

Ownership is what the members' own rebalance callbacks say (interop/clients/groups.py Ownership,
which also flags a partition handed out while another member still owns it); "holds" is the
coordinator's own word for it: ConsumerGroupDescribe (through the client's AdminClient) says
Stable with every member's current assignment equal to its target. The group.consumer.* settings
are shortened (heartbeat 300 ms, session 3 s) so the suite stays quick; deadlines only bound a
hang, nothing asserts on time.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pytest

from interop.clients.background import BackgroundClient
from interop.clients.consumer_protocol import FAST_SESSION_MS, FAST_SETTINGS, ConsumerProtocolMember, describe_group
from interop.clients.group_members import stop_all
from interop.clients.groups import Ownership, close_all, stable_group
from interop.clients.process import REPO
from interop.clients.python_members import AiokafkaMember, ConfluentKafkaMember, KafkaPythonMember
from tests.support.waiting import wait_until

SESSION_MS, FAST = FAST_SESSION_MS, FAST_SETTINGS
pytestmark = [pytest.mark.interop, pytest.mark.kafka_settings(FAST)]

PARTITIONS = 32
DEADLINE = 30.0


def _members(
    coordinator: Any,
    group: str,
    topics: list[str],
    ownership: Ownership,
    n: int,
    prefix: str = "m",
    config: dict[str, Any] | None = None,
) -> list[ConsumerProtocolMember]:
    return [
        ConsumerProtocolMember(f"{prefix}{i}", coordinator.bootstrap, group, topics, ownership, config)
        for i in range(n)
    ]


def _wait_stable(
    ownership: Ownership,
    topic: str,
    members: list[Any],
    what: str,
    partitions: int = PARTITIONS,
    deadline: float = DEADLINE,
) -> None:
    wait_until(
        stable_group(ownership, topic, partitions, members), deadline, message=lambda: f"{what}\n{ownership.describe()}"
    )


def _settled(coordinator: Any, group: str, expected: dict[str, frozenset[Any]]) -> bool:
    """The coordinator says the group is Stable and each member's current assignment is its target
    and what the member itself reports (expected: member id -> partitions)."""
    described = describe_group(coordinator.bootstrap, group)
    if str(described.state.name) != "STABLE":
        return False
    seen = {}
    for m in described.members:
        current = {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions}
        target = m.target_assignment
        if target is not None and {(tp.topic, tp.partition) for tp in target.topic_partitions} != current:
            return False
        seen[m.member_id] = frozenset(current)
    return seen == expected


def _holds(coordinator: Any, group: str, members: list[ConsumerProtocolMember]) -> None:
    wait_until(
        lambda: _settled(coordinator, group, {m.member_id: m.owned for m in members}),
        DEADLINE,
        message=lambda: f"the coordinator's view of {group}: {describe_group(coordinator.bootstrap, group)}",
    )


@pytest.mark.parametrize("n", [1, 4, 16])
def test_group_of_n_reaches_an_exact_cover_that_holds(kafka_coordinator, topic_name, n, record_property):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    members = _members(kafka_coordinator, f"kip848-{n}", [topic_name], ownership, n)
    start = time.monotonic()
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, f"{n} consumer-protocol members own {PARTITIONS} once")
        record_property("subscribe_to_stable_s", round(time.monotonic() - start, 3))
        _holds(kafka_coordinator, f"kip848-{n}", members)
        shares = sorted(len(m.owned) for m in members)
        assert shares[-1] - shares[0] <= 1, f"the uniform assignor spreads evenly: {shares}"
        assert ownership.violations == []
        assert all(m.errors == [] for m in members), [m.errors for m in members]
    finally:
        close_all(members)


def test_a_member_that_leaves_gives_its_partitions_to_the_others(kafka_coordinator, topic_name):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    members = _members(kafka_coordinator, "kip848-leave", [topic_name], ownership, 4)
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, "4 members stable")
        kept = {m.name: m.owned for m in members[1:]}
        members[0].close()  # ConsumerGroupHeartbeat with epoch -1
        _wait_stable(ownership, topic_name, members[1:], "3 members own everything after one left")
        for m in members[1:]:
            assert m.owned >= kept[m.name], f"{m.name} kept what it had (incremental): {ownership.describe()}"
        assert ownership.violations == []
        _holds(kafka_coordinator, "kip848-leave", members[1:])
    finally:
        close_all(members)


def test_a_killed_member_is_taken_over_after_its_session_timeout(kafka_coordinator, topic_name, record_property):
    """SIGKILL: no leave heartbeat, so the coordinator fences the member when its session expires."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    group = "kip848-killed"
    members = _members(kafka_coordinator, group, [topic_name], ownership, 2)
    argv = [
        sys.executable,
        "-m",
        "interop.clients.consumer_protocol",
        kafka_coordinator.bootstrap,
        group,
        topic_name,
        json.dumps({}),
    ]
    with BackgroundClient(argv, cwd=REPO, name="kip848-child", deadline=60) as child:
        try:
            for m in members:
                m.start()
            child.wait_for(
                lambda c: any(e["event"] == "assign" for e in c.events()), DEADLINE, "the child member is assigned"
            )

            def three_way_split() -> bool:
                child_owned = set()
                for e in child.events():
                    tps = {tuple(tp) for tp in e.get("partitions", [])}
                    child_owned = child_owned | tps if e["event"] == "assign" else child_owned - tps
                ours = {tp for m in members for tp in m.owned}
                return (
                    bool(child_owned)
                    and all(m.owned for m in members)
                    and not child_owned & ours
                    and child_owned | ours == {(topic_name, p) for p in range(PARTITIONS)}
                )

            wait_until(three_way_split, DEADLINE, message=lambda: f"3-way split\n{ownership.describe()}")
            start = time.monotonic()
            child.kill()
            _wait_stable(
                ownership,
                topic_name,
                members,
                "the 2 survivors own everything after the session timeout",
                deadline=SESSION_MS / 1000 + 20,
            )
            record_property("kill_to_stable_s", round(time.monotonic() - start, 3))
            assert ownership.violations == []
        finally:
            close_all(members)


def test_a_static_member_restarted_keeps_its_partitions(kafka_coordinator, topic_name):
    """A static member's close is a temporary leave (epoch -2): its successor with the same
    group.instance.id takes over its assignment; the others are never called back."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()

    def static(i: int, suffix: str = "") -> ConsumerProtocolMember:
        return ConsumerProtocolMember(
            f"s{i}{suffix}",
            kafka_coordinator.bootstrap,
            "kip848-static",
            [topic_name],
            ownership,
            {"group.instance.id": f"instance-{i}"},
        )

    members = [static(i) for i in range(3)]
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, "3 static members stable")
        # An exact cover is not yet the end of the rebalance: a member can own part of its
        # target while others still give up the rest. Only the coordinator's word (Stable,
        # every current assignment its target) says the split is final.
        _holds(kafka_coordinator, "kip848-static", members)
        restarted = members[1]
        before = restarted.owned
        others = [members[0], members[2]]
        callbacks = [(m.count("assign"), m.count("revoke")) for m in others]
        restarted.close()
        successor = static(1, "-again").start()
        members.append(successor)
        wait_until(
            lambda: successor.owned == before,
            DEADLINE,
            message=lambda: f"the successor owns {sorted(before)}\n{ownership.describe()}",
        )
        assert [(m.count("assign"), m.count("revoke")) for m in others] == callbacks, [m.events for m in others]
        _holds(kafka_coordinator, "kip848-static", [members[0], successor, members[2]])
        assert ownership.violations == []
    finally:
        close_all(members)


def test_a_regex_subscription_picks_up_a_new_matching_topic(kafka_coordinator, topic_name):
    from confluent_kafka.admin import AdminClient, NewTopic

    kafka_coordinator.create_topic(f"{topic_name}-a", 2)
    kafka_coordinator.create_topic("unrelated", 2)
    ownership = Ownership()
    member = ConsumerProtocolMember(
        "r0",
        kafka_coordinator.bootstrap,
        "kip848-regex",
        [f"^{topic_name}-.*"],
        ownership,
        {"topic.metadata.refresh.interval.ms": 500},
    )
    try:
        member.start()
        wait_until(
            lambda: member.owned == {(f"{topic_name}-a", 0), (f"{topic_name}-a", 1)},
            DEADLINE,
            message=lambda: ownership.describe(),
        )
        admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})
        admin.create_topics([NewTopic(f"{topic_name}-b", 3, 1)])[f"{topic_name}-b"].result(10)
        wanted = {(f"{topic_name}-{t}", p) for t, n in (("a", 2), ("b", 3)) for p in range(n)}
        wait_until(lambda: member.owned == wanted, DEADLINE, message=lambda: ownership.describe())
        assert ownership.violations == []
    finally:
        close_all([member])


def test_the_range_assignor_gives_co_partitioned_ranges(kafka_coordinator, topic_name):
    topics = [f"{topic_name}-x", f"{topic_name}-y"]
    for t in topics:
        kafka_coordinator.create_topic(t, 4)
    ownership = Ownership()
    members = _members(
        kafka_coordinator, "kip848-range", topics, ownership, 2, config={"group.remote.assignor": "range"}
    )
    try:
        for m in members:
            m.start()
        everything = {(t, p) for t in topics for p in range(4)}
        wait_until(
            lambda: {tp for m in members for tp in m.owned} == everything and all(m.owned for m in members),
            DEADLINE,
            message=lambda: ownership.describe(),
        )
        for m in members:
            by_topic = {t: sorted(p for tt, p in m.owned if tt == t) for t in topics}
            assert by_topic[topics[0]] == by_topic[topics[1]] and len(by_topic[topics[0]]) == 2, ownership.describe()
            assert by_topic[topics[0]] in ([0, 1], [2, 3]), ownership.describe()
        assert describe_group(kafka_coordinator.bootstrap, "kip848-range").partition_assignor == "range"
    finally:
        close_all(members)


# -- classic members and consumer-protocol members in one group ---------------------------------


def _classic_members(coordinator: Any, group: str, topic: str) -> list[Any]:
    return [
        ConfluentKafkaMember("classic-confluent", coordinator.bootstrap, group, topic),
        KafkaPythonMember("classic-kafka-python", coordinator.bootstrap, group, topic),
        AiokafkaMember("classic-aiokafka", coordinator.bootstrap, group, topic),
    ]


def _cover(members: list[Any], partitions: int) -> bool:
    """Every partition owned by exactly one member, every member owning some (ints or (topic, p))."""
    counts: dict[int, int] = {}
    for m in members:
        owned = m.owned() if callable(m.owned) else {p for _, p in m.owned}
        if not owned:
            return False
        for p in owned:
            counts[p] = counts.get(p, 0) + 1
    return sorted(counts) == list(range(partitions)) and all(c == 1 for c in counts.values())


def _describe(members: list[Any]) -> str:
    return "\n".join(m.describe() if hasattr(m, "describe") else f"  {m.name}: {sorted(m.owned)}" for m in members)


def test_classic_group_upgraded_by_a_consumer_member_then_downgraded(kafka_coordinator, topic_name):
    """Three classic clients form a classic group; a consumer-protocol member joins and upgrades it
    (the classic members now get their assignment from the group's target); when it leaves, the
    group goes back to classic and the three own everything again."""
    partitions = 8
    kafka_coordinator.create_topic(topic_name, partitions)
    group = "kip848-upgrade"
    classic = _classic_members(kafka_coordinator, group, topic_name)
    ownership = Ownership()
    modern = ConsumerProtocolMember("modern", kafka_coordinator.bootstrap, group, [topic_name], ownership)
    try:
        for m in classic:
            m.start()
        wait_until(lambda: _cover(classic, partitions), DEADLINE, message=lambda: _describe(classic))
        assert describe_group(kafka_coordinator.bootstrap, group).type.name == "CLASSIC"
        modern.start()
        wait_until(
            lambda: _cover([*classic, modern], partitions), DEADLINE, message=lambda: _describe([*classic, modern])
        )
        described = describe_group(kafka_coordinator.bootstrap, group)
        assert described.type.name == "CONSUMER" and len(described.members) == 4
        modern.close()
        wait_until(lambda: _cover(classic, partitions), DEADLINE, message=lambda: _describe(classic))
        wait_until(lambda: describe_group(kafka_coordinator.bootstrap, group).type.name == "CLASSIC", DEADLINE)
        assert ownership.violations == []
    finally:
        close_all([modern])
        assert stop_all(classic) == []


def test_classic_members_join_a_consumer_group(kafka_coordinator, topic_name):
    """A consumer group first; classic members of each client join it (JoinGroup/SyncGroup answered
    from its target assignment) and share the partitions with the consumer-protocol members."""
    partitions = 8
    kafka_coordinator.create_topic(topic_name, partitions)
    group = "kip848-mixed"
    ownership = Ownership()
    modern = _members(kafka_coordinator, group, [topic_name], ownership, 2, prefix="modern")
    classic = _classic_members(kafka_coordinator, group, topic_name)
    try:
        for m in modern:
            m.start()
        _wait_stable(ownership, topic_name, modern, "2 consumer-protocol members", partitions=partitions)
        for m in classic:
            m.start()
        wait_until(
            lambda: _cover([*modern, *classic], partitions), DEADLINE, message=lambda: _describe([*modern, *classic])
        )
        described = describe_group(kafka_coordinator.bootstrap, group)
        assert described.type.name == "CONSUMER" and len(described.members) == 5
        assert ownership.violations == []
    finally:
        close_all(modern)
        assert stop_all(classic) == []
