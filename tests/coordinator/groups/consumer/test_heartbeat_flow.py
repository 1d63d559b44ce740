"""ConsumerGroupHeartbeat: joins, subscription changes, new members, leaving and the whole
reconciliation of three members, with the exact records and responses (ported from Kafka's
GroupMetadataManagerTest; Kafka 4.2 writes the metadata hash instead of PartitionMetadata, and
Kafka 4.3 each partition's assignment epoch, KIP-1251)."""

from __future__ import annotations

import uuid

from coordinator.groups.consumer.group import ConsumerGroupState
from coordinator.groups.consumer.member import ConsumerGroupMember, MemberState, to_topic_partitions
from coordinator.groups.consumer.metadata_hash import metadata_hash
from coordinator.groups.consumer.records import (
    ConsumerGroupCurrentMemberAssignmentTombstone,
    ConsumerGroupMemberMetadataTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataRecord,
    TopicPartitions,
)
from coordinator.groups.consumer.regex_refresh import on_topics_changed
from tests.coordinator.groups.consumer.harness import Harness, seed_group

G = "fooup"


def tps(*pairs: tuple[object, tuple[int, ...]]) -> tuple[TopicPartitions, ...]:
    return tuple(TopicPartitions(t, p) for t, p in pairs)  # type: ignore[arg-type]


def member(
    member_id: str,
    epoch: int,
    previous: int,
    names: set[str],
    assigned: dict | None = None,
    state: MemberState = MemberState.STABLE,
    pending: dict | None = None,
    epochs: dict | None = None,
) -> ConsumerGroupMember:
    """A member whose partitions were assigned at `epoch`, unless `epochs` (topic -> partition ->
    epoch, Kafka's mkAssignmentWithEpochs) says otherwise."""
    if epochs is None:
        epochs = {t: dict.fromkeys(p, max(epoch, 0)) for t, p in {**(assigned or {}), **(pending or {})}.items()}
    return ConsumerGroupMember(
        member_id,
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=state,
        rebalance_timeout_ms=5000,
        client_id="client",
        client_host="/127.0.0.1",
        subscribed_topic_names=frozenset(names),
        server_assignor="range",
        assigned_partitions={t: frozenset(p) for t, p in (assigned or {}).items()},
        partitions_pending_revocation={t: frozenset(p) for t, p in (pending or {}).items()},
        assignment_epochs=epochs,
    )


def test_member_joins_empty_group() -> None:
    h = Harness()
    foo, bar = h.topics.add("foo", 6), h.topics.add("bar", 3)
    h.assignors["range"].prepare({"m": {foo: range(6), bar: range(3)}})
    result = h.join(G, "m", ["foo", "bar"], server_assignor="range")
    assert (result.error_code, result.member_id, result.member_epoch, result.heartbeat_interval_ms) == (0, "m", 1, 5000)
    assert result.assignment == tps((foo, (0, 1, 2, 3, 4, 5)), (bar, (0, 1, 2)))
    expected = member("m", 1, 0, {"foo", "bar"}, {foo: range(6), bar: range(3)})
    assert h.records == [
        expected.metadata_record(G),
        ConsumerGroupMetadataRecord(G, 1, metadata_hash(["foo", "bar"], h.topics)),
        ConsumerGroupTargetAssignmentMemberRecord(G, "m", tps((foo, (0, 1, 2, 3, 4, 5)), (bar, (0, 1, 2)))),
        ConsumerGroupTargetAssignmentMetadataRecord(G, 1),
        expected.assignment_record(G),
    ]
    assert h.group(G).members["m"] == expected
    assert h.group(G).state == ConsumerGroupState.STABLE
    assert h.timers.deadline(f"session-timeout-{G}-m") == 45000
    assert h.rebuilt() == h.groups


