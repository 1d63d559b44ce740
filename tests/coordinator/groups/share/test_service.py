"""Share groups through the real runtime and GroupService under trio's MockClock, with an in-memory
share coordinator (FakePersister): a heartbeat is answered once its share-partitions are
initialized and carries the assignment with them (kgc's deliberate difference from Kafka), a
persister failure leaves them uninitialized for the next heartbeat, DeleteGroups deletes the
share state first, Alter/Delete/DescribeShareGroupOffsets as Kafka's GroupCoordinatorService
serves them (lag from the high watermark), timers fence silent members, NOT_COORDINATOR."""

from __future__ import annotations

import pytest
import trio

from coordinator.groups.consumer.records import TopicPartitions
from coordinator.groups.requests import DeletedGroup, DeleteGroupsParams
from coordinator.groups.service import GroupService
from coordinator.groups.share.heartbeat import ShareHeartbeatParams
from coordinator.groups.share.ops import AlteredTopic, AlterParams
from coordinator.groups.share.service import DeletedTopic, OffsetRow
from coordinator.groups.share.state_partitions import NO_OFFSETS_MESSAGE, UNKNOWN_TOPIC_MESSAGE
from coordinator.groups.topics_image import TopicsImage
from coordinator.share.persister import SharePartitionKey, ShareState
from coordinator.share.settings import ShareSettings
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import FakeRegistry
from tests.coordinator.groups.share.support import FakePersister
from tests.support.runtime import GroupHarness, OneBroker

FOO_HWM = {("foo", 0): 100, ("foo", 1): 40}


class Setup:
    def __init__(self, tmp_path, persister: FakePersister | None = None, leaders=None) -> None:
        self.h = GroupHarness(tmp_path)
        self.registry = FakeRegistry()
        self.foo = self.registry.add("foo", 2)
        image = TopicsImage(self.registry, self.h.clock)
        kind = self.h.runtime.kind
        kind.topics = image  # type: ignore[attr-defined]  # shards made from now on
        for partition in range(self.h.runtime.num_partitions):
            shard = self.h.runtime.shard(partition)
            if shard is not None:
                shard.topics, shard.topics_seen = image, image.version
        settings: ShareSettings = kind.share  # type: ignore[attr-defined]  # one object, read at use time
        settings.session_timeout_ms, settings.heartbeat_interval_ms = 3_000, 500
        self.persister = persister if persister is not None else FakePersister()
        self.service = GroupService(
            self.h.runtime, leaders or OneBroker(), 0, persister, lambda t, p: FOO_HWM.get((t, p))
        )

    def key(self, partition: int, group_id: str = "g") -> SharePartitionKey:
        return SharePartitionKey(group_id, self.foo, partition)

    async def hb(self, member_id: str, epoch: int, topics: list[str] | None = None, group_id: str = "g"):
        p = ShareHeartbeatParams(group_id, member_id, epoch, subscribed_topic_names=topics, client_host="/127.0.0.1")
        return await self.service.share_group_heartbeat(p)


@pytest.fixture
async def setup(tmp_path):
    return Setup(tmp_path, FakePersister())


