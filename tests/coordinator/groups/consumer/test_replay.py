"""Replay, the only mutator: what each record does, the tombstone order Kafka's replay insists
on, partition-epoch invariants, foreign groups, and the classic-group extension point."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.context import ConsumerOpContext
from coordinator.groups.consumer.describe import empty_group_tombstones, group_tombstones, validate_delete_group
from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.consumer.group import ConsumerGroup, IllegalStateError
from coordinator.groups.consumer.member import ConsumerGroupMember, MemberState
from coordinator.groups.consumer.replay import replay_consumer_record
from coordinator.groups.consumer.subscriptions import SubscriptionCount
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness

T = uuid.UUID(int=7)


def member_records(gid: str, mid: str, epoch: int, parts: tuple[int, ...], state: int = 0) -> list[Any]:
    return [
        r.ConsumerGroupMemberMetadataRecord(gid, mid, None, None, "c", "/h", ("foo",), "", 100, None),
        r.ConsumerGroupCurrentMemberAssignmentRecord(
            gid, mid, epoch, epoch - 1, state, (r.TopicPartitions(T, parts),) if parts else (), ()
        ),
    ]


def replay_all(groups: dict[str, Any], recs: Sequence[Any]) -> None:
    for rec in recs:
        replay_consumer_record(groups, rec)


def test_records_build_the_group() -> None:
    groups: dict[str, Any] = {}
    replay_all(
        groups,
        member_records("g", "m1", 5, (0, 1))
        + [
            r.ConsumerGroupMetadataRecord("g", 5, 99),
            r.ConsumerGroupTargetAssignmentMemberRecord("g", "m1", (r.TopicPartitions(T, (0, 1, 2)),)),
            r.ConsumerGroupTargetAssignmentMetadataRecord("g", 5),
            r.ConsumerGroupRegularExpressionRecord("g", "f.*", ("foo", "fa"), 3, 1000),
        ],
    )
    g = groups["g"]
    assert (g.group_epoch, g.metadata_hash, g.assignment_epoch) == (5, 99, 5)
    assert g.members["m1"] == ConsumerGroupMember(
        "m1",
        member_epoch=5,
        previous_member_epoch=4,
        rebalance_timeout_ms=100,
        client_id="c",
        client_host="/h",
        subscribed_topic_names=frozenset({"foo"}),
        assigned_partitions={T: frozenset({0, 1})},
        assignment_epochs={T: {0: 5, 1: 5}},  # a record without AssignmentEpochs: the member epoch
    )
    assert g.partition_epochs == {T: {0: 5, 1: 5}}
    assert g.inverted_target_assignment == {T: {0: "m1", 1: "m1", 2: "m1"}}
    assert g.subscribed_topic_names == {"foo": SubscriptionCount(1, 1), "fa": SubscriptionCount(0, 1)}
    # Kafka's state looks at member states and epochs only: m1 is STABLE at the assignment epoch.
    assert str(g.state) == "Stable"
    replay_consumer_record(groups, r.ConsumerGroupRegularExpressionTombstone("g", "f.*"))
    assert g.subscribed_topic_names == {"foo": SubscriptionCount(1, 0)}


def test_unknown_member_state_byte_reads_as_unknown() -> None:
    groups: dict[str, Any] = {}
    replay_all(groups, member_records("g", "m1", 5, (), state=42))
    assert groups["g"].members["m1"].state == MemberState.UNKNOWN


def test_tombstones_for_missing_groups_and_members_are_ignored() -> None:
    groups: dict[str, Any] = {}
    for rec in (
        r.ConsumerGroupMetadataTombstone("g"),
        r.ConsumerGroupMemberMetadataTombstone("g", "m"),
        r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m"),
        r.ConsumerGroupRegularExpressionTombstone("g", "x"),
    ):
        replay_consumer_record(groups, rec)
    assert groups == {}
    replay_consumer_record(groups, r.ConsumerGroupMetadataRecord("g", 1))
    replay_consumer_record(groups, r.ConsumerGroupMemberMetadataTombstone("g", "m"))
    replay_consumer_record(groups, r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m"))
    assert groups["g"].members == {}


@pytest.mark.parametrize(
    "bad,message",
    [
        (
            r.ConsumerGroupMemberMetadataTombstone("g", "m1"),
            "did not receive ConsumerGroupCurrentMemberAssignmentValue",
        ),
        (r.ConsumerGroupTargetAssignmentMetadataTombstone("g"), "the assignment still has 1 members"),
        (r.ConsumerGroupMetadataTombstone("g"), "the group still has 1 members"),
    ],
)
def test_tombstones_out_of_order_are_illegal(bad: Any, message: str) -> None:
    groups: dict[str, Any] = {}
    replay_all(
        groups,
        member_records("g", "m1", 5, (0,))
        + [r.ConsumerGroupTargetAssignmentMemberRecord("g", "m1", (r.TopicPartitions(T, (0,)),))],
    )
    with pytest.raises(IllegalStateError, match=message):
        replay_consumer_record(groups, bad)


def test_member_removed_before_its_target_is_illegal() -> None:
    groups: dict[str, Any] = {}
    replay_all(
        groups,
        member_records("g", "m1", 5, (0,))
        + [
            r.ConsumerGroupTargetAssignmentMemberRecord("g", "m1", (r.TopicPartitions(T, (0,)),)),
            r.ConsumerGroupCurrentMemberAssignmentTombstone("g", "m1"),
        ],
    )
    with pytest.raises(IllegalStateError, match="ConsumerGroupTargetAssignmentMetadataValue tombstone"):
        replay_consumer_record(groups, r.ConsumerGroupMemberMetadataTombstone("g", "m1"))


def test_group_deleted_before_target_epoch_tombstone_is_illegal() -> None:
    groups: dict[str, Any] = {}
    replay_all(groups, [r.ConsumerGroupMetadataRecord("g", 1), r.ConsumerGroupTargetAssignmentMetadataRecord("g", 1)])
    with pytest.raises(IllegalStateError, match="did not receive ConsumerGroupTargetAssignmentMetadataValue"):
        replay_consumer_record(groups, r.ConsumerGroupMetadataTombstone("g"))


def test_a_partition_owned_twice_is_illegal() -> None:
    groups: dict[str, Any] = {}
    replay_all(groups, member_records("g", "m1", 5, (0, 1)))
    with pytest.raises(IllegalStateError, match="still owned at epoch 5"):
        replay_all(groups, member_records("g", "m2", 6, (1,)))


def test_delete_empty_group_with_kafkas_tombstones() -> None:
    h = Harness()
    h.topics.add("foo", 2)
    h.join("g", "m1", ["foo"])
    group = h.group("g")
    with pytest.raises(ConsumerGroupError) as info:
        validate_delete_group(group)
    assert (info.value.code, info.value.message) == (ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    assert empty_group_tombstones(group) is None and empty_group_tombstones(object()) is None
    h.heartbeat("g", "m1", -1)
    validate_delete_group(group)
    tombstones = group_tombstones(group)
    assert empty_group_tombstones(group) == tombstones
    assert tombstones == [
        r.ConsumerGroupTargetAssignmentMetadataTombstone("g"),
        r.ConsumerGroupPartitionMetadataTombstone("g"),
        r.ConsumerGroupMetadataTombstone("g"),
    ]
    for t in tombstones:
        h.apply(t)
    assert h.groups == {} and h.rebuilt() == {}


def test_group_tombstones_with_members_replay_cleanly() -> None:
    groups: dict[str, Any] = {}
    replay_all(
        groups,
        member_records("g", "m1", 5, (0,))
        + member_records("g", "m2", 5, (1,))
        + [
            r.ConsumerGroupTargetAssignmentMemberRecord("g", "m1", (r.TopicPartitions(T, (0,)),)),
            r.ConsumerGroupRegularExpressionRecord("g", "x", (), 1, 1),
        ],
    )
    replay_all(groups, group_tombstones(groups["g"]))
    assert groups == {}


# -- foreign groups and the classic extension point ---------------------------------------


@dataclass
class FakeClassic:
    group_id: str
    empty: bool
    simple: bool = False


@dataclass(frozen=True)
class FakeClassicTombstone:
    group_id: str


class FakeBridge:
    def __init__(self) -> None:
        self.downgrades: list[list[str]] = []

    def empty_classic_tombstones(self, group: Any) -> list[Any] | None:
        return [FakeClassicTombstone(group.group_id)] if isinstance(group, FakeClassic) and group.empty else None

    def upgrade(self, ctx: ConsumerOpContext, group: Any, records: list[Any]) -> ConsumerGroup | None:
        if isinstance(group, FakeClassic):
            raise ConsumerGroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group.group_id}.")
        return None

    def downgrade_on_leave(
        self, ctx: ConsumerOpContext, group: ConsumerGroup, leaving: Sequence[ConsumerGroupMember], records: list[Any]
    ) -> bool:
        self.downgrades.append([m.member_id for m in leaving])
        return False

    def replaceable_on_replay(self, group: Any) -> bool:
        return isinstance(group, FakeClassic) and group.simple

    def apply(self, groups: dict[str, Any], record: Any) -> None:
        assert isinstance(record, FakeClassicTombstone)
        groups.pop(record.group_id)


def test_empty_classic_group_is_replaced_by_a_consumer_group() -> None:
    bridge = FakeBridge()
    h = Harness(classic=bridge)
    h.topics.add("foo", 1)
    h.groups["g"] = FakeClassic("g", empty=True)
    result = h.join("g", "m1", ["foo"])
    assert result.error_code == 0 and h.records[0] == FakeClassicTombstone("g")
    assert isinstance(h.groups["g"], ConsumerGroup)
    h.heartbeat("g", "m1", -1)
    assert bridge.downgrades == [["m1"]]


def test_non_empty_classic_group_upgrade_refused() -> None:
    h = Harness(classic=FakeBridge())
    h.groups["g"] = FakeClassic("g", empty=False)
    result = h.join("g", "m1", ["foo"])
    assert (result.error_code, result.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Cannot upgrade classic group g.",
    )
    assert h.heartbeat("g", "m1", 5).error_message == "Group g is not a consumer group."


def test_replay_replaces_a_simple_classic_group_only() -> None:
    bridge = FakeBridge()
    groups: dict[str, Any] = {"g": FakeClassic("g", empty=True, simple=True), "h": FakeClassic("h", empty=True)}
    replay_consumer_record(groups, r.ConsumerGroupMetadataRecord("g", 1), bridge)
    assert isinstance(groups["g"], ConsumerGroup)
    with pytest.raises(IllegalStateError, match="Group h is not a consumer group"):
        replay_consumer_record(groups, r.ConsumerGroupMetadataRecord("h", 1), bridge)