def test_updating_subscription_triggers_new_target_assignment() -> None:
    h = Harness()
    foo, bar = h.topics.add("foo", 6), h.topics.add("bar", 3)
    seed_group(h, G, 10, [member("m", 10, 9, {"foo"}, {foo: range(6)})], {"m": {foo: range(6)}})
    h.assignors["range"].prepare({"m": {foo: range(6), bar: range(3)}})
    result = h.heartbeat(G, "m", 10, subscribed_topic_names=["foo", "bar"])
    assert (result.member_epoch, result.assignment) == (11, tps((foo, (0, 1, 2, 3, 4, 5)), (bar, (0, 1, 2))))
    # foo kept from epoch 10, bar newly assigned at 11.
    expected = member(
        "m",
        11,
        10,
        {"foo", "bar"},
        {foo: range(6), bar: range(3)},
        epochs={foo: dict.fromkeys(range(6), 10), bar: dict.fromkeys(range(3), 11)},
    )
    assert h.records == [
        expected.metadata_record(G),
        ConsumerGroupMetadataRecord(G, 11, metadata_hash(["foo", "bar"], h.topics)),
        ConsumerGroupTargetAssignmentMemberRecord(G, "m", tps((foo, (0, 1, 2, 3, 4, 5)), (bar, (0, 1, 2)))),
        ConsumerGroupTargetAssignmentMetadataRecord(G, 11),
        expected.assignment_record(G),
    ]
    assert h.rebuilt() == h.groups


def _two_member_group(h: Harness) -> tuple[uuid.UUID, uuid.UUID]:
    foo, bar = h.topics.add("foo", 6), h.topics.add("bar", 3)
    seed_group(
        h,
        G,
        10,
        [
            member("m1", 10, 9, {"foo", "bar"}, {foo: {0, 1, 2}, bar: {0, 1}}),
            member("m2", 10, 9, {"foo", "bar"}, {foo: {3, 4, 5}, bar: {2}}),
        ],
        {"m1": {foo: {0, 1, 2}, bar: {0, 1}}, "m2": {foo: {3, 4, 5}, bar: {2}}},
    )
    return foo, bar


def test_new_joining_member_triggers_new_target_assignment() -> None:
    h = Harness()
    foo, bar = _two_member_group(h)
    h.assignors["range"].prepare(
        {"m1": {foo: {0, 1}, bar: {0}}, "m2": {foo: {2, 3}, bar: {1}}, "m3": {foo: {4, 5}, bar: {2}}}
    )
    result = h.join(G, "m3", ["foo", "bar"], server_assignor="range")
    assert (result.member_id, result.member_epoch, result.assignment) == ("m3", 11, ())
    expected3 = member("m3", 11, 0, {"foo", "bar"}, state=MemberState.UNRELEASED_PARTITIONS)
    assert h.records == [
        expected3.metadata_record(G),
        ConsumerGroupMetadataRecord(G, 11, metadata_hash(["foo", "bar"], h.topics)),
        ConsumerGroupTargetAssignmentMemberRecord(G, "m1", tps((foo, (0, 1)), (bar, (0,)))),
        ConsumerGroupTargetAssignmentMemberRecord(G, "m2", tps((foo, (2, 3)), (bar, (1,)))),
        ConsumerGroupTargetAssignmentMemberRecord(G, "m3", tps((foo, (4, 5)), (bar, (2,)))),
        ConsumerGroupTargetAssignmentMetadataRecord(G, 11),
        expected3.assignment_record(G),
    ]


def test_leaving_member_bumps_group_epoch() -> None:
    """The epoch record carries the hash of what the others still subscribe to (zar dropped)."""
    h = Harness()
    foo, bar = h.topics.add("foo", 6), h.topics.add("bar", 3)
    h.topics.add("zar", 1)
    seed_group(
        h,
        G,
        10,
        [
            member("m1", 10, 9, {"foo", "bar"}, {foo: {0, 1, 2}, bar: {0, 1}}),
            member("m2", 10, 9, {"foo", "bar", "zar"}, {foo: {3, 4, 5}, bar: {2}}),
        ],
        {"m1": {foo: {0, 1, 2}, bar: {0, 1}}, "m2": {foo: {3, 4, 5}, bar: {2}}},
    )
    result = h.heartbeat(G, "m2", -1, rebalance_timeout_ms=5000, subscribed_topic_names=["foo", "bar"], owned=())
    assert (
        result.error_code,
        result.member_id,
        result.member_epoch,
        result.heartbeat_interval_ms,
        result.assignment,
    ) == (0, "m2", -1, 0, None)
    assert h.records == [
        ConsumerGroupCurrentMemberAssignmentTombstone(G, "m2"),
        ConsumerGroupTargetAssignmentMemberTombstone(G, "m2"),
        ConsumerGroupMemberMetadataTombstone(G, "m2"),
        ConsumerGroupMetadataRecord(G, 11, metadata_hash(["foo", "bar"], h.topics)),
    ]
    group = h.group(G)
    assert set(group.members) == {"m1"} and group.state == ConsumerGroupState.ASSIGNING
    assert f"session-timeout-{G}-m2" not in h.timers.timers
    # The next heartbeat of the survivor computes the assignment of epoch 11.
    h.assignors["range"].prepare({"m1": {foo: range(6), bar: range(3)}})
    result = h.heartbeat(G, "m1", 10)
    assert result.member_epoch == 11 and group.state == ConsumerGroupState.STABLE
    assert h.rebuilt() == h.groups


