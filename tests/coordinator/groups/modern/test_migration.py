"""Online migration between the classic and the consumer protocol (KIP-848, Kafka 4.2
GroupMetadataManager): a consumer-protocol member upgrades a classic group, classic members keep
working inside the consumer group (JoinGroup/SyncGroup/Heartbeat/LeaveGroup answered from its target
assignment), the group goes back to classic when its last consumer-protocol member leaves, and
empty groups of either type make way for the other whatever the policy."""

from __future__ import annotations

import pytest

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.consumer.member import MemberState
from coordinator.groups.consumer.settings import ConsumerGroupSettings, MigrationPolicy
from coordinator.groups.group import ClassicGroup
from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone
from coordinator.groups.requests import LeaveGroupParams, LeavingMember, SyncGroupParams
from coordinator.groups.state import GroupState
from protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    decode_assignment,
    encode_assignment,
    encode_subscription,
)
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import FAST, ConsumerTestContext, assignment, owned

SUB = encode_subscription(ConsumerProtocolSubscription(version=1, topics=["foo"]))
PROTOCOLS = [("range", SUB)]


def assigned(*parts: int, version: int = 1) -> bytes:
    return encode_assignment(ConsumerProtocolAssignment(version, [TopicPartition("foo", list(parts))]))


def classic_group(c: ConsumerTestContext, n: int = 2) -> list[str]:
    """A Stable classic group of n consumer-protocol members on foo (4 partitions), split evenly."""
    ids = []
    for i in range(n):
        first = c.join("", client_id=f"c{i}", protocols=PROTOCOLS)
        reply = c.join(first.member_id, client_id=f"c{i}", protocols=PROTOCOLS)
        for j, m in enumerate(ids):
            c.join(m, client_id=f"c{j}", protocols=PROTOCOLS)
        assert reply.done
        ids.append(reply.value.member_id)
    group = c.group()
    per = 4 // n
    split = [(m, assigned(*range(i * per, (i + 1) * per))) for i, m in enumerate(ids)]
    for m in ids[1:]:
        c.sync(m, group.generation_id)
    c.sync(ids[0], group.generation_id, split)
    assert group.state is GroupState.STABLE
    return ids


@pytest.fixture
def c() -> ConsumerTestContext:
    ctx = ConsumerTestContext(start_ms=1_000)
    ctx.registry.add("foo", 4)
    return ctx


def test_a_consumer_protocol_member_upgrades_a_classic_group(c):
    foo = c.registry.topics["foo"].topic_id
    a, b = classic_group(c)
    generation = c.group().generation_id
    c.take_records()
    joined = c.join_consumer("new", ["foo"])
    records = c.take_records()
    assert records[0] == GroupTombstone("g")
    assert [type(x).__name__ for x in records[1:9]] == [
        "ConsumerGroupMemberMetadataRecord",
        "ConsumerGroupMemberMetadataRecord",
        "ConsumerGroupMetadataRecord",
        "ConsumerGroupTargetAssignmentMemberRecord",
        "ConsumerGroupTargetAssignmentMemberRecord",
        "ConsumerGroupTargetAssignmentMetadataRecord",
        "ConsumerGroupCurrentMemberAssignmentRecord",
        "ConsumerGroupCurrentMemberAssignmentRecord",
    ]
    assert records[1].classic_member_metadata == r.ClassicMemberMetadata(10_000, (r.ClassicProtocol("range", SUB),))
    assert records[3].epoch == generation
    group = c.cgroup()
    assert isinstance(group, ConsumerGroup) and group.num_classic_members == 2
    assert group.group_epoch == generation + 1 and joined.member_epoch == generation + 1
    assert group.members[a].assigned_partitions == {foo: frozenset({0, 1})}
    assert c.consumer_deadline(f"session-timeout-g-{a}") == c.clock.time_ms() + 10_000  # classic session
    assert c.fresh_shard().groups == c.shard.groups


