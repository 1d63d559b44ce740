"""ConsumerGroupHeartbeat: every error Kafka answers, with its message, and nothing persisted
(ported from Kafka's GroupMetadataManagerTest / GroupCoordinatorServiceTest)."""

from __future__ import annotations

import uuid

import pytest

from coordinator.groups.consumer.heartbeat import ConsumerHeartbeatParams, consumer_group_heartbeat
from coordinator.groups.consumer.member import ConsumerGroupMember, MemberState
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from protocol.errors import ErrorCode
from tests.coordinator.groups.consumer.harness import Harness, seed_group


def error(result: object) -> tuple[int, str | None]:
    return result.error_code, result.error_message  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        # v1 (KIP-1082): the client makes its member id; it is checked first.
        (dict(group_id="foo", member_id="", member_epoch=0, api_version=1), "MemberId can't be empty."),
        (dict(group_id="foo", member_id="  ", member_epoch=0, api_version=1), "MemberId can't be empty."),
        (dict(group_id="foo", member_id="", member_epoch=1, api_version=0), "MemberId can't be empty."),
        (dict(group_id="foo", member_id="", member_epoch=-1, api_version=0), "MemberId can't be empty."),
        (dict(group_id="", member_id="", member_epoch=0, api_version=0), "GroupId can't be empty."),
        (dict(group_id="   ", member_id="m", member_epoch=0), "GroupId can't be empty."),
        (dict(group_id="foo", member_id="m", member_epoch=1, instance_id=""), "InstanceId can't be empty."),
        (dict(group_id="foo", member_id="m", member_epoch=1, rack_id=" "), "RackId can't be empty."),
        (dict(group_id="foo", member_id="m", member_epoch=0), "RebalanceTimeoutMs must be provided in first request."),
        (
            dict(group_id="foo", member_id="m", member_epoch=0, rebalance_timeout_ms=5000),
            "TopicPartitions must be empty when (re-)joining.",
        ),
        (
            dict(
                group_id="foo",
                member_id="m",
                member_epoch=0,
                rebalance_timeout_ms=5000,
                topic_partitions=((uuid.UUID(int=1), (0,)),),
            ),
            "TopicPartitions must be empty when (re-)joining.",
        ),
        (
            dict(group_id="foo", member_id="m", member_epoch=0, rebalance_timeout_ms=5000, topic_partitions=()),
            "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
        ),
        (
            dict(
                group_id="foo",
                member_id="m",
                member_epoch=-2,
                rebalance_timeout_ms=5000,
                topic_partitions=(),
                subscribed_topic_names=["foo"],
            ),
            "InstanceId can't be null.",
        ),
        (dict(group_id="foo", member_id="m", member_epoch=-3), "MemberEpoch is invalid."),
    ],
)
def test_invalid_requests(kwargs: dict, message: str) -> None:
    h = Harness()
    result = h.run(lambda ctx: consumer_group_heartbeat(ctx, ConsumerHeartbeatParams(**kwargs)))
    assert error(result) == (ErrorCode.INVALID_REQUEST, message)
    assert h.log == [] and h.groups == {} and h.timers.timers == {}
    assert h.last is not None and h.last.reasons == [(ErrorCode.INVALID_REQUEST, message)]


def test_unsupported_assignor_lists_the_configured_ones() -> None:
    h = Harness()
    result = h.heartbeat("foo", "m", 1, server_assignor="bar")
    assert error(result) == (
        ErrorCode.UNSUPPORTED_ASSIGNOR,
        "ServerAssignor bar is not supported. Supported assignors: uniform, range.",
    )


def test_empty_names_or_empty_regex_join_is_accepted() -> None:
    h = Harness()
    assert h.join("g", "m1", []).error_code == ErrorCode.NONE
    assert h.heartbeat("g", "m2", 0, owned=(), rebalance_timeout_ms=1, subscribed_topic_regex="").error_code == 0


def test_v0_member_id_is_generated() -> None:
    """Kafka testMemberIdGeneration: a Kafka Uuid text; no topics, so an empty assignment."""
    h = Harness()
    result = h.heartbeat(
        "group-foo",
        "",
        0,
        owned=(),
        api_version=0,
        rebalance_timeout_ms=5000,
        subscribed_topic_names=["foo", "bar"],
        server_assignor="range",
    )
    assert result.error_code == 0 and result.member_id == "AAAAAAAAAAAAAAAAAACrwA"
    assert (result.member_epoch, result.heartbeat_interval_ms, result.assignment) == (1, 5000, ())
    assert set(h.group("group-foo").members) == {"AAAAAAAAAAAAAAAAAACrwA"}


def test_unknown_group() -> None:
    h = Harness()
    result = h.heartbeat("fooup", "m", 100, rebalance_timeout_ms=5000, subscribed_topic_names=["foo"], owned=())
    assert error(result) == (ErrorCode.GROUP_ID_NOT_FOUND, "Consumer group fooup not found.")
    assert error(h.heartbeat("fooup", "m", -1)) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group fooup not found.")


