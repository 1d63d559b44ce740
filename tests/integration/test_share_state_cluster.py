"""The share coordinator in a cluster of three brokers: FindCoordinator (key type 2) names the
leader of the key's __share_group_state partition; when that broker goes down the partition's
new leader loads it (COORDINATOR_LOAD_IN_PROGRESS meanwhile), and the persister, which waits for
the load as Kafka's persister retries, answers the same state from the new coordinator.
Every wait is on a condition under a deadline."""

from __future__ import annotations

import pytest
import trio

from coordinator.embed.embedded import open_server
from coordinator.runtime.coordinator_runtime import CoordinatorUnavailable, PartitionState
from coordinator.share.persister import SharePartitionKey, ShareState, StateBatch
from coordinator.share.state import ops
from coordinator.share.state.placement import SHARE_STATE_TOPIC, coordinator_key
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import FindCoordinatorRequest
from tests.integration.raw_client import RawClient


async def find_share_coordinator(server, node: int, key: SharePartitionKey) -> tuple[int, int]:
    broker = server.brokers[node]
    client = await RawClient.connect(broker.advertised_host, broker.advertised_port)
    request = FindCoordinatorRequest(key_type=2, coordinator_keys=[coordinator_key(key)])
    found = (await client.request(ApiKey.FIND_COORDINATOR, 6, request)).coordinators[0]
    await client.aclose()
    return found.error_code, found.node_id


async def test_share_state_moves_with_its_coordinator(tmp_path):
    settings = {"coordinator.load.delay.ms": 200}
    async with open_server(tmp_path / "data", brokers=3, topics={"orders": 2}, settings=settings) as server:
        with trio.fail_after(20):
            runtime, persister = server.share_state_runtime, server.share_state
            assert all(b.share_state is persister for b in server.brokers)  # one for the cluster
            await runtime.loaded.wait()
            key = SharePartitionKey("sg", server.broker.topics.get("orders").topic_id, 1)
            partition = persister.partition_for(key)
            assert await persister.initialize(key, 0, 0) == ErrorCode.NONE
            assert (await persister.read(key, 1))[0] == ErrorCode.NONE
            assert await persister.write(key, 0, 1, 5, 2, (StateBatch(5, 9, 2, 1),)) == ErrorCode.NONE

            error, old = await find_share_coordinator(server, 0, key)
            assert (error, old) == (ErrorCode.NONE, server.cluster.leader(SHARE_STATE_TOPIC, partition))
            await server.controller.broker_down(old)
            other = next(n for n in range(3) if n != old)
            error, new = await find_share_coordinator(server, other, key)
            assert error == ErrorCode.NONE and new not in (old, -1)
            assert runtime.state(partition) is PartitionState.LOADING  # stretched to 200 ms
            with pytest.raises(CoordinatorUnavailable) as loading:
                await runtime.run_op(partition, ops.read, ops.ReadParams(key, 1))
            assert loading.value.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

            # The persister waits for the load and answers from the new coordinator.
            assert await persister.read(key, 2) == (ErrorCode.NONE, ShareState(0, 5, 1, 2, (StateBatch(5, 9, 2, 1),)))
            assert runtime.state(partition) is PartitionState.ACTIVE
            assert await persister.write(key, 0, 1, -1, 2, ()) == ErrorCode.FENCED_LEADER_EPOCH  # 2 was recorded

            await server.controller.broker_up(old)
            assert await persister.write(key, 0, 2, 10, 3, (StateBatch(10, 12, 2, 1),)) == ErrorCode.NONE
            after = ShareState(0, 10, 2, 3, (StateBatch(10, 12, 2, 1),))  # the batch below 10 is gone
            assert await persister.read(key, 2) == (ErrorCode.NONE, after)


async def test_the_manual_clock_drives_cold_snapshots(tmp_path):
    """clock.mode=manual: the control plane's advance fires the share runtime's timers too."""
    settings = {
        "clock.mode": "manual",
        "control.enable": True,
        "share.coordinator.cold.partition.snapshot.interval.ms": 1000,
        "share.coordinator.state.topic.prune.interval.ms": 1000,
    }
    async with open_server(tmp_path / "data", topics={"orders": 1}, settings=settings) as server:
        with trio.fail_after(20):
            runtime, persister = server.share_state_runtime, server.share_state
            await runtime.loaded.wait()
            key = SharePartitionKey("sg", server.broker.topics.get("orders").topic_id, 0)
            assert await persister.initialize(key, 0, 0) == ErrorCode.NONE
            shard = runtime.shard(persister.partition_for(key))
            written = shard.states[key].write_timestamp
            await server.control.advance_clock(999)
            assert shard.states[key].write_timestamp == written  # not yet
            await server.control.advance_clock(1)
            state = shard.states[key]
            assert (state.snapshot_epoch, state.write_timestamp) == (1, written + 1000)  # the cold snapshot
            assert state.create_timestamp == written
