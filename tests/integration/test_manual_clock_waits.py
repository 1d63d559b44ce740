"""Issue 27: under clock.mode=manual a group waiting on a server timer says so, and how far to
advance the clock: in the control plane's group view (`kgc control group`, the live page) and in
the transcript (a `waiting` event, a `..` line of `kgc transcript`)."""

from __future__ import annotations

import pytest
import trio

from coordinator.__main__ import main
from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from tests.integration.raw_client import RawClient
from tests.integration.test_group_apis import join_request

DEADLINE = 20  # seconds: a safety net against hangs, never a timing assertion


async def waits_for(server, group: str, what: str) -> list[tuple[str, str | None, int]]:
    """The group's waits once one of them is `what` (polled under a deadline)."""
    with trio.fail_after(DEADLINE):
        while True:
            waits = [(w.timer, w.member, w.advance_ms) for w in server.control.group(group).waiting]
            if any(w[0].startswith(what) for w in waits):
                return waits
            await trio.sleep(0.002)  # polling a condition under a deadline, not a timed wait


async def test_a_group_waiting_for_its_initial_delay_says_how_far_to_advance(tmp_path, capsys):
    transcript = tmp_path / "t.jsonl"
    settings = {
        "clock.mode": "manual",
        "control.enable": True,
        "group.initial.rebalance.delay.ms": 3000,
        "transcript.file": str(transcript),
    }
    async with open_server(tmp_path / "data", settings=settings) as server:
        client = await RawClient.connect(server.host, server.port)
        first = await client.request(ApiKey.JOIN_GROUP, 5, join_request("g"))
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        joined = []

        async def join() -> None:  # parked until the initial delay's timer fires
            joined.append(await client.request(ApiKey.JOIN_GROUP, 5, join_request("g", first.member_id)))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join)
            assert await waits_for(server, "g", "initial") == [("initial rebalance delay", None, 3000)]
            await server.control.advance_clock(1000)
            assert await waits_for(server, "g", "initial") == [("initial rebalance delay", None, 2000)]
            assert joined == []  # still parked: the clock has not reached the delay
            await server.control.advance_clock(2000)
        assert joined[0].error_code == ErrorCode.NONE
        # CompletingRebalance now: the sync timeout (the rebalance timeout, 10 s) is what it waits on
        assert await waits_for(server, "g", "sync") == [
            ("sync timeout (members that do not SyncGroup leave)", None, 10000)
        ]
        await client.aclose()

    with pytest.raises(SystemExit):
        main(["transcript", str(transcript), "--group", "g"])
    said = [line.split(None, 1)[1] for line in capsys.readouterr().out.splitlines() if " .. " in line]
    assert said == [
        "[g]          .. waiting for the clock (clock.mode=manual): initial rebalance delay: advance >= 3000 ms",
        "[g]          .. waiting for the clock (clock.mode=manual): sync timeout (members that do not SyncGroup "
        "leave): advance >= 10000 ms",
    ]


async def test_with_the_system_clock_nothing_is_said_to_wait(tmp_path):
    settings = {"control.enable": True, "group.initial.rebalance.delay.ms": 3000}
    async with open_server(tmp_path / "data", settings=settings) as server:
        client = await RawClient.connect(server.host, server.port)
        first = await client.request(ApiKey.JOIN_GROUP, 5, join_request("g"))
        with trio.move_on_after(0.05):  # parked in its initial delay (3 s): we do not wait for it
            await client.request(ApiKey.JOIN_GROUP, 5, join_request("g", first.member_id))
        view = server.control.group("g")
        assert view.state == "PreparingRebalance" and view.waiting == []  # time passes by itself here
        await client.aclose()