async def test_a_join_is_answered_after_its_partitions_are_initialized_with_them_assigned(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        joined = await s.hb("m1", 0, ["foo"])
        assert s.persister.calls == [
            ("initialize", s.key(0), (1, -1)),  # state epoch: the group epoch, as Kafka; start: reset policy
            ("initialize", s.key(1), (1, -1)),
        ]
        assert (joined.error_code, joined.member_id, joined.member_epoch) == (0, "m1", 2)
        assert joined.assignment == (TopicPartitions(s.foo, (0, 1)),)
        group = s.h.shard().share_group("g")
        assert set(group.partitions().initialized) == {s.foo} and not group.partitions().initializing
        again = await s.hb("m1", 2)
        assert (again.member_epoch, again.assignment) == (2, None)  # nothing new to initialize or send
        assert len(s.persister.calls) == 2
        nursery.cancel_scope.cancel()


async def test_a_persister_failure_leaves_the_partitions_for_the_next_heartbeat(setup, autojump_clock):
    s = setup
    s.persister.fail[s.key(1)] = ErrorCode.COORDINATOR_NOT_AVAILABLE
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        joined = await s.hb("m1", 0, ["foo"])
        assert (joined.error_code, joined.member_epoch, joined.assignment) == (0, 1, ())
        group = s.h.shard().share_group("g")
        assert not group.partitions().initialized and not group.partitions().initializing
        del s.persister.fail[s.key(1)]
        retried = await s.hb("m1", 1)
        assert retried.member_epoch == 2 and retried.assignment == (TopicPartitions(s.foo, (0, 1)),)
        assert s.persister.keys("initialize") == [(s.foo, 0), (s.foo, 1), (s.foo, 0), (s.foo, 1)]
        nursery.cancel_scope.cancel()


async def test_without_a_share_coordinator_members_join_but_get_no_partitions(tmp_path, autojump_clock):
    s = Setup(tmp_path, None)
    s.service = GroupService(s.h.runtime, OneBroker(), 0)  # no persister wired
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        joined = await s.hb("m1", 0, ["foo"])
        assert (joined.error_code, joined.member_epoch, joined.assignment) == (0, 1, ())
        assert not s.h.shard().share_group("g").partitions().initializing
        nursery.cancel_scope.cancel()


async def test_bad_input_is_answered_before_routing_and_costs_nothing(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        refused = await s.hb("", 0, ["foo"])
        assert (refused.error_code, refused.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        unknown = await s.hb("m1", 3)
        assert unknown.error_code == ErrorCode.GROUP_ID_NOT_FOUND
        assert s.h.writer.records == [] and s.persister.calls == []
        nursery.cancel_scope.cancel()


async def test_a_silent_member_is_fenced_by_the_runtimes_timer_loop(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        await s.hb("m1", 0, ["foo"])
        m2 = await s.hb("m2", 0, ["foo"])
        epoch = m2.member_epoch
        for _ in range(8):  # m2 heartbeats every 500 ms, m1 never again (session 3 s)
            await trio.sleep(0.5)
            epoch = (await s.hb("m2", epoch)).member_epoch
        assert set(s.h.shard().share_group("g").members) == {"m2"}
        nursery.cancel_scope.cancel()


async def test_delete_groups_deletes_the_share_state_first(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        await s.hb("m1", 0, ["foo"])
        assert await s.service.delete_groups(DeleteGroupsParams(["g"])) == [
            DeletedGroup("g", ErrorCode.NON_EMPTY_GROUP)
        ]
        await s.hb("m1", -1)
        s.persister.fail[s.key(1)] = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert await s.service.delete_groups(DeleteGroupsParams(["g", "nope"])) == [
            DeletedGroup("g", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),  # kept: its state is still there
            DeletedGroup("nope", ErrorCode.GROUP_ID_NOT_FOUND),
        ]
        assert s.h.shard().share_group("g") is not None
        del s.persister.fail[s.key(1)]
        assert await s.service.delete_groups(DeleteGroupsParams(["g"])) == [DeletedGroup("g", ErrorCode.NONE)]
        assert s.h.shard().share_group("g") is None and s.persister.states == {}
        nursery.cancel_scope.cancel()


async def test_describe_share_group_offsets_reads_start_offsets_and_computes_the_lag(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        await s.hb("m1", 0, ["foo"])
        s.persister.states[s.key(0)] = ShareState(1, 60, 3, 15, ())  # 15 records past 60 delivered
        s.persister.states[s.key(1)] = ShareState(1, 10, 0, -1, ())  # delivery count unknown (old state)
        every = await s.service.describe_share_group_offsets("g", None)
        assert [(t.topic_name, t.partitions) for t in every.topics] == [
            ("foo", [OffsetRow(0, 60, 3, 100 - 60 - 15), OffsetRow(1, 10, 0, -1)])
        ]
        some = await s.service.describe_share_group_offsets("g", {"foo": [1, 7], "nope": [0]})
        assert [(t.topic_name, t.partitions) for t in some.topics] == [
            ("foo", [OffsetRow(1, 10, 0, -1), OffsetRow(7)]),  # no state for partition 7: -1
            ("nope", [OffsetRow(0)]),
        ]
        none = await s.service.describe_share_group_offsets("other", None)
        assert (none.error_code, none.topics) == (0, [])
        nursery.cancel_scope.cancel()


async def test_alter_share_group_offsets(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        missing = await s.service.alter_share_group_offsets(AlterParams("g", {"foo": {0: 5}}))
        assert (missing.error_code, missing.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g not found.")
        await s.hb("m1", 0, ["foo"])
        busy = await s.service.alter_share_group_offsets(AlterParams("g", {"foo": {0: 5}}))
        assert (busy.error_code, busy.error_message) == (ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        await s.hb("m1", -1)
        epoch = s.h.shard().share_group("g").group_epoch
        s.persister.calls.clear()
        altered = await s.service.alter_share_group_offsets(AlterParams("g", {"foo": {0: 5, 9: 1}, "nope": {0: 1}}))
        unknown = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE)
        assert altered.error_code == 0 and altered.topics == [
            AlteredTopic("foo", s.foo, {0: (ErrorCode.NONE, None), 9: unknown}),
            AlteredTopic("nope", None, {0: unknown}),
        ]
        assert s.persister.calls == [("initialize", s.key(0), (epoch, 5))]
        assert s.persister.states[s.key(0)].start_offset == 5
        group = s.h.shard().share_group("g")
        assert not group.partitions().initializing and group.partitions().initialized[s.foo].partitions == {0, 1}
        s.persister.fail[s.key(1)] = ErrorCode.FENCED_STATE_EPOCH
        failed = await s.service.alter_share_group_offsets(AlterParams("g", {"foo": {1: 3}}))
        assert failed.topics == [AlteredTopic("foo", s.foo, {1: (ErrorCode.FENCED_STATE_EPOCH, None)})]
        assert s.h.shard().share_group("g").partitions().initializing[s.foo].partitions == {1}  # as Kafka leaves it
        nursery.cancel_scope.cancel()


async def test_delete_share_group_offsets(setup, autojump_clock):
    s = setup
    async with trio.open_nursery() as nursery:
        await nursery.start(s.h.runtime.run)
        missing = await s.service.delete_share_group_offsets("g", ["foo"])
        assert missing.error_code == ErrorCode.GROUP_ID_NOT_FOUND
        await s.hb("m1", 0, ["foo"])
        assert (await s.service.delete_share_group_offsets("g", ["foo"])).error_code == ErrorCode.NON_EMPTY_GROUP
        await s.hb("m1", -1)
        deleted = await s.service.delete_share_group_offsets("g", ["foo", "nope"])
        assert deleted.topics == [
            DeletedTopic("foo", s.foo),
            DeletedTopic("nope", None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE),
        ]
        assert s.persister.states == {} and s.persister.keys("delete") == [(s.foo, 0), (s.foo, 1)]
        group = s.h.shard().share_group("g")
        assert not group.partitions().initialized and not group.partitions().deleting
        again = await s.service.delete_share_group_offsets("g", ["foo"])
        assert again.topics == [DeletedTopic("foo", None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_MESSAGE)]
        nursery.cancel_scope.cancel()


class Elsewhere:
    def leader(self, topic_name: str, partition: int) -> int:
        return 1


async def test_share_group_requests_to_the_wrong_broker_get_not_coordinator(tmp_path, autojump_clock):
    s = Setup(tmp_path, FakePersister(), Elsewhere())
    assert (await s.hb("m1", 0, ["foo"])).error_code == ErrorCode.NOT_COORDINATOR
    (described,) = await s.service.share_group_describe(["g"])
    assert described.error_code == ErrorCode.NOT_COORDINATOR
    assert (await s.service.describe_share_group_offsets("g", None)).error_code == ErrorCode.NOT_COORDINATOR
    assert (await s.service.alter_share_group_offsets(AlterParams("g", {}))).error_code == ErrorCode.NOT_COORDINATOR
    assert s.persister.calls == []
