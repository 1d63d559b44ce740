"""confluent-kafka (librdkafka 2.16) consumer groups against the coordinator.

librdkafka sends JoinGroup v5 (KIP-394: MEMBER_ID_REQUIRED first), SyncGroup v3, Heartbeat v3,
LeaveGroup v1, OffsetFetch v9 as soon as it is assigned, and range/roundrobin (or
cooperative-sticky) as its protocols (protocol.md §3.1, §3.3). Ownership is what the members'
own rebalance callbacks say (interop/clients/groups.py), so "every partition owned by exactly one
member" is the clients' view, and a partition handed to one member while another still owns it
is recorded as a violation.

Formation uses group.initial.rebalance.delay.ms (Kafka's mechanism for this: the delay restarts
when a member arrives) so that members started together form one generation; "no second
rebalance" is then checked by counting on_assign/on_revoke calls. Times to a stable group are
printed and recorded as properties (`pytest -rP` shows them); nothing asserts on time: the
deadlines only bound a hang.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from interop.clients.background import BackgroundClient
from interop.clients.groups import ConfluentMember, Ownership, close_all, stable_group
from interop.clients.process import REPO
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

PARTITIONS = 32
HEARTBEAT_MS = 300
SESSION_MS = 6000  # the broker minimum (group.min.session.timeout.ms)
FORM_DEADLINE = 30.0  # seconds; a safety net, never a timing assertion
INITIAL_DELAY = {"group.initial.rebalance.delay.ms": 500}


def _members(coordinator, group, topic, ownership, n, *, prefix="m", config=None):
    return [ConfluentMember(f"{prefix}{i}", coordinator.bootstrap, group, [topic], ownership, config) for i in range(n)]


def _wait_stable(ownership, topic, members, what, deadline=FORM_DEADLINE):
    wait_until(
        stable_group(ownership, topic, PARTITIONS, members),
        deadline,
        message=lambda: f"{what}\n{ownership.describe()}\n{_errors(members)}",
    )


def _errors(members):
    return "\n".join(f"  {m.name} errors: {m.errors[-5:]}" for m in members if m.errors)


def _report(record_property, name, seconds):
    record_property(name, round(seconds, 3))
    print(f"{name} = {seconds:.3f} s")


@pytest.mark.kafka_settings(INITIAL_DELAY)
@pytest.mark.parametrize("n", [1, 4, 16])
def test_group_of_n_forms_once_with_every_partition_owned_once(kafka_coordinator, topic_name, n, record_property):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    members = _members(kafka_coordinator, f"form-{n}", topic_name, ownership, n)
    start = time.monotonic()
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, f"{n} members own {PARTITIONS} partitions once")
        _report(record_property, f"subscribe_to_stable_n{n}", time.monotonic() - start)
        assert ownership.violations == []
        # One generation: each member was assigned once and never revoked on the way.
        assert [(m.count("assign"), m.count("revoke"), m.count("lost")) for m in members] == [(1, 0, 0)] * n, (
            ownership.describe()
        )
        shares = sorted(len(m.owned) for m in members)
        assert shares[-1] - shares[0] <= 1, f"range/roundrobin spread 32 over {n} evenly: {shares}"
        assert all(m.errors == [] for m in members), _errors(members)
    finally:
        close_all(members)


@pytest.mark.kafka_settings(INITIAL_DELAY)
def test_a_member_that_closes_hands_its_partitions_to_the_rest(kafka_coordinator, topic_name, record_property):
    """close() sends LeaveGroup v1; the others learn of the rebalance on their next heartbeat."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    members = _members(kafka_coordinator, "leave", topic_name, ownership, 4)
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, "4 members stable")
        leaving, rest = members[0], members[1:]
        start = time.monotonic()
        leaving.close()
        _wait_stable(
            ownership, topic_name, rest, "3 remaining members own everything after a LeaveGroup", deadline=15.0
        )
        _report(record_property, "leave_to_stable_s", time.monotonic() - start)
        print(f"(heartbeat.interval.ms = {HEARTBEAT_MS})")
        assert ownership.violations == []
        assert all(m.count("assign") == 2 for m in rest), [m.events for m in rest]
    finally:
        close_all(members)


