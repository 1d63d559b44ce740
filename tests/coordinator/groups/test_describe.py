"""DescribeGroups, ListGroups and DeleteGroups answers."""

from coordinator.groups.record_types import GroupTombstone
from coordinator.groups.requests import (
    DeletedGroup,
    DeleteGroupsParams,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsParams,
    LeaveGroupParams,
    ListedGroup,
    ListGroupsParams,
)
from protocol.errors import ErrorCode
from tests.support.group_context import GroupTestContext


def test_describe_stable_group_shows_metadata_and_assignments():
    c = GroupTestContext()
    a, b = c.stable_group(2)
    (described,) = c.send(DescribeGroupsParams(["g"]))
    assert described == DescribedGroup(
        "g",
        ErrorCode.NONE,
        "Stable",
        "consumer",
        "range",
        [
            DescribedMember(a, None, "c0", "/127.0.0.1", b"range-meta", b"assign-" + a.encode()),
            DescribedMember(b, None, "c1", "/127.0.0.1", b"range-meta", b"assign-" + b.encode()),
        ],
    )


def test_describe_rebalance_from_stable_hides_metadata_keeps_last_assignments():
    """Kafka describeNoMetadata: outside Stable no metadata or protocol, but each member's current
    assignment, which a rebalance started from Stable leaves in place."""
    c = GroupTestContext()
    a, b = c.stable_group(2)
    c.join(a)
    (described,) = c.send(DescribeGroupsParams(["g"]))
    assert described == DescribedGroup(
        "g",
        ErrorCode.NONE,
        "PreparingRebalance",
        "consumer",
        "",
        [
            DescribedMember(a, None, "c0", "/127.0.0.1", b"", b"assign-" + a.encode()),
            DescribedMember(b, None, "c1", "/127.0.0.1", b"", b"assign-" + b.encode()),
        ],
    )


def test_describe_rebalance_from_completing_rebalance_shows_cleared_assignments():
    """A rebalance that starts while the group waits for its leader's SyncGroup clears every
    assignment (resetAndPropagateAssignmentWithError)."""
    c = GroupTestContext()
    a, b = c.stable_group(2)
    c.join(a)
    c.join(b)  # generation 3 forms: CompletingRebalance, nobody synced yet
    assert str(c.group().state) == "CompletingRebalance"
    c.send(LeaveGroupParams.single("g", b, 3))  # starts a rebalance from CompletingRebalance
    (described,) = c.send(DescribeGroupsParams(["g"]))
    assert described == DescribedGroup(
        "g",
        ErrorCode.NONE,
        "PreparingRebalance",
        "consumer",
        "",
        [DescribedMember(a, None, "c0", "/127.0.0.1", b"", b"")],
    )


def test_describe_unknown_group_depends_on_version():
    c = GroupTestContext()
    assert c.send(DescribeGroupsParams(["x"], request_version=5)) == [
        DescribedGroup("x", ErrorCode.NONE, "Dead", "", "")
    ]
    assert c.send(DescribeGroupsParams(["x"], request_version=6)) == [
        DescribedGroup("x", ErrorCode.GROUP_ID_NOT_FOUND, "Dead", "", "", error_message="Group x not found.")
    ]


def test_list_groups_with_state_and_type_filters():
    c = GroupTestContext()
    c.stable_group(1, group_id="stable")
    c.join("", group_id="empty", version=4)
    all_groups = [ListedGroup("stable", "consumer", "Stable"), ListedGroup("empty", "", "Empty")]
    assert c.send(ListGroupsParams()) == all_groups
    assert c.send(ListGroupsParams(states_filter=["stable"])) == all_groups[:1]
    assert c.send(ListGroupsParams(states_filter=["Empty", "Dead"])) == all_groups[1:]
    assert c.send(ListGroupsParams(types_filter=["Classic"])) == all_groups
    assert c.send(ListGroupsParams(types_filter=["consumer"])) == []


def test_delete_groups():
    c = GroupTestContext()
    c.stable_group(1, group_id="busy")
    c.join("", group_id="idle", version=4)
    c.take_records()
    # "" is an ordinary (missing) group here: Kafka refuses only a null id, which the wire
    # cannot carry in DeleteGroups.
    results = c.send(DeleteGroupsParams(["busy", "idle", "missing", ""]))
    assert results == [
        DeletedGroup("busy", ErrorCode.NON_EMPTY_GROUP),
        DeletedGroup("idle", ErrorCode.NONE),
        DeletedGroup("missing", ErrorCode.GROUP_ID_NOT_FOUND),
        DeletedGroup("", ErrorCode.GROUP_ID_NOT_FOUND),
    ]
    assert c.take_records() == [GroupTombstone("idle")]
    assert set(c.shard.groups) == {"busy"}
    assert c.send(DeleteGroupsParams(["idle"])) == [DeletedGroup("idle", ErrorCode.GROUP_ID_NOT_FOUND)]
