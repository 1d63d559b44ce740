"""Consumer groups of kafka-python, aiokafka, kafkajs, @platformatic/kafka and kcat.

Each client joins with its own versions and protocol names (protocol.md §3.1, §3.3): kafka-python
JoinGroup v7/LeaveGroup v5 with range+roundrobin, aiokafka v5/v1 with roundrobin, kafkajs v5/v3
with "RoundRobinAssigner", @platformatic/kafka with roundrobin, kcat's librdkafka 2.0.2 v5/v1.
A group of three of one client forms (every member gets a share; every partition has exactly
one owner, as the members themselves report) and survives a member's clean leave (the other
two take everything). A group mixing kafkajs with confluent-kafka fails for the later joiner with
INCONSISTENT_GROUP_PROTOCOL (23), as it does on Kafka: they share no protocol name.
Deadlines only bound a hang; nothing asserts on time.
"""

from __future__ import annotations

import pytest

from interop.clients.group_members import describe_group, group_owns_all, stop_all
from interop.clients.groups import ConfluentMember, Ownership, close_all
from interop.clients.process_members import KafkajsMember, KcatMember, PlatformaticMember
from interop.clients.python_members import AiokafkaMember, KafkaPythonMember
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

PARTITIONS = 6
DEADLINE = 40.0  # seconds; node clients and kcat start slower than in-process ones
INITIAL_DELAY = {"group.initial.rebalance.delay.ms": 500}

CLIENTS = {
    "kafka-python": KafkaPythonMember,
    "aiokafka": AiokafkaMember,
    "kafkajs": KafkajsMember,
    "platformatic": PlatformaticMember,
    "kcat": KcatMember,
}


@pytest.mark.kafka_settings(INITIAL_DELAY)
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_group_of_three_forms_and_survives_a_leave(kafka_coordinator, topic_name, client):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    member_class = CLIENTS[client]
    members = [
        member_class(f"{client}-{i}", kafka_coordinator.bootstrap, f"three-{client}", topic_name) for i in range(3)
    ]
    try:
        for m in members:
            m.start()
        wait_until(
            lambda: group_owns_all(members, PARTITIONS),
            DEADLINE,
            message=lambda: f"3 {client} members share {PARTITIONS} partitions\n{describe_group(members)}",
        )
        leaving, rest = members[0], members[1:]
        leaving.stop()
        wait_until(
            lambda: group_owns_all(rest, PARTITIONS),
            DEADLINE,
            message=lambda: f"2 {client} members own everything after a leave\n{describe_group(rest)}",
        )
        assert all(m.assigns() >= 2 for m in rest), describe_group(rest)
        assert stop_all(members) == []
    finally:
        stop_all(members)


@pytest.mark.kafka_settings(INITIAL_DELAY)
def test_a_mixed_group_of_confluent_kafka_python_and_aiokafka_agrees_on_roundrobin(kafka_coordinator, topic_name):
    """librdkafka offers [range, roundrobin] (subscription v3), kafka-python [range, roundrobin]
    (v0), aiokafka [roundrobin] (v0): the only protocol all support is roundrobin, so the
    coordinator must select it (Kafka's vote over common candidates), and whichever client leads
    must read the others' subscriptions. Then a member leaves and the other two take over."""
    from interop.clients.python_members import ConfluentKafkaMember

    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    group = "mixed-python"
    members = [
        cls(f"{name}-mixed", kafka_coordinator.bootstrap, group, topic_name)
        for name, cls in (
            ("confluent", ConfluentKafkaMember),
            ("kafka-python", KafkaPythonMember),
            ("aiokafka", AiokafkaMember),
        )
    ]
    try:
        for m in members:
            m.start()
        wait_until(
            lambda: group_owns_all(members, PARTITIONS),
            DEADLINE,
            message=lambda: f"3 different clients share {PARTITIONS} partitions\n{describe_group(members)}",
        )
        # roundrobin over one topic with 6 partitions and 3 members: 2 each, interleaved.
        shares = sorted(sorted(m.owned()) for m in members)
        assert shares == [[0, 3], [1, 4], [2, 5]], f"not a roundrobin split: {shares}"
        members[0].stop()
        wait_until(
            lambda: group_owns_all(members[1:], PARTITIONS),
            DEADLINE,
            message=lambda: f"2 members own everything after a leave\n{describe_group(members[1:])}",
        )
        assert stop_all(members) == []
    finally:
        stop_all(members)


