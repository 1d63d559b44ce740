"""The transcript of KIP-848 traffic on a real server: the reason behind every error code a
ConsumerGroupHeartbeat answered, and every group epoch bump as a transition with its reason,
including the one a session timeout makes (a timer, no request). Virtual time (MockClock)."""

from __future__ import annotations

import json

import trio

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from tests.integration.raw_client import RawClient

GROUP = "kip848-teach"


def join(member_id: str, **kwargs) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        group_id=GROUP,
        member_id=member_id,
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["orders"],
        topic_partitions=[],
        **kwargs,
    )


async def test_errors_and_epoch_bumps_carry_their_reasons(tmp_path, autojump_clock):
    path = tmp_path / "transcript.jsonl"
    settings = {
        "transcript.file": str(path),
        "log.flush.mode": "interval",
        "group.consumer.session.timeout.ms": 1000,
        "group.consumer.min.session.timeout.ms": 100,
        "group.consumer.heartbeat.interval.ms": 200,
        "group.consumer.min.heartbeat.interval.ms": 100,
    }
    async with open_server(tmp_path / "data", settings=settings, topics={"orders": 2}) as server:
        client = await RawClient.connect(server.host, server.port)
        hb = ApiKey.CONSUMER_GROUP_HEARTBEAT
        await client.request(hb, 1, join("m1"))
        epoch = (await client.request(hb, 1, join("m2"))).member_epoch
        assert (
            await client.request(hb, 1, ConsumerGroupHeartbeatRequest(group_id=GROUP, member_id="m1", member_epoch=9))
        ).error_code == 110  # FENCED_MEMBER_EPOCH
        assert (await client.request(hb, 1, join("m3", server_assignor="sticky"))).error_code == 112
        for _ in range(4):  # m2 keeps its session; m1 says nothing and expires
            await trio.sleep(0.5)
            epoch = (
                await client.request(
                    hb,
                    1,
                    ConsumerGroupHeartbeatRequest(
                        group_id=GROUP, member_id="m2", member_epoch=epoch, topic_partitions=[]
                    ),
                )
            ).member_epoch
        await client.aclose()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    errors = [(err["error"], err["reason"]) for e in events if e["type"] == "response" for err in e["errors"]]
    assert errors == [
        (
            "FENCED_MEMBER_EPOCH",
            "The consumer group member has a greater member epoch (9) than the one known by "
            "the group coordinator (1). The member must abandon all its partitions and rejoin.",
        ),
        ("UNSUPPORTED_ASSIGNOR", "ServerAssignor sticky is not supported. Supported assignors: uniform, range."),
    ]
    moves = {(e["generation"], e["reason"]) for e in events if e["type"] == "transition" and e["group"] == GROUP}
    # Each bump's records move the group to its new epoch; the transition says why.
    assert (1, f"group {GROUP} epoch bumped to 1: member m1 joined or changed its subscription") in moves
    assert (2, f"group {GROUP} epoch bumped to 2: member m2 joined or changed its subscription") in moves
    assert (3, f"group {GROUP} epoch bumped to 3: m1 left: its session expired") in moves  # a timer
    assert {g for g, _ in moves} == {0, 1, 2, 3}
