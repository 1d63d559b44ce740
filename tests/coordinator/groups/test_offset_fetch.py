"""OffsetFetch: listed partitions, all partitions, several groups, unknown groups (Kafka's
fetchOffsets/fetchAllOffsets answer -1 rather than an error), invalid group ids."""

from coordinator.groups.offset_requests import FetchedGroup, FetchedPartition, FetchGroup, OffsetFetchParams
from coordinator.groups.requests import DeleteGroupsParams
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext

from .offset_helpers import commit


def _ctx() -> GroupTestContext:
    c = GroupTestContext()
    c.send(commit(topic="t", offsets={0: 10, 1: 11}, metadata="a", epoch=2))
    c.send(commit(topic="s", offsets={4: 40}))
    c.send(commit(group_id="h", topic="t", offsets={0: 99}))
    c.take_records()
    return c


def test_listed_partitions_with_missing_ones_as_minus_one():
    c = _ctx()
    assert c.send(OffsetFetchParams.single("g", [("t", [1, 0, 7]), ("nope", [0])])) == [
        FetchedGroup(
            "g",
            ErrorCode.NONE,
            [
                (
                    "t",
                    [FetchedPartition(1, 11, 2, "a"), FetchedPartition(0, 10, 2, "a"), FetchedPartition(7, -1, -1, "")],
                ),
                ("nope", [FetchedPartition(0)]),
            ],
        )
    ]
    assert c.take_records() == []  # reads write nothing


def test_all_partitions_sorted_by_topic_and_partition():
    c = _ctx()
    assert c.send(OffsetFetchParams.single("g", None, require_stable=True)) == [
        FetchedGroup(
            "g",
            ErrorCode.NONE,
            [
                ("s", [FetchedPartition(4, 40, -1, "")]),
                ("t", [FetchedPartition(0, 10, 2, "a"), FetchedPartition(1, 11, 2, "a")]),
            ],
        )
    ]


def test_several_groups_in_one_request():
    c = _ctx()
    answer = c.send(
        OffsetFetchParams(
            [
                FetchGroup("h", [("t", [0])]),
                FetchGroup("zz", None),
                FetchGroup("zz", [("t", [0])]),
                FetchGroup("", None),
            ]
        )
    )
    assert answer == [
        FetchedGroup("h", ErrorCode.NONE, [("t", [FetchedPartition(0, 99, -1, "")])]),
        FetchedGroup("zz", ErrorCode.NONE, []),
        FetchedGroup("zz", ErrorCode.NONE, [("t", [FetchedPartition(0)])]),
        FetchedGroup("", ErrorCode.NONE, []),  # "" is served (Kafka refuses only a null id)
    ]


def test_deleted_group_has_no_offsets_and_its_tombstones_are_written():
    c = _ctx()
    (deleted,) = c.send(DeleteGroupsParams(["g"]))
    assert deleted.error == ErrorCode.NONE
    from coordinator.groups.record_types import GroupTombstone
    from coordinator.groups.records import OffsetTombstone

    assert c.take_records() == [
        OffsetTombstone("g", "t", 0),
        OffsetTombstone("g", "t", 1),
        OffsetTombstone("g", "s", 4),
        GroupTombstone("g"),
    ]
    assert c.send(OffsetFetchParams.single("g", None)) == [FetchedGroup("g", ErrorCode.NONE, [])]
    assert c.shard.offsets.get("h", "t", 0).offset == 99  # other groups untouched