@pytest.mark.kafka_settings(INITIAL_DELAY)
@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
def test_a_static_member_restarted_within_its_session_keeps_its_partitions(kafka_coordinator, topic_name, client):
    """KIP-345 with kafka-python (JoinGroup v7) and aiokafka (v5): a static member's close sends no
    LeaveGroup, and its successor (same group_instance_id, new member id) takes its place in the
    Stable group without a rebalance: same partitions, and the others are not assigned again."""
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    member_class = CLIENTS[client]

    def static(i, suffix=""):
        return member_class(
            f"{client}-static-{i}{suffix}",
            kafka_coordinator.bootstrap,
            f"static-{client}",
            topic_name,
            config={"group_instance_id": f"instance-{i}", "session_timeout_ms": 10000},
        )

    members = [static(i) for i in range(3)]
    try:
        # The restarted member is a follower, never the leader: the first member of an Empty
        # group leads it for as long as it stays (Kafka's ClassicGroup.add). kafka-python 3.0.12
        # sends a second JoinGroup when its poll timed out just as its JoinGroup/SyncGroup
        # completed, and a leader's JoinGroup in a Stable group rebalances it (Kafka's rule), so
        # a successor that had inherited the leadership would rebalance the group now and then.
        # Replacing a leader is covered in tests/coordinator/groups/test_static.py.
        members[0].start()
        wait_until(
            lambda: group_owns_all(members[:1], PARTITIONS),
            DEADLINE,
            message=lambda: f"the first member owns everything\n{describe_group(members)}",
        )
        for m in members[1:]:
            m.start()
        wait_until(
            lambda: group_owns_all(members, PARTITIONS),
            DEADLINE,
            message=lambda: f"3 static members stable\n{describe_group(members)}",
        )
        # The others' assignments so far: forming takes several generations (and kafka-python's
        # extra JoinGroup above may add one), none of which is what this test is about.
        others = [members[0], members[2]]
        assigned = [m.assigns() for m in others]
        before = members[1].owned()
        members[1].stop()
        successor = static(1, "-again").start()
        members.append(successor)
        wait_until(
            lambda: successor.assigns() >= 1,
            DEADLINE,
            message=lambda: f"the successor is assigned\n{describe_group(members)}",
        )
        assert successor.owned() == before, describe_group(members)
        assert [m.assigns() for m in others] == assigned, describe_group(others)
        assert group_owns_all([members[0], successor, members[2]], PARTITIONS), describe_group(members)
    finally:
        stop_all(members)


def _confluent(coordinator, name, group, topic):
    return ConfluentMember(name, coordinator.bootstrap, group, [topic], Ownership())


def test_kafkajs_joining_a_confluent_group_gets_inconsistent_group_protocol(kafka_coordinator, topic_name):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    group = "mixed-confluent-first"
    first = _confluent(kafka_coordinator, "confluent", group, topic_name).start()
    later = KafkajsMember("kafkajs", kafka_coordinator.bootstrap, group, topic_name)
    try:
        wait_until(
            lambda: len(first.owned) == PARTITIONS,
            DEADLINE,
            message=lambda: f"confluent member owns everything\n{first.ownership.describe()}",
        )
        later.start()
        crash = later.client.wait_for(lambda c: later.crashes(), DEADLINE, "kafkajs reports a crash")
        assert crash[0]["type"] == "INCONSISTENT_GROUP_PROTOCOL", later.describe()
        assert later.assigns() == 0
        assert (first.count("assign"), first.count("revoke"), len(first.owned)) == (1, 0, PARTITIONS)
    finally:
        stop_all([later])
        close_all([first])


def test_confluent_joining_a_kafkajs_group_gets_inconsistent_group_protocol(kafka_coordinator, topic_name):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    group = "mixed-kafkajs-first"
    first = KafkajsMember("kafkajs", kafka_coordinator.bootstrap, group, topic_name)
    later = _confluent(kafka_coordinator, "confluent", group, topic_name)
    try:
        first.start()
        wait_until(
            lambda: len(first.owned()) == PARTITIONS,
            DEADLINE,
            message=lambda: f"kafkajs member owns everything\n{first.describe()}",
        )
        later.start()
        wait_until(
            lambda: any("INCONSISTENT_GROUP_PROTOCOL" in e for e in later.errors),
            DEADLINE,
            message=lambda: f"confluent-kafka reports INCONSISTENT_GROUP_PROTOCOL; errors: {later.errors}",
        )
        assert later.count("assign") == 0
        assert first.assigns() == 1 and len(first.owned()) == PARTITIONS, first.describe()
    finally:
        close_all([later])
        stop_all([first])


