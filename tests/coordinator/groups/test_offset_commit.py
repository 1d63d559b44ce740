"""OffsetCommit: simple commits, generation/member checks (ClassicGroup.validateOffsetCommit),
metadata size, client retention, leader epochs, and the records one commit writes."""

import pytest

from coordinator.groups.group_config import GroupConfig
from coordinator.groups.offset_requests import (
    CommitPartition,
    OffsetCommitParams,
    OffsetCommitResult,
    OffsetFetchParams,
)
from coordinator.groups.records import OffsetCommitRecord
from coordinator.groups.state import GroupState
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext

from .offset_helpers import commit


def test_simple_commit_creates_an_empty_simple_group_and_writes_one_record_per_partition():
    c = GroupTestContext(start_ms=1_000)
    result = c.send(
        OffsetCommitParams(
            "g",
            [("t", [CommitPartition(0, 5, 3, "m0"), CommitPartition(1, 7, -1, None)]), ("u", [CommitPartition(2, 9)])],
        )
    )
    assert result == OffsetCommitResult(
        ErrorCode.NONE, [("t", [(0, ErrorCode.NONE), (1, ErrorCode.NONE)]), ("u", [(2, ErrorCode.NONE)])]
    )
    assert c.take_records() == [
        OffsetCommitRecord("g", "t", 0, 5, 3, "m0", 1_000, None),
        OffsetCommitRecord("g", "t", 1, 7, -1, "", 1_000, None),  # null metadata is stored as ""
        OffsetCommitRecord("g", "u", 2, 9, -1, "", 1_000, None),
    ]
    group = c.group()
    assert group.is_in(GroupState.EMPTY) and group.protocol_type is None
    assert c.shard.offsets.get("g", "t", 0).offset == 5


def test_a_later_commit_replaces_the_earlier_one():
    c = GroupTestContext()
    c.send(commit(offsets={0: 1}))
    c.clock.advance(5)
    c.send(commit(offsets={0: 2}, metadata="x"))
    assert c.shard.offsets.get("g", "t", 0) == OffsetCommitRecord("g", "t", 0, 2, -1, "x", 5, None)


@pytest.mark.parametrize(
    "version,error",
    [(8, ErrorCode.ILLEGAL_GENERATION), (2, ErrorCode.ILLEGAL_GENERATION), (9, ErrorCode.GROUP_ID_NOT_FOUND)],
)
def test_unknown_group_with_a_generation(version, error):
    c = GroupTestContext()
    result = c.send(commit(generation=1, member="m", offsets={0: 1, 1: 2}, version=version))
    assert result == OffsetCommitResult(error, [("t", [(0, error), (1, error)])])
    assert c.take_records() == [] and c.shard.group("g") is None


def test_empty_group_id_commits_like_any_other_group():
    """GroupCoordinatorService.commitOffsets refuses only a null group id ("for backwards
    compatibility, we support offset commits for the empty groupId")."""
    c = GroupTestContext()
    assert c.send(commit(group_id="", offsets={0: 5})).topics == [("t", [(0, ErrorCode.NONE)])]
    assert c.take_records() == [OffsetCommitRecord("", "t", 0, 5, -1, "", 0, None)]
    assert c.shard.group("").protocol_type is None  # a simple group
    for version, error in ((8, ErrorCode.ILLEGAL_GENERATION), (9, ErrorCode.GROUP_ID_NOT_FOUND)):
        fresh = GroupTestContext()
        result = fresh.send(commit(group_id="", generation=1, member="m", version=version))
        assert result.topics == [("t", [(0, error)])]


def test_member_commit_in_stable_group_and_it_resets_the_session_timer():
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.take_records()
    c.clock.advance(4_000)
    result = c.send(commit(generation=1, member=m, offsets={0: 42}, epoch=7))
    assert result.error == ErrorCode.NONE
    assert c.take_records() == [OffsetCommitRecord("g", "t", 0, 42, 7, "", 4_000, None)]
    assert c.heartbeat_deadline(m) == 4_000 + 10_000


