"""The ShareGroupStatePartitionMetadata bookkeeping, case by case as Kafka's GroupMetadataManagerTest
checks it: testShareGroupHeartbeatPersisterRequestWithInitializing (a fresh initialization is not
asked again, a stale one is retried), testShareGroupInitializingClearsCommonDeleting,
testShareGroupInitializeSuccess/EmptyMap, testShareGroupDeleteRequest{NoDeletingTopics,
WithAlreadyDeletingTopics,...ButNotInMetadata}, testSharePartitionsEligibleForOffsetDeletion*,
testCompleteDeleteShareGroupOffsets, testMaybeCleanupShareGroupState*, combineInitMaps."""

from __future__ import annotations

from coordinator.groups.share.group import InitValue, ShareGroup, StatePartitions
from coordinator.groups.share.records import ShareGroupStatePartitionMetadataRecord as Rec
from coordinator.groups.share.records import TopicInfo
from coordinator.groups.share.records import TopicPartitionsInfo as Info
from coordinator.groups.share.state_partitions import (
    INITIALIZE_RETRY_INTERVAL_MS,
    NO_OFFSETS_MESSAGE,
    UNKNOWN_TOPIC_MESSAGE,
    TopicError,
    combine,
    deleted_record,
    group_delete_request,
    initialized_record,
    initializing_record,
    offsets_delete_request,
    uninitialized_record,
    uninitialized_subscribed,
    without_deleted_topics,
)
from coordinator.groups.topics_image import TopicsImage
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import FakeRegistry, tid

FOO, BAR, GONE = tid(1), tid(2), tid(9)


def image() -> TopicsImage:
    registry = FakeRegistry()
    registry.add("foo", 3, 1)
    registry.add("bar", 2, 2)
    return TopicsImage(registry)


def v(name: str, parts: set[int], ts: int = 0) -> InitValue:
    return InitValue(name, frozenset(parts), ts)


def group(initializing=None, initialized=None, deleting=()) -> ShareGroup:
    g = ShareGroup("g")
    g.state_partitions = StatePartitions(initializing or {}, initialized or {}, frozenset(deleting))
    return g


def test_combine_unions_partitions_and_takes_the_second_maps_name_and_time():
    assert combine({FOO: v("foo", {0}, 1)}, {FOO: v("foo", {1}, 5), BAR: v("bar", {0}, 6)}) == {
        FOO: v("foo", {0, 1}, 5),
        BAR: v("bar", {0}, 6),
    }
    assert combine({FOO: v("foo", {0}, 1)}, {}) == {FOO: v("foo", {0}, 1)}


def test_subscribed_partitions_not_initialized_and_not_freshly_initializing_are_asked_for():
    topics = image()
    assert uninitialized_subscribed(None, ["foo", "nope"], topics, 100) == {FOO: v("foo", {0, 1, 2}, 100)}
    state = StatePartitions(initializing={FOO: v("foo", {0}, 100)}, initialized={BAR: v("bar", {0, 1})})
    fresh = 100 + INITIALIZE_RETRY_INTERVAL_MS - 1
    assert uninitialized_subscribed(state, ["foo", "bar"], topics, fresh) == {FOO: v("foo", {1, 2}, fresh)}
    stale = 100 + INITIALIZE_RETRY_INTERVAL_MS
    assert uninitialized_subscribed(state, ["foo", "bar"], topics, stale) == {FOO: v("foo", {0, 1, 2}, stale)}


def test_initializing_joins_the_record_and_leaves_deleting():
    topics = image()
    assert initializing_record("g", None, {}, topics) is None
    assert initializing_record("g", None, {FOO: v("foo", {0})}, topics) == Rec("g", (Info(FOO, "foo", (0,)),), (), ())
    state = StatePartitions({BAR: v("bar", {0})}, {FOO: v("foo", {0})}, frozenset({FOO, BAR}))
    assert initializing_record("g", state, {FOO: v("foo", {1, 2})}, topics) == Rec(
        "g",
        (Info(FOO, "foo", (1, 2)), Info(BAR, "bar", (0,))),
        (Info(FOO, "foo", (0,)),),
        (),  # both were initializing now: neither stays deleting
    )


def test_initialized_partitions_move_out_of_initializing():
    topics = image()
    assert initialized_record("g", None, {}, topics, 0) is None
    assert initialized_record("g", None, {FOO: frozenset({0})}, topics, 0) == Rec(
        "g", (), (Info(FOO, "foo", (0,)),), ()
    )
    state = StatePartitions({FOO: v("foo", {1, 2}), BAR: v("bar", {0})}, {FOO: v("foo", {0})})
    assert initialized_record("g", state, {FOO: frozenset({1, 2})}, topics, 0) == Rec(
        "g", (Info(BAR, "bar", (0,)),), (Info(FOO, "foo", (0, 1, 2)),), ()
    )


def test_failed_initializations_leave_initializing_only():
    topics = image()
    state = StatePartitions({FOO: v("foo", {1, 2})}, {BAR: v("bar", {0})}, frozenset({GONE}))
    assert uninitialized_record("g", None, {FOO: frozenset({1})}, topics) is None
    assert uninitialized_record("g", state, {FOO: frozenset({1})}, topics) == Rec(
        "g", (Info(FOO, "foo", (2,)),), (Info(BAR, "bar", (0,)),), (TopicInfo(GONE, "<UNKNOWN>"),)
    )


def test_deleting_a_group_deletes_everything_initialized_initializing_and_left_deleting():
    topics = image()
    assert group_delete_request(ShareGroup("g"), topics) is None
    g = group({FOO: v("foo", {2})}, {FOO: v("foo", {0, 1})}, deleting={BAR, GONE})
    record, partitions = group_delete_request(g, topics)
    assert partitions == {FOO: frozenset({0, 1, 2}), BAR: frozenset({0, 1})}  # GONE is not in the image: ignored
    assert record == Rec("g", (), (), (TopicInfo(FOO, "foo"), TopicInfo(BAR, "bar")))
    record, partitions = group_delete_request(group(), topics)
    assert (record, partitions) == (Rec("g", (), (), ()), {})


def test_deleting_offsets_moves_initialized_topics_to_deleting_and_reports_the_rest():
    topics = image()
    assert offsets_delete_request(ShareGroup("g"), ["foo"], topics) == (None, {}, [])
    g = group({BAR: v("bar", {1})}, {FOO: v("foo", {0, 2})})
    record, delete, errors = offsets_delete_request(g, ["foo", "bar", "nope"], topics)
    assert delete == {FOO: frozenset({0, 2})}
    assert errors == [
        TopicError("bar", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_MESSAGE),
        TopicError("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE),
    ]
    assert record == Rec("g", (Info(BAR, "bar", (1,)),), (), (TopicInfo(FOO, "foo"),))
    # A topic already deleting is deleted again, every partition of it.
    record, delete, errors = offsets_delete_request(group(deleting={FOO}), ["foo"], topics)
    assert (delete, errors) == ({FOO: frozenset({0, 1, 2})}, [])
    assert deleted_record(group(deleting={FOO, BAR}), [FOO], topics) == Rec("g", (), (), (TopicInfo(BAR, "bar"),))


def test_topics_that_no_longer_exist_leave_every_list():
    topics = image()
    assert without_deleted_topics(group({FOO: v("foo", {0})}), topics) is None
    g = group({GONE: v("x", {0}), FOO: v("foo", {1})}, {GONE: v("x", {1}), BAR: v("bar", {0})}, deleting={GONE})
    assert without_deleted_topics(g, topics) == Rec("g", (Info(FOO, "foo", (1,)),), (Info(BAR, "bar", (0,)),), ())