def test_classic_members_rejoin_and_sync_from_the_target_assignment(c):
    foo = c.registry.topics["foo"].topic_id
    a, b = classic_group(c)
    gen = c.group().generation_id
    joined = c.join_consumer("new", ["foo"])
    assert c.heartbeat(a, gen) == ErrorCode.REBALANCE_IN_PROGRESS  # the group epoch moved on
    rejoin = c.join(a, protocols=PROTOCOLS)  # answered at once: no join phase in a consumer group
    assert (rejoin.error, rejoin.member_id, rejoin.generation_id, rejoin.leader, rejoin.members) == (
        ErrorCode.NONE,
        a,
        gen + 1,
        "",
        [],
    )
    assert (rejoin.protocol_type, rejoin.protocol_name) == ("consumer", "range")
    synced = c.send(SyncGroupParams("g", gen + 1, a, protocol_type="consumer", protocol_name="range"))
    target = c.cgroup().target_assignment[a]
    assert synced.error == ErrorCode.NONE
    expected = ConsumerProtocolAssignment(1, [TopicPartition("foo", sorted(target[foo]))])
    assert decode_assignment(synced.assignment) == expected
    assert c.heartbeat(a, gen + 1) == ErrorCode.NONE
    assert c.heartbeat(a, gen) == ErrorCode.ILLEGAL_GENERATION
    assert (
        c.send(SyncGroupParams("g", gen + 1, a, protocol_type="consumer", protocol_name="roundrobin")).error
        == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    assert c.heartbeat("nobody", gen + 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.heartbeat("new", joined.member_epoch) == ErrorCode.UNKNOWN_MEMBER_ID  # not a classic member


def test_upgrade_refused_by_policy_or_by_a_malformed_assignment(c):
    classic_group(c)
    c.take_records()
    c.shard.config = c.shard.config.__class__(
        consumer=ConsumerGroupSettings(**{**FAST.__dict__, "migration_policy": MigrationPolicy.DOWNGRADE})
    )
    refused = c.join_consumer("new", ["foo"])
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Cannot upgrade classic group g to consumer group because online upgrade is disabled.",
    )
    assert c.take_records() == [] and isinstance(c.shard.groups["g"], ClassicGroup)


def test_malformed_embedded_protocol_refuses_the_upgrade():
    c = ConsumerTestContext()
    c.registry.add("foo", 4)
    c.stable_group(2, protocols=[("range", b"not a subscription")])
    c.take_records()
    refused = c.join_consumer("new", ["foo"])
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Cannot upgrade classic group g to consumer group because the embedded consumer protocol is malformed.",
    )
    assert c.take_records() == []


def test_the_last_consumer_protocol_member_leaving_downgrades_the_group(c):
    a, b = classic_group(c)
    joined = c.join_consumer("new", ["foo"])
    epoch = joined.member_epoch
    c.take_records()
    left = c.cg_heartbeat("new", -1)
    assert (left.error_code, left.member_epoch) == (0, -1)
    records = c.take_records()
    group = c.shard.groups["g"]
    assert isinstance(group, ClassicGroup) and group.state is GroupState.PREPARING_REBALANCE
    assert group.generation_id == epoch and set(group.members) == {a, b}
    tail = records[-1]
    assert isinstance(tail, GroupMetadataRecord) and tail.generation_id == epoch and tail.protocol_name == "range"
    assert [m.member_id for m in tail.members] == [a, b]
    assert records[-2] == r.ConsumerGroupMetadataTombstone("g")
    # What a restart loads is the classic group of that record (Stable until its members rejoin).
    loaded = c.fresh_shard().groups["g"]
    assert isinstance(loaded, ClassicGroup) and loaded.snapshot() == tail
    # The classic members rejoin and form a new generation.
    ra, rb = c.join(a, protocols=PROTOCOLS), c.join(b, protocols=PROTOCOLS)
    assert ra.done and rb.done and ra.value.generation_id == epoch + 1


def test_downgrade_policy_disabled_keeps_a_consumer_group(c):
    a, b = classic_group(c)
    c.join_consumer("new", ["foo"])
    c.shard.config = c.shard.config.__class__(
        consumer=ConsumerGroupSettings(**{**FAST.__dict__, "migration_policy": MigrationPolicy.UPGRADE})
    )
    c.cg_heartbeat("new", -1)
    group = c.cgroup()
    assert set(group.members) == {a, b} and group.num_classic_members == 2


def test_classic_join_to_an_empty_consumer_group_replaces_it(c):
    c.join_consumer("m1", ["foo"])
    c.cg_heartbeat("m1", -1)
    c.take_records()
    first = c.join("", protocols=PROTOCOLS)
    assert first.error == ErrorCode.MEMBER_ID_REQUIRED
    records = c.take_records()
    assert records[-2:] == [
        r.ConsumerGroupMetadataTombstone("g"),
        GroupMetadataRecord("g", "", 0, None, None, 1_000, ()),
    ]
    assert isinstance(c.shard.groups["g"], ClassicGroup)
    assert c.fresh_shard().groups.keys() == {"g"}