def test_reconciliation_process() -> None:
    """Kafka testReconciliationProcess: revoke first, hand partitions over once released."""
    h = Harness()
    foo, bar = _two_member_group(h)
    h.assignors["range"].prepare(
        {"m1": {foo: {0, 1}, bar: {0}}, "m2": {foo: {2, 3}, bar: {2}}, "m3": {foo: {4, 5}, bar: {1}}}
    )
    group = h.group(G)
    assert group.state == ConsumerGroupState.STABLE

    # m3 joins: epoch 11, everything it should get is still owned.
    r = h.join(G, "m3", ["foo", "bar"], server_assignor="range")
    assert (r.member_epoch, r.assignment) == (11, ())
    assert h.records[-1] == member(
        "m3", 11, 0, {"foo", "bar"}, state=MemberState.UNRELEASED_PARTITIONS
    ).assignment_record(G)
    assert group.state == ConsumerGroupState.RECONCILING

    # m1 must revoke foo-2 and bar-1: it stays at epoch 10 and gets its reduced assignment.
    r = h.heartbeat(G, "m1", 10)
    assert (r.member_epoch, r.assignment) == (10, tps((foo, (0, 1)), (bar, (0,))))
    assert h.records == [
        member(
            "m1",
            10,
            10,
            {"foo", "bar"},
            {foo: {0, 1}, bar: {0}},
            MemberState.UNREVOKED_PARTITIONS,
            {foo: {2}, bar: {1}},
        ).assignment_record(G)
    ]
    assert h.timers.deadline(f"rebalance-timeout-{G}-m1") == 5000

    r = h.heartbeat(G, "m2", 10)
    assert (r.member_epoch, r.assignment) == (10, tps((foo, (3,)), (bar, (2,))))
    assert h.records == [
        member(
            "m2", 10, 10, {"foo", "bar"}, {foo: {3}, bar: {2}}, MemberState.UNREVOKED_PARTITIONS, {foo: {4, 5}}
        ).assignment_record(G)
    ]

    # m3 still waits; only its previous epoch moves.
    r = h.heartbeat(G, "m3", 11)
    assert (r.member_epoch, r.assignment) == (11, None)
    assert h.records == [
        member("m3", 11, 11, {"foo", "bar"}, state=MemberState.UNRELEASED_PARTITIONS).assignment_record(G)
    ]

    # m1 acknowledges the revocation by reporting what it still owns: epoch 11, Stable.
    r = h.heartbeat(G, "m1", 10, owned=[(foo, [0, 1]), (bar, [0])])
    assert (r.member_epoch, r.assignment) == (11, None)
    assert h.records == [
        member(
            "m1", 11, 10, {"foo", "bar"}, {foo: {0, 1}, bar: {0}}, epochs={foo: {0: 10, 1: 10}, bar: {0: 10}}
        ).assignment_record(G)
    ]
    assert f"rebalance-timeout-{G}-m1" not in h.timers.timers

    # m2 has not revoked yet: nothing changes.
    r = h.heartbeat(G, "m2", 10)
    assert (r.member_epoch, r.assignment, h.records) == (10, None, [])

    # m3 receives bar-1 (released by m1) and keeps waiting for foo-4/5.
    r = h.heartbeat(G, "m3", 11)
    assert (r.member_epoch, r.assignment) == (11, tps((bar, (1,))))
    assert h.records == [
        member("m3", 11, 11, {"foo", "bar"}, {bar: {1}}, MemberState.UNRELEASED_PARTITIONS).assignment_record(G)
    ]
    r = h.heartbeat(G, "m3", 11)
    assert (r.assignment, h.records) == (None, [])

    # m2 acknowledges: epoch 11 with foo-2 (now free) and foo-3, bar-2.
    r = h.heartbeat(G, "m2", 10, owned=[(foo, [3]), (bar, [2])])
    assert (r.member_epoch, r.assignment) == (11, tps((foo, (2, 3)), (bar, (2,))))
    # foo-3 and bar-2 kept from epoch 10, foo-2 newly assigned at 11.
    assert h.records == [
        member(
            "m2", 11, 10, {"foo", "bar"}, {foo: {2, 3}, bar: {2}}, epochs={foo: {2: 11, 3: 10}, bar: {2: 10}}
        ).assignment_record(G)
    ]

    # m3 gets everything and the group is Stable.
    r = h.heartbeat(G, "m3", 11, owned=[(bar, [1])])
    assert (r.member_epoch, r.assignment) == (11, tps((foo, (4, 5)), (bar, (1,))))
    assert h.records == [member("m3", 11, 11, {"foo", "bar"}, {foo: {4, 5}, bar: {1}}).assignment_record(G)]
    assert group.state == ConsumerGroupState.STABLE
    assert group.partition_epochs == {foo: {0: 11, 1: 11, 2: 11, 3: 11, 4: 11, 5: 11}, bar: {0: 11, 1: 11, 2: 11}}
    assert h.rebuilt() == h.groups