@pytest.mark.parametrize(
    "kwargs,error",
    [
        (dict(generation=2), ErrorCode.ILLEGAL_GENERATION),
        (dict(generation=1, member="stranger"), ErrorCode.UNKNOWN_MEMBER_ID),
        (dict(generation=-1, member=""), ErrorCode.UNKNOWN_MEMBER_ID),  # simple commit to a live group
        (dict(generation=-1), ErrorCode.ILLEGAL_GENERATION),  # member known, generation -1
    ],
)
def test_member_checks(kwargs, error):
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.take_records()
    kwargs.setdefault("member", m)
    result = c.send(commit(**kwargs))
    assert result == OffsetCommitResult(error, [("t", [(0, error)])])
    assert c.take_records() == [] and len(c.shard.offsets) == 0


def test_commit_during_completing_rebalance_is_rebalance_in_progress():
    c = GroupTestContext()
    reply = c.join_dynamic()
    m = reply.value.member_id
    assert c.group().is_in(GroupState.COMPLETING_REBALANCE)
    result = c.send(commit(generation=1, member=m))
    assert result.error == ErrorCode.REBALANCE_IN_PROGRESS


def test_commit_during_preparing_rebalance_is_accepted():
    # Kafka accepts it (the member may still commit what it processed) and keeps its session.
    c = GroupTestContext()
    a, b = c.stable_group(2)
    c.join(a, client_id="c0")  # the leader rejoins: PreparingRebalance
    assert c.group().is_in(GroupState.PREPARING_REBALANCE)
    assert c.send(commit(generation=2, member=b)).error == ErrorCode.NONE


def test_static_member_fencing():
    c = GroupTestContext()
    first = c.join(instance_id="i1")
    m = first.value.member_id
    c.sync(m, 1, [(m, b"a")], instance_id="i1")
    assert c.send(commit(generation=1, member="other", instance="i1")).error == ErrorCode.FENCED_INSTANCE_ID
    assert c.send(commit(generation=1, member=m, instance="i2")).error == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.send(commit(generation=1, member=m, instance="i1")).error == ErrorCode.NONE


def test_simple_commit_to_an_empty_group_that_once_had_members():
    c = GroupTestContext()
    (m,) = c.stable_group(1)
    c.sleep(10_000)  # session expires: Empty, generation 2
    assert c.group().is_in(GroupState.EMPTY)
    assert c.send(commit()).error == ErrorCode.NONE
    assert c.send(commit(generation=2, member=m)).error == ErrorCode.UNKNOWN_MEMBER_ID


def test_metadata_too_large_is_per_partition_and_counts_java_chars():
    c = GroupTestContext(GroupConfig(offset_metadata_max_bytes=4))
    result = c.send(
        OffsetCommitParams(
            "g",
            [
                (
                    "t",
                    [
                        CommitPartition(0, 1, -1, "abcd"),
                        CommitPartition(1, 1, -1, "abcde"),
                        CommitPartition(2, 1, -1, "\U0001f600\U0001f600\U0001f600"),  # 6 UTF-16 units
                    ],
                )
            ],
        )
    )
    assert result == OffsetCommitResult(
        ErrorCode.NONE,
        [
            (
                "t",
                [
                    (0, ErrorCode.NONE),
                    (1, ErrorCode.OFFSET_METADATA_TOO_LARGE),
                    (2, ErrorCode.OFFSET_METADATA_TOO_LARGE),
                ],
            )
        ],
    )
    assert [(r.partition, r.metadata) for r in c.take_records()] == [(0, "abcd")]


def test_client_retention_time_becomes_an_expire_timestamp():
    c = GroupTestContext(start_ms=100)
    c.send(commit(retention=5_000, version=2))
    assert c.take_records() == [OffsetCommitRecord("g", "t", 0, 10, -1, "", 100, 5_100)]


def test_fetch_after_commit_returns_leader_epoch_and_metadata():
    c = GroupTestContext()
    c.send(commit(offsets={3: 99}, metadata="meta", epoch=4))
    (group,) = c.send(OffsetFetchParams.single("g", [("t", [3])]))
    (topic, (part,)) = group.topics[0]
    assert (topic, part.partition, part.offset, part.leader_epoch, part.metadata, part.error) == (
        "t",
        3,
        99,
        4,
        "meta",
        ErrorCode.NONE,
    )