def test_unknown_member_id() -> None:
    h = Harness()
    h.join("fooup", "m1", ["foo", "bar"])
    result = h.heartbeat("fooup", "m2", 1, rebalance_timeout_ms=5000, subscribed_topic_names=["foo"], owned=())
    assert error(result) == (ErrorCode.UNKNOWN_MEMBER_ID, "Member m2 is not a member of group fooup.")
    assert h.records == []
    assert error(h.heartbeat("fooup", "m2", -1)) == (
        ErrorCode.UNKNOWN_MEMBER_ID,
        "Member m2 is not a member of group fooup.",
    )


def _group_at_epoch_100(h: Harness) -> uuid.UUID:
    foo = h.topics.add("foo", 6)
    member = ConsumerGroupMember(
        "m",
        member_epoch=100,
        previous_member_epoch=99,
        state=MemberState.STABLE,
        rebalance_timeout_ms=5000,
        client_id="client",
        client_host="/127.0.0.1",
        subscribed_topic_names=frozenset({"foo", "bar"}),
        server_assignor="range",
        assigned_partitions={foo: frozenset({1, 2, 3})},
    )
    seed_group(h, "fooup", 100, [member], {"m": {foo: {1, 2, 3}}})
    return foo


def test_member_epoch_validation() -> None:
    """Kafka testConsumerGroupMemberEpochValidation."""
    h = Harness()
    foo = _group_at_epoch_100(h)
    greater = h.heartbeat("fooup", "m", 200, rebalance_timeout_ms=5000, subscribed_topic_names=["foo", "bar"])
    assert error(greater) == (
        ErrorCode.FENCED_MEMBER_EPOCH,
        (
            "The consumer group member has a greater member epoch (200) than the one known by the group "
            "coordinator (100). The member must abandon all its partitions and rejoin."
        ),
    )
    smaller = h.heartbeat("fooup", "m", 50, rebalance_timeout_ms=5000, subscribed_topic_names=["foo", "bar"])
    assert error(smaller) == (
        ErrorCode.FENCED_MEMBER_EPOCH,
        (
            "The consumer group member has a smaller member epoch (50) than the one known by the group "
            "coordinator (100). The member must abandon all its partitions and rejoin."
        ),
    )
    # The previous epoch without owned partitions is fenced too ...
    assert h.heartbeat("fooup", "m", 99, rebalance_timeout_ms=5000).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    # ... or with a partition it never had.
    assert h.heartbeat("fooup", "m", 99, owned=[(foo, [1, 4])]).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert h.log[-1].key_type == 6  # nothing was written by the failures (last is the seeding)
    # The previous epoch with a subset of the assignment: the bumped response was lost.
    result = h.heartbeat(
        "fooup", "m", 99, rebalance_timeout_ms=5000, subscribed_topic_names=["foo", "bar"], owned=[(foo, [1, 2])]
    )
    assert (result.error_code, result.member_epoch) == (0, 100)


def test_fenced_member_can_rejoin_with_epoch_zero() -> None:
    """KAFKA-19233: epoch 0 is accepted for a member the coordinator still knows."""
    h = Harness()
    foo = _group_at_epoch_100(h)
    result = h.join("fooup", "m", ["foo", "bar"])
    assert (result.error_code, result.member_epoch) == (0, 100)
    assert result.assignment is not None and [tuple(tp.partitions) for tp in result.assignment] == [(1, 2, 3)]
    assert result.assignment[0].topic_id == foo


def test_group_max_size() -> None:
    """Kafka testNewMemberIsRejectedWithMaximumMembersIsReached; members already in still get in."""
    h = Harness(ConsumerGroupSettings(max_size=2))
    h.topics.add("foo", 2)
    h.join("g", "m1", ["foo"])
    h.join("g", "m2", ["foo"])
    result = h.join("g", "m3", ["foo"])
    assert error(result) == (
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        "The consumer group has reached its maximum capacity of 2 members.",
    )
    assert h.records == [] and set(h.group("g").members) == {"m1", "m2"}
    assert h.join("g", "m1", ["foo"]).error_code == 0


def test_assignor_failure_is_unknown_server_error_and_writes_nothing() -> None:
    """Kafka testPartitionAssignorExceptionOnRegularHeartbeat."""
    h = Harness()
    h.topics.add("foo", 2)
    h.assignors["uniform"].error = "boom"
    result = h.join("g", "m1", ["foo"])
    assert error(result) == (
        ErrorCode.UNKNOWN_SERVER_ERROR,
        "Failed to compute a new target assignment for epoch 1: boom",
    )
    assert h.groups == {} and h.log == [] and h.timers.timers == {}


def test_another_group_type_under_the_id() -> None:
    h = Harness()
    h.groups["g"] = object()  # e.g. a classic group, with no bridge to convert it
    assert error(h.join("g", "m", ["foo"])) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    assert error(h.heartbeat("g", "m", 3)) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    assert error(h.heartbeat("g", "m", -1)) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    assert h.log == []