@pytest.mark.kafka_settings(INITIAL_DELAY)
def test_a_killed_member_is_taken_over_after_its_session_timeout(kafka_coordinator, topic_name, record_property):
    """SIGKILL: no LeaveGroup, so the coordinator only notices when the session (6 s) expires."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    group = "killed"
    members = _members(kafka_coordinator, group, topic_name, ownership, 2)
    child_config = {"heartbeat.interval.ms": HEARTBEAT_MS, "session.timeout.ms": SESSION_MS}
    argv = [
        sys.executable,
        "-m",
        "interop.clients.groups",
        kafka_coordinator.bootstrap,
        group,
        topic_name,
        json.dumps(child_config),
    ]
    with BackgroundClient(argv, cwd=REPO, name="confluent-child", deadline=60) as child:
        try:
            for m in members:
                m.start()
            child.wait_for(
                lambda c: any(e["event"] == "assign" for e in c.events()), FORM_DEADLINE, "the child member is assigned"
            )

            def three_way_split():
                child_owned = {tuple(tp) for e in child.events() if e["event"] == "assign" for tp in e["partitions"]}
                ours = {tp for m in members for tp in m.owned}
                everything = {(topic_name, p) for p in range(PARTITIONS)}
                return (
                    child_owned
                    and all(m.owned for m in members)
                    and not child_owned & ours
                    and child_owned | ours == everything
                )

            wait_until(three_way_split, FORM_DEADLINE, message=lambda: f"3-way split\n{ownership.describe()}")
            start = time.monotonic()
            child.kill()
            _wait_stable(
                ownership,
                topic_name,
                members,
                "the 2 survivors own everything after the session timeout",
                deadline=SESSION_MS / 1000 + 15,
            )
            _report(record_property, "kill_to_stable_s", time.monotonic() - start)
            print(f"(session.timeout.ms = {SESSION_MS})")
            assert ownership.violations == []
        finally:
            close_all(members)


@pytest.mark.kafka_settings(INITIAL_DELAY)
def test_a_static_member_restarted_within_its_session_keeps_its_partitions(kafka_coordinator, topic_name):
    """KIP-345: a static member's close sends no LeaveGroup; its successor with the same
    group.instance.id replaces it without a rebalance, so the others are never called back."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()

    def static(i, suffix=""):
        return ConfluentMember(
            f"s{i}{suffix}",
            kafka_coordinator.bootstrap,
            "static",
            [topic_name],
            ownership,
            {"group.instance.id": f"instance-{i}", "session.timeout.ms": 10000},
        )

    members = [static(i) for i in range(3)]
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, "3 static members stable")
        restarted = members[1]
        before, old_id = restarted.owned, restarted.member_id
        # The others' callbacks so far: a member joining after the initial delay makes forming
        # take two generations, which is not what this test is about.
        others = [members[0], members[2]]
        callbacks = [(m.count("assign"), m.count("revoke")) for m in others]
        restarted.close()
        successor = static(1, "-again").start()
        members.append(successor)
        wait_until(
            lambda: successor.count("assign") >= 1,
            FORM_DEADLINE,
            message=lambda: f"the successor is assigned\n{ownership.describe()}\n{_errors(members)}",
        )
        assert successor.owned == before, ownership.describe()
        assert successor.member_id not in (None, old_id), "the coordinator gave the successor a new member id"
        assert [(m.count("assign"), m.count("revoke")) for m in others] == callbacks, [m.events for m in others]
        _wait_stable(ownership, topic_name, [members[0], successor, members[2]], "the same split again")
        assert ownership.violations == []
    finally:
        close_all(members)


@pytest.mark.kafka_settings(INITIAL_DELAY)
def test_cooperative_sticky_rebalances_incrementally(kafka_coordinator, topic_name):
    """cooperative-sticky: a joiner takes partitions only after their owners gave them up (two
    rebalances), the others keep what they still own; a leaver's partitions are only added."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    ownership = Ownership()
    config = {"partition.assignment.strategy": "cooperative-sticky"}
    members = _members(kafka_coordinator, "coop", topic_name, ownership, 2, config=config)
    try:
        for m in members:
            m.start()
        _wait_stable(ownership, topic_name, members, "2 cooperative members stable")
        first = {m.name: m.owned for m in members}

        joiner = _members(kafka_coordinator, "coop", topic_name, ownership, 1, prefix="j", config=config)[0]
        members.append(joiner.start())
        _wait_stable(ownership, topic_name, members, "3 cooperative members stable")
        for m in members[:2]:
            revoked = {tp for e in m.events if e.kind == "revoke" for tp in e.tps}
            assert revoked and revoked < first[m.name], f"{m.name} gave up only some partitions: {m.events}"
            assert m.owned == first[m.name] - revoked, f"{m.name} kept the rest: {ownership.describe()}"
            assert m.count("lost") == 0
        assert ownership.violations == []

        kept = {m.name: m.owned for m in members[:2]}
        revokes = {m.name: m.count("revoke") for m in members[:2]}
        joiner.close()
        _wait_stable(ownership, topic_name, members[:2], "2 members own everything after the joiner left")
        for m in members[:2]:
            assert m.owned > kept[m.name], f"{m.name} only gained partitions: {m.events}"
            assert m.count("revoke") == revokes[m.name], f"{m.name} revoked nothing on a leave: {m.events}"
        assert ownership.violations == []
    finally:
        close_all(members)
