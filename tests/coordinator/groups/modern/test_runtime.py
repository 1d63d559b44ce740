"""KIP-848 through the real runtime and GroupService under trio's MockClock: a heartbeat's answer
waits until its records are durable, a record that contradicts the group (IllegalStateError, as
Kafka's replay throws) fails the partition and the runtime reloads it from the log, consumer-group
requests to a broker that does not lead the group's partition get NOT_COORDINATOR, and a member
that stops heartbeating is fenced by the runtime's own timer loop."""

from __future__ import annotations

import pytest
import trio

from coordinator.groups.consumer import records as r
from coordinator.groups.consumer.group import IllegalStateError
from coordinator.groups.consumer.settings import ConsumerGroupSettings
from coordinator.groups.consumer_ops import ConsumerHeartbeatParams
from coordinator.groups.placement import partition_for
from coordinator.groups.service import GroupService
from coordinator.groups.topics_image import TopicsImage
from coordinator.runtime.coordinator_runtime import PartitionState
from protocol.errors import ErrorCode
from tests.coordinator.groups.modern.support import FakeRegistry
from tests.support.runtime import GroupHarness

FAST = ConsumerGroupSettings(
    session_timeout_ms=3_000, min_session_timeout_ms=1_000, heartbeat_interval_ms=500, min_heartbeat_interval_ms=100
)


def harness(tmp_path) -> GroupHarness:
    h = GroupHarness(tmp_path, consumer=FAST)
    registry = FakeRegistry()
    registry.add("foo", 4)
    image = TopicsImage(registry, h.clock)
    h.runtime.kind.topics = image  # type: ignore[attr-defined]  # shards made from now on
    for partition in range(h.runtime.num_partitions):
        shard = h.runtime.shard(partition)
        if shard is not None:
            shard.topics, shard.topics_seen = image, image.version
    return h


def join(member_id: str) -> ConsumerHeartbeatParams:
    return ConsumerHeartbeatParams(
        group_id="g",
        member_id=member_id,
        member_epoch=0,
        rebalance_timeout_ms=5_000,
        subscribed_topic_names=["foo"],
        topic_partitions=(),
        client_host="/127.0.0.1",
    )


async def test_a_heartbeat_answers_once_its_records_are_durable(tmp_path, autojump_clock):
    h = harness(tmp_path)
    h.writer.hold()
    answers = []

    async def member() -> None:
        answers.append(await h.service.consumer_group_heartbeat(join("m1")))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(member)
        await trio.sleep(1)
        assert answers == [] and [type(x).__name__ for x in h.writer.records][:2] == [
            "ConsumerGroupMemberMetadataRecord",
            "ConsumerGroupMetadataRecord",
        ]
        h.writer.release()
    assert (answers[0].error_code, answers[0].member_epoch) == (0, 1)


async def test_a_contradicting_record_fails_the_partition_which_reloads(tmp_path, autojump_clock):
    h = harness(tmp_path)
    partition = partition_for("g")

    def contradicting(ctx, _):
        ctx.apply(r.ConsumerGroupMemberMetadataTombstone("g", "m1"))  # its assignment is still there

    async with trio.open_nursery() as nursery:
        await nursery.start(h.runtime.run)
        assert (await h.service.consumer_group_heartbeat(join("m1"))).member_epoch == 1
        with pytest.raises(IllegalStateError):
            await h.runtime.run_op(partition, contradicting, None)
        assert h.runtime.state(partition) is PartitionState.FAILED
        busy = await h.service.consumer_group_heartbeat(join("m2"))
        assert busy.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        await trio.sleep(1)  # the runtime reloads the partition from its log
        assert h.runtime.state(partition) is PartitionState.ACTIVE
        group = h.shard().consumer_group("g")
        assert group is not None and set(group.members) == {"m1"}  # the bad record was never written
        again = await h.service.consumer_group_heartbeat(ConsumerHeartbeatParams("g", "m1", 1))
        assert (again.error_code, again.member_epoch) == (0, 1)
        nursery.cancel_scope.cancel()


async def test_a_silent_member_is_fenced_by_the_timer_loop(tmp_path, autojump_clock):
    h = harness(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(h.runtime.run)
        await h.service.consumer_group_heartbeat(join("m1"))
        await h.service.consumer_group_heartbeat(join("m2"))
        for _ in range(8):  # m2 heartbeats every 500 ms, m1 never again
            await trio.sleep(0.5)
            group = h.shard().consumer_group("g")
            epoch = group.members["m2"].member_epoch
            await h.service.consumer_group_heartbeat(ConsumerHeartbeatParams("g", "m2", epoch, topic_partitions=()))
        assert set(h.shard().consumer_group("g").members) == {"m2"}
        nursery.cancel_scope.cancel()


class Elsewhere:
    def leader(self, topic_name: str, partition: int) -> int:
        return 1


async def test_consumer_group_requests_to_the_wrong_broker_get_not_coordinator(tmp_path, autojump_clock):
    h = harness(tmp_path)
    service = GroupService(h.runtime, Elsewhere(), 0)
    assert (await service.consumer_group_heartbeat(join("m1"))).error_code == ErrorCode.NOT_COORDINATOR
    (described,) = await service.consumer_group_describe(["g"])
    assert described.error_code == ErrorCode.NOT_COORDINATOR