@pytest.mark.kafka_settings(INITIAL_DELAY)
def test_admin_clients_describe_list_and_shrink_a_live_group(kafka_coordinator, topic_name):
    """The admin side of a live group of 3 static confluent-kafka members, from two admin clients:
    DescribeGroups (confluent v5, kafka-python v6) shows Stable, the range protocol and each
    member's real assignment; ListGroups lists it; OffsetFetch (confluent v9, kafka-python v8
    multi-group) shows the commits the members made. A stopped static member (no LeaveGroup) is
    removed by group.instance.id with kafka-python's batched LeaveGroup v5 (KIP-345 admin removal),
    and the other two take everything long before its 30 s session would expire. Finally, with
    the group empty, DeleteGroups removes it."""
    from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient
    from kafka import KafkaAdminClient
    from kafka.admin import MemberToRemove

    from interop.clients.producers import produce
    from interop.clients.python_members import ConfluentKafkaMember

    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    group = "admin-view"
    members = [
        ConfluentKafkaMember(
            f"admin-{i}",
            kafka_coordinator.bootstrap,
            group,
            topic_name,
            commit=True,
            config={"group.instance.id": f"instance-{i}", "session.timeout.ms": 30000},
        )
        for i in range(3)
    ]
    confluent_admin = AdminClient({"bootstrap.servers": kafka_coordinator.bootstrap})
    kp_admin = KafkaAdminClient(bootstrap_servers=kafka_coordinator.bootstrap, client_id="kgc-interop-admin")
    try:
        for m in members:
            m.start()
        wait_until(
            lambda: group_owns_all(members, PARTITIONS),
            DEADLINE,
            message=lambda: f"3 static members stable\n{describe_group(members)}",
        )
        owned_by_id = {m.member_id: m.owned() for m in members}

        described = confluent_admin.describe_consumer_groups([group])[group].result(DEADLINE)
        assert (described.state, described.partition_assignor) == (ConsumerGroupState.STABLE, "range")
        assert {
            d.member_id: frozenset(tp.partition for tp in d.assignment.topic_partitions) for d in described.members
        } == owned_by_id
        assert sorted(d.group_instance_id for d in described.members) == ["instance-0", "instance-1", "instance-2"]

        raw = kp_admin.describe_groups([group])[group]
        assert (raw["group_state"], raw["protocol_type"], raw["protocol_data"]) == ("Stable", "consumer", "range")
        assert {
            d["member_id"]: frozenset(p for a in d["member_assignment"]["assigned_partitions"] for p in a["partitions"])
            for d in raw["members"]
        } == owned_by_id
        assert {"group_id": group, "group_state": "Stable"}.items() <= next(
            g for g in kp_admin.list_groups() if g["group_id"] == group
        ).items()

        produce("confluent-kafka", kafka_coordinator.bootstrap, topic_name, "admin", 20)
        total = 20 * 5  # one round per codec

        def committed_by_kafka_python():
            offsets = kp_admin.list_group_offsets({group: None})[group]
            return sum(o.offset for tp, o in offsets.items() if tp.topic == topic_name) == total

        wait_until(
            committed_by_kafka_python,
            DEADLINE,
            message=lambda: f"commits cover all {total} messages: {kp_admin.list_group_offsets({group: None})}",
        )
        request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic_name, p) for p in range(PARTITIONS)])
        listed = confluent_admin.list_consumer_group_offsets([request])[group].result(DEADLINE)
        assert sum(tp.offset for tp in listed.topic_partitions) == total

        members[0].stop()  # static: no LeaveGroup, so the coordinator still counts it
        kp_admin.remove_group_members(group, [MemberToRemove(group_instance_id="instance-0")])
        wait_until(
            lambda: group_owns_all(members[1:], PARTITIONS),
            15.0,
            message=lambda: f"2 members own everything after the admin removal\n{describe_group(members[1:])}",
        )
        assert stop_all(members) == []

        # Static members stay after close (no LeaveGroup), so the group is not empty: Kafka refuses
        # to delete it (NON_EMPTY_GROUP) until they expire or an admin removes them.
        with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
            confluent_admin.delete_consumer_groups([group])[group].result(DEADLINE)
        kp_admin.remove_group_members(group, [MemberToRemove(group_instance_id=f"instance-{i}") for i in (1, 2)])
        deleted = confluent_admin.delete_consumer_groups([group])[group]
        deleted.result(DEADLINE)
        assert group not in {g["group_id"] for g in kp_admin.list_groups()}
    finally:
        stop_all(members)
        kp_admin.close()
        del confluent_admin