def test_consumer_join_to_an_empty_classic_group_replaces_it(c):
    first = c.join("", protocols=PROTOCOLS, version=3)
    c.send(LeaveGroupParams.single("g", first.value.member_id if hasattr(first, "value") else first.member_id))
    assert c.group().state is GroupState.EMPTY
    c.take_records()
    joined = c.join_consumer("m1", ["foo"])
    assert joined.error_code == ErrorCode.NONE and joined.member_epoch == 1
    assert c.take_records()[0] == GroupTombstone("g")


def test_classic_join_rules_inside_a_consumer_group(c):
    c.join_consumer("m1", ["foo"])
    required = c.join("", protocols=PROTOCOLS, version=4)
    assert required.error == ErrorCode.MEMBER_ID_REQUIRED and required.member_id
    wrong = c.join("", protocols=PROTOCOLS, protocol_type="connect", version=4)
    assert wrong.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    joined = c.join(required.member_id, protocols=PROTOCOLS, version=4)
    assert joined.error == ErrorCode.NONE and joined.generation_id == 2
    member = c.cgroup().members[required.member_id]
    assert member.use_classic_protocol and member.state == MemberState.UNRELEASED_PARTITIONS
    # Its partitions come once m1 released them: the heartbeat says "rejoin".
    foo = c.registry.topics["foo"].topic_id
    m1 = c.cg_heartbeat("m1", 1, owned=[(foo, [0, 1, 2, 3])])
    c.cg_heartbeat("m1", 1, owned=owned(m1))
    assert c.heartbeat(required.member_id, 2) == ErrorCode.REBALANCE_IN_PROGRESS
    again = c.join(required.member_id, protocols=PROTOCOLS, version=4)
    synced = c.sync(required.member_id, again.generation_id)
    assert decode_assignment(synced.assignment).partitions() == [("foo", 2), ("foo", 3)]
    assert assignment(c.cg_heartbeat("m1", 2)) is None


def test_classic_leave_inside_a_consumer_group(c):
    a, b = classic_group(c)
    c.join_consumer("new", ["foo"])
    c.take_records()
    result = c.send(LeaveGroupParams("g", [LeavingMember(a), LeavingMember("ghost"), LeavingMember("", "nope")]))
    assert [(m.member_id, m.error) for m in result.members] == [
        (a, ErrorCode.NONE),
        ("ghost", ErrorCode.UNKNOWN_MEMBER_ID),
        ("", ErrorCode.UNKNOWN_MEMBER_ID),
    ]
    assert set(c.cgroup().members) == {b, "new"}
    assert c.fresh_shard().groups == c.shard.groups


def test_a_classic_member_that_never_syncs_is_fenced(c):
    c.join_consumer("m1", ["foo"])
    required = c.join("", protocols=PROTOCOLS, version=4)
    c.join(required.member_id, protocols=PROTOCOLS, version=4, rebalance_ms=3_000)
    assert c.consumer_deadline(f"sync-g-{required.member_id}") == c.clock.time_ms() + 3_000
    c.sleep(3_000)
    assert required.member_id not in c.cgroup().members


def test_a_classic_static_member_replacing_the_last_consumer_member_downgrades(c):
    """Kafka validateOnlineDowngradeWithReplacedMember: the classic JoinGroup of instance i1 replaces
    the group's only consumer-protocol member (also i1); the group becomes classic at once, the
    newcomer takes over its target, and with the same subscription no rebalance starts."""
    c.join_consumer("m1", ["foo"], instance_id="i1")
    required = c.join("", protocols=PROTOCOLS, version=4)
    classic_id = required.member_id
    c.join(classic_id, protocols=PROTOCOLS, version=4)
    target = c.cgroup().target_assignment["m1"]
    c.take_records()
    joined = c.join("", protocols=PROTOCOLS, instance_id="i1", version=5)
    group = c.shard.groups["g"]
    assert isinstance(group, ClassicGroup) and group.state is GroupState.STABLE
    newcomer = next(m for m in group.members.values() if m.group_instance_id == "i1")
    assert set(group.members) == {classic_id, newcomer.member_id} and joined.member_id == newcomer.member_id
    foo = c.registry.topics["foo"].topic_id
    assert decode_assignment(newcomer.assignment).partitions() == [("foo", p) for p in sorted(target[foo])]
    records = c.take_records()
    assert isinstance(records[-1], GroupMetadataRecord) and records[-2] == r.ConsumerGroupMetadataTombstone("g")
    assert c.fresh_shard().groups["g"].snapshot() == records[-1]
