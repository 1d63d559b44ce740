"""Static membership in consumer groups (KIP-345 in KIP-848): epoch -2 keeps the assignment for
the session timeout, a rejoin under the same instance id takes it back, and Kafka's
UNRELEASED_INSTANCE_ID / FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID rules (ported from Kafka's
GroupMetadataManagerTest)."""

from __future__ import annotations

from dataclasses import replace

from coordinator.groups.consumer.member import ConsumerGroupMember, MemberState
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupCurrentMemberAssignmentTombstone,
    ConsumerGroupMemberMetadataTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    TopicPartitions,
)
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness, seed_group

G = "fooup"


def static(member_id: str, instance_id: str, assigned: dict) -> ConsumerGroupMember:
    return ConsumerGroupMember(
        member_id,
        member_epoch=10,
        previous_member_epoch=9,
        state=MemberState.STABLE,
        instance_id=instance_id,
        rebalance_timeout_ms=5000,
        client_id="client",
        client_host="/127.0.0.1",
        subscribed_topic_names=frozenset({"foo", "bar"}),
        server_assignor="range",
        assigned_partitions={t: frozenset(p) for t, p in assigned.items()},
    )


def two_static_members(h: Harness) -> tuple:
    foo, bar = h.topics.add("foo", 6), h.topics.add("bar", 3)
    m1 = static("m1", "i1", {foo: {0, 1, 2}, bar: {0, 1}})
    m2 = static("m2", "i2", {foo: {3, 4, 5}, bar: {2}})
    seed_group(h, G, 10, [m1, m2], {"m1": {foo: {0, 1, 2}, bar: {0, 1}}, "m2": {foo: {3, 4, 5}, bar: {2}}})
    return foo, bar, m1, m2


def test_static_member_gets_its_assignment_back_upon_rejoin() -> None:
    """Kafka testStaticMemberGetsBackAssignmentUponRejoin."""
    h = Harness()
    foo, bar, m1, m2 = two_static_members(h)
    r = h.heartbeat(G, "m2", -2, instance_id="i2", subscribed_topic_names=["foo", "bar"], owned=())
    assert (r.error_code, r.member_id, r.member_epoch, r.heartbeat_interval_ms) == (0, "m2", -2, 0)
    # KIP-1251: the kept partitions' assignment epochs go back to 0 for the next incarnation.
    reset = {t: dict.fromkeys(p, 0) for t, p in m2.assigned_partitions.items()}
    assert h.records == [replace(m2, member_epoch=-2, assignment_epochs=reset).assignment_record(G)]
    group = h.group(G)
    assert group.members["m2"].member_epoch == -2 and group.group_epoch == 10  # no epoch bump
    assert group.current_partition_epoch(foo, 3) == -2  # still owned: nobody else can take it

    r = h.join(G, "m2-new", ["foo", "bar"], instance_id="i2", server_assignor="range")
    assert (r.member_id, r.member_epoch) == ("m2-new", 10)
    assert r.assignment == (TopicPartitions(foo, (3, 4, 5)), TopicPartitions(bar, (2,)))
    copied = replace(m2, member_id="m2-new", member_epoch=0, previous_member_epoch=0, assignment_epochs=reset)
    rejoined = replace(copied, member_epoch=10, previous_member_epoch=0)
    assert h.records == [
        ConsumerGroupCurrentMemberAssignmentTombstone(G, "m2"),
        ConsumerGroupTargetAssignmentMemberTombstone(G, "m2"),
        ConsumerGroupMemberMetadataTombstone(G, "m2"),
        copied.metadata_record(G),
        ConsumerGroupTargetAssignmentMemberRecord(
            G, "m2-new", (TopicPartitions(foo, (3, 4, 5)), TopicPartitions(bar, (2,)))
        ),
        copied.assignment_record(G),
        rejoined.assignment_record(G),
    ]
    assert set(group.members) == {"m1", "m2-new"} and group.static_members == {"i1": "m1", "i2": "m2-new"}
    assert h.rebuilt() == h.groups