def test_full_request_gets_the_assignment_back() -> None:
    """Kafka testConsumerGroupHeartbeatFullResponse: a request with every field (sent after an
    error) is answered with the assignment even when it did not change."""
    h = Harness()
    foo = h.topics.add("foo", 2)
    h.join(G, "m", ["foo"])
    assert h.heartbeat(G, "m", 1).assignment is None
    full = h.heartbeat(G, "m", 1, rebalance_timeout_ms=5000, subscribed_topic_names=["foo"], owned=[(foo, [0, 1])])
    assert full.assignment == tps((foo, (0, 1))) and h.records == []


def test_unchanged_heartbeat_writes_nothing() -> None:
    h = Harness()
    h.topics.add("foo", 2)
    h.join(G, "m", ["foo"])
    before = len(h.log)
    for _ in range(3):
        assert h.heartbeat(G, "m", 1).member_epoch == 1
    assert len(h.log) == before


def test_partition_count_change_bumps_epoch_on_next_heartbeat() -> None:
    """Kafka onNewMetadataImage + metadata hash: more partitions, new epoch, new target."""
    h = Harness()
    foo = h.topics.add("foo", 2)
    h.join(G, "m", ["foo"])
    h.topics.resize("foo", 4)
    assert h.heartbeat(G, "m", 1).member_epoch == 1  # nobody asked for a refresh yet
    assert h.run(lambda ctx: on_topics_changed(ctx, ["foo", "other"])) == [G]
    r = h.heartbeat(G, "m", 1)
    assert (r.member_epoch, r.assignment) == (2, tps((foo, (0, 1, 2, 3))))
    assert h.records[0] == ConsumerGroupMetadataRecord(G, 2, metadata_hash(["foo"], h.topics))
    assert h.records[-2:] == [ConsumerGroupTargetAssignmentMetadataRecord(G, 2), h.records[-1]]


def test_old_subscription_metadata_record_is_deleted_on_next_bump() -> None:
    """Kafka 4.1+: a PartitionMetadata record left by an older broker gets its tombstone."""
    h = Harness()
    foo = h.topics.add("foo", 2)
    h.join(G, "m", ["foo"])
    h.apply(ConsumerGroupPartitionMetadataRecord(G, ()))
    assert h.group(G).has_subscription_metadata_record
    h.join(G, "m2", ["foo"])
    assert ConsumerGroupPartitionMetadataTombstone(G) in h.records
    assert not h.group(G).has_subscription_metadata_record
    assert h.heartbeat(G, "m", 1).error_code == 0 and foo is not None
    assert h.rebuilt() == h.groups


def test_preferred_assignor_is_the_most_used() -> None:
    h = Harness()
    h.topics.add("foo", 4)
    h.join(G, "m1", ["foo"], server_assignor="range")
    assert len(h.assignors["range"].calls) == 1 and h.assignors["uniform"].calls == []
    h.join(G, "m2", ["foo"])  # no assignor named: counts stay range=1
    assert len(h.assignors["range"].calls) == 2
    h.join(G, "m3", ["foo"], server_assignor="uniform")  # range=1, uniform=1: the configured order wins
    assert len(h.assignors["uniform"].calls) == 1
    spec = h.assignors["uniform"].calls[-1]
    assert list(spec.members) == ["m1", "m2", "m3"]
    # The test assignor deals foo's 4 partitions round-robin over m1, m2, m3.
    foo = h.topics.by_name("foo").topic_id  # type: ignore[union-attr]
    assert to_topic_partitions(h.group(G).target_assignment["m3"]) == tps((foo, (2,)))
