"""Control (the in-process `.control`): sync calls from another thread run in the server's trio
loop against the plane, with the shapes the issue names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio

from coordinator.control.errors import ControlError
from coordinator.control.facade import Control, thread_call
from coordinator.control.fault_spec import FaultSpec
from protocol.api import ApiKey
from protocol.messages import join_group
from tests.coordinator.control.fake_plane import FakeControlPlane


async def in_thread(fn: Callable[[], Any]) -> Any:
    return await trio.to_thread.run_sync(fn)


async def test_the_issue_examples_from_a_test_thread() -> None:
    plane = FakeControlPlane()
    control = Control(plane, thread_call(trio.lowlevel.current_trio_token()))
    assert await in_thread(lambda: control.fail("OffsetCommit", errors=["NOT_COORDINATOR"], count=1)) == 1
    assert await in_thread(lambda: control.delay("Heartbeat", ms=500)) == 2
    assert await in_thread(lambda: control.fail("JoinGroup", "COORDINATOR_LOAD_IN_PROGRESS", group="g")) == 3
    assert await in_thread(lambda: control.fail("SyncGroup", error="REBALANCE_IN_PROGRESS", nth=2)) == 4
    await in_thread(lambda: control.drop("SyncGroup", count=1))
    await in_thread(lambda: control.close("OffsetCommit", after=True, member="m-1"))
    await in_thread(lambda: control.throttle("Fetch", 100, for_ms=1_000))
    await in_thread(lambda: control.rule(FaultSpec(api="LeaveGroup", close="before")))
    assert [f.rule for f in plane.faults()][:4] == [
        {"api": "OffsetCommit", "errors": ["NOT_COORDINATOR"], "count": 1},
        {"api": "Heartbeat", "delay_ms": 500},
        {"api": "JoinGroup", "group": "g", "errors": ["COORDINATOR_LOAD_IN_PROGRESS"]},
        {"api": "SyncGroup", "nth": 2, "error": "REBALANCE_IN_PROGRESS"},
    ]
    assert len(await in_thread(control.faults)) == 8
    await in_thread(lambda: control.unfault(1))
    assert await in_thread(control.clear_faults) == 7

    assert (await in_thread(lambda: control.broker(1).down())).up is False
    assert (await in_thread(lambda: control.broker(1).up())).up is True
    assert [b.node_id for b in await in_thread(control.brokers)] == [0, 1, 2]
    assert (await in_thread(lambda: control.group("g"))).leader == "m-1"
    assert (await in_thread(lambda: control.move_coordinator("g", 2))).leader == 2
    await in_thread(lambda: control.expire("g", "m-2"))
    await in_thread(lambda: control.rebalance("g"))
    assert (await in_thread(lambda: control.move_leader("orders", 0, 1))).leader_epoch == 1
    assert (await in_thread(lambda: control.leaderless("orders", 0))).leader == -1
    await in_thread(lambda: control.load_delay(3_000))
    assert (await in_thread(lambda: control.limit_version("OffsetCommit", 7))).max_version == 7
    await in_thread(control.clear_versions)
    assert plane.load_delay_ms == 3_000 and not any(v.limited for v in plane.versions())

    before = await in_thread(lambda: control.clock.now_ms)
    assert (await in_thread(lambda: control.clock.advance(30_000))).now_ms == before + 30_000
    plane.log.record(int(ApiKey.JOIN_GROUP), 5, 0, 1, "c", 1, 2, join_group.JoinGroupRequest(group_id="g"), None)
    page = await in_thread(lambda: control.requests(api="JoinGroup"))
    assert [r["api"] for r in page.requests] == ["JoinGroup"]
    assert "groups" in await in_thread(control.snapshot)
    assert plane.calls == [
        ("down", 1),
        ("up", 1),
        ("move_coordinator", "g", 2),
        ("expire", "g", "m-2"),
        ("rebalance", "g"),
    ]


async def test_refusals_reach_the_test_thread_as_control_errors() -> None:
    control = Control(FakeControlPlane(), thread_call(trio.lowlevel.current_trio_token()))
    with pytest.raises(ControlError, match="unknown broker 9") as refused:
        await in_thread(lambda: control.broker(9).down())
    assert refused.value.status == 404
    with pytest.raises(ControlError, match="unknown API"):
        await in_thread(lambda: control.delay("Nope", 5))
    with pytest.raises(TypeError):  # a matcher FaultSpec does not have
        await in_thread(lambda: control.delay("Fetch", 5, colour="red"))