def test_static_member_rejoining_with_new_subscription_bumps_epoch() -> None:
    """Kafka testStaticMemberRejoinsWithNewSubscribedTopics: the replacement's target is the one
    the assignor computes with the previous member's target as its current one."""
    h = Harness()
    foo, bar, m1, m2 = two_static_members(h)
    h.heartbeat(G, "m2", -2, instance_id="i2")
    h.assignors["range"].prepare({"m1": {foo: {0, 1, 2}, bar: {0, 1}}, "m2-new": {foo: {3, 4, 5}}})
    r = h.join(G, "m2-new", ["foo"], instance_id="i2", server_assignor="range")
    assert (r.member_epoch, r.assignment) == (11, (TopicPartitions(foo, (3, 4, 5)),))
    spec = h.assignors["range"].calls[-1]
    assert list(spec.members) == ["m1", "m2-new"]  # the replaced member is left out
    assert spec.member_assignment("m2-new") == {foo: frozenset({3, 4, 5}), bar: frozenset({2})}
    assert ConsumerGroupMetadataRecord(G, 11, metadata_hash(["foo", "bar"], h.topics)) in h.records
    assert h.rebuilt() == h.groups


def test_unreleased_instance_id() -> None:
    """A live static member's instance id cannot be taken (only after it left with -2)."""
    h = Harness()
    two_static_members(h)
    r = h.join(G, "other", ["foo", "bar"], instance_id="i1")
    assert (r.error_code, r.error_message) == (
        ErrorCode.UNRELEASED_INSTANCE_ID,
        (
            "Static member other with instance id i1 cannot join the group because the instance id is owned by "
            "m1 member."
        ),
    )
    assert h.records == []


def test_unknown_static_member() -> None:
    h = Harness()
    two_static_members(h)
    r = h.heartbeat(G, "m3", 10, instance_id="i3")
    assert (r.error_code, r.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID, "Instance id i3 is unknown.")
    r = h.heartbeat(G, "m3", -2, instance_id="i3")
    assert (r.error_code, r.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID, "Instance id i3 is unknown.")


def test_fenced_instance_id() -> None:
    h = Harness()
    two_static_members(h)
    message = "Static member other with instance id i1 was fenced by member m1."
    for epoch in (10, -1, -2):
        r = h.heartbeat(G, "other", epoch, instance_id="i1")
        assert (r.error_code, r.error_message) == (ErrorCode.FENCED_INSTANCE_ID, message)


def test_static_member_epoch_validation() -> None:
    """Kafka testConsumerGroupMemberEpochValidationForStaticMember."""
    h = Harness()
    two_static_members(h)
    assert h.heartbeat(G, "m1", 11, instance_id="i1").error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert h.heartbeat(G, "m1", 8, instance_id="i1").error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert h.heartbeat(G, "m1", 10, instance_id="i1").error_code == ErrorCode.NONE


def test_leaving_static_member_bumps_group_epoch() -> None:
    """Kafka testLeavingStaticMemberBumpsGroupEpoch: -1 with an instance id fences for good."""
    h = Harness()
    two_static_members(h)
    r = h.heartbeat(G, "m2", -1, instance_id="i2")
    assert (r.member_id, r.member_epoch) == ("m2", -1)
    assert h.records == [
        ConsumerGroupCurrentMemberAssignmentTombstone(G, "m2"),
        ConsumerGroupTargetAssignmentMemberTombstone(G, "m2"),
        ConsumerGroupMemberMetadataTombstone(G, "m2"),
        ConsumerGroupMetadataRecord(G, 11, metadata_hash(["foo", "bar"], h.topics)),
    ]
    assert h.group(G).static_members == {"i1": "m1"}


def test_temporarily_left_static_member_is_fenced_after_its_session() -> None:
    """Kafka testSessionTimeoutExpirationStaticMember: the session timer set by its last
    heartbeat removes a static member that left with -2 and never came back."""
    h = Harness()
    foo, bar, m1, m2 = two_static_members(h)
    h.heartbeat(G, "m2", 10, instance_id="i2")
    h.advance(1000)
    h.heartbeat(G, "m2", -2, instance_id="i2")
    assert h.advance(43_999) == []
    fired = h.advance(1)
    assert fired == [
        ConsumerGroupCurrentMemberAssignmentTombstone(G, "m2"),
        ConsumerGroupTargetAssignmentMemberTombstone(G, "m2"),
        ConsumerGroupMemberMetadataTombstone(G, "m2"),
        ConsumerGroupMetadataRecord(G, 11, metadata_hash(["foo", "bar"], h.topics)),
    ]
    assert h.group(G).current_partition_epoch(foo, 3) == -1  # released
    assert h.rebuilt() == h.groups
