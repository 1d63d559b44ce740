"""The transcript of a real server: join -> sync -> heartbeat -> rebalance -> leave, with the
reason behind every error code, the state transitions with their causes, and the records."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.integration.raw_client import RawClient

GROUP = "teach"
SUB = encode_subscription(ConsumerProtocolSubscription(topics=["orders"]))


def join_request(member_id: str = "") -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=GROUP,
        session_timeout_ms=30000,
        rebalance_timeout_ms=30000,
        member_id=member_id,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=SUB)],
    )


def assignment(*partitions: int) -> bytes:
    return encode_assignment(
        ConsumerProtocolAssignment(assigned_partitions=[TopicPartition("orders", list(partitions))])
    )


async def join(client: RawClient, member_id: str = ""):
    return await client.request(ApiKey.JOIN_GROUP, 5, join_request(member_id))


async def sync(client: RawClient, member_id: str, generation: int, assignments: dict[str, bytes] | None = None):
    return await client.request(
        ApiKey.SYNC_GROUP,
        3,
        SyncGroupRequest(
            group_id=GROUP,
            generation_id=generation,
            member_id=member_id,
            assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in (assignments or {}).items()],
        ),
    )


async def heartbeat(client: RawClient, member_id: str, generation: int):
    return await client.request(
        ApiKey.HEARTBEAT, 3, HeartbeatRequest(group_id=GROUP, generation_id=generation, member_id=member_id)
    )


async def leave(client: RawClient, member_id: str):
    return await client.request(
        ApiKey.LEAVE_GROUP, 3, LeaveGroupRequest(group_id=GROUP, members=[MemberIdentity(member_id=member_id)])
    )


async def run_lesson(server) -> None:
    """Two members: a forms generation 1, b's join rebalances to 2, a's stale heartbeat is
    refused, b leaves (generation 3 for a alone), a leaves (Empty)."""
    a = await RawClient.connect(server.host, server.port)
    b = await RawClient.connect(server.host, server.port)
    a.client_id, b.client_id = "consumer-a", "consumer-b"
    first = await join(a)  # MEMBER_ID_REQUIRED (KIP-394)
    ja = await join(a, first.member_id)  # generation 1, a leads
    await sync(a, ja.member_id, 1, {ja.member_id: assignment(0, 1, 2)})
    await heartbeat(a, ja.member_id, 1)
    first_b = await join(b)
    async with trio.open_nursery() as nursery:
        results = {}

        async def b_joins():
            results["b"] = await join(b, first_b.member_id)  # parked until a rejoins

        nursery.start_soon(b_joins)
        await trio.testing.wait_all_tasks_blocked()
        assert (await heartbeat(a, ja.member_id, 1)).error_code == 27  # REBALANCE_IN_PROGRESS
        results["a"] = await join(a, ja.member_id)
    jb = results["b"]
    assert (await heartbeat(a, ja.member_id, 1)).error_code == 22  # ILLEGAL_GENERATION: stale
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sync, b, jb.member_id, 2)
        await trio.testing.wait_all_tasks_blocked()
        await sync(a, ja.member_id, 2, {ja.member_id: assignment(0, 1), jb.member_id: assignment(2)})
    await leave(b, jb.member_id)
    ja3 = await join(a, ja.member_id)  # generation 3, a alone
    await sync(a, ja.member_id, ja3.generation_id, {ja.member_id: assignment(0, 1, 2)})
    await leave(a, ja.member_id)
    await a.aclose()
    await b.aclose()


@pytest.fixture
async def transcript(tmp_path):
    path = tmp_path / "transcript.jsonl"
    async with open_server(tmp_path / "data", settings={"transcript.file": str(path)}) as server:
        await run_lesson(server)
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_every_request_has_its_response_fully_decoded(transcript):
    requests = [e for e in transcript if e["type"] == "request"]
    responses = [e for e in transcript if e["type"] == "response"]
    # Parked requests are answered later, so pair them by (connection, correlation id).
    assert sorted((r["conn"], r["correlation_id"], r["api"]) for r in requests) == sorted(
        (r["conn"], r["correlation_id"], r["api"]) for r in responses
    )
    assert len(requests) == len(responses) == 15
    join_req = next(r for r in requests if r["api"] == "JoinGroup")
    assert join_req["client"] == "consumer-a" and join_req["groups"] == [GROUP]
    assert join_req["body"]["protocols"][0]["metadata"]["subscription"]["topics"] == ["orders"]
    leader_sync = next(r for r in requests if r["api"] == "SyncGroup" and r["body"]["assignments"])
    assigned = leader_sync["body"]["assignments"][0]["assignment"]["assignment"]["assigned_partitions"]
    assert assigned == [{"topic": "orders", "partitions": [0, 1, 2]}]


async def test_every_error_code_carries_its_reason(transcript):
    errors = [
        (e["api"], err["error"], err["reason"]) for e in transcript if e["type"] == "response" for err in e["errors"]
    ]
    assert [api for api, _, _ in errors] == ["JoinGroup", "JoinGroup", "Heartbeat", "Heartbeat"]
    (_, e1, r1), (_, e2, _), (_, e3, r3), (_, e4, r4) = errors
    assert e1 == e2 == "MEMBER_ID_REQUIRED" and "without a member id" in r1 and "KIP-394" in r1
    assert e3 == "REBALANCE_IN_PROGRESS" and "PreparingRebalance" in r3
    assert e4 == "ILLEGAL_GENERATION" and r4 == "request generation 1, group generation 2"


async def test_state_transitions_with_their_causes(transcript):
    moves = [(e["from"], e["to"], e["generation"], e["reason"]) for e in transcript if e["type"] == "transition"]
    assert [(f, t, g) for f, t, g, _ in moves] == [
        ("Empty", "PreparingRebalance", 0),
        ("PreparingRebalance", "CompletingRebalance", 1),
        ("CompletingRebalance", "Stable", 1),
        ("Stable", "PreparingRebalance", 1),
        ("PreparingRebalance", "CompletingRebalance", 2),
        ("CompletingRebalance", "Stable", 2),
        ("Stable", "PreparingRebalance", 2),
        ("PreparingRebalance", "CompletingRebalance", 3),
        ("CompletingRebalance", "Stable", 3),
        ("Stable", "PreparingRebalance", 3),
        ("PreparingRebalance", "Empty", 4),
    ]
    assert moves[3][3].startswith("JoinGroup from client 'consumer-b'")
    assert moves[6][3].startswith("LeaveGroup from client 'consumer-b'")


async def test_records_are_shown_as_the_offsets_decoder_shows_them(transcript):
    records = [e for e in transcript if e["type"] == "record"]
    assert all(r["topic"] == "__consumer_offsets" and r["group"] == GROUP for r in records)
    assert [r["offset"] for r in records] == list(range(len(records)))  # one partition, in order
    generations = [r["value"]["data"]["generation"] for r in records]
    assert generations == sorted(generations) and generations[-1] == 4
    stable_2 = next(r for r in records if r["value"]["data"]["generation"] == 2)
    members = stable_2["value"]["data"]["members"]
    assert [m["assignment"]["assignedPartitions"] for m in members] == [
        [{"topic": "orders", "partitions": [0, 1]}],
        [{"topic": "orders", "partitions": [2]}],
    ]


async def test_offset_errors_carry_their_reasons(tmp_path):
    from protocol.messages.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )

    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", topics={"orders": 1}, settings={"transcript.file": str(path)}) as server:
        client = await RawClient.connect(server.host, server.port)
        await client.request(
            ApiKey.OFFSET_COMMIT,
            9,
            OffsetCommitRequest(
                group_id="nobody",
                generation_id_or_member_epoch=5,
                member_id="m",
                topics=[
                    OffsetCommitRequestTopic(name="orders", partitions=[OffsetCommitRequestPartition(0, 1)]),
                    OffsetCommitRequestTopic(name="missing", partitions=[OffsetCommitRequestPartition(0, 1)]),
                ],
            ),
        )
        await client.aclose()
    response = next(
        json.loads(line)
        for line in path.read_text().splitlines()
        if '"type": "response"' in line and '"OffsetCommit"' in line
    )
    assert {e["error"]: e["reason"] for e in response["errors"]} == {
        "GROUP_ID_NOT_FOUND": "group 'nobody' does not exist, yet the commit names generation 5",
        "UNKNOWN_TOPIC_OR_PARTITION": "topic 'missing' does not exist",
    }


async def test_a_parked_request_gets_the_reason_of_whoever_answered_it(tmp_path):
    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", settings={"transcript.file": str(path)}) as server:
        a = await RawClient.connect(server.host, server.port)
        b1 = await RawClient.connect(server.host, server.port)
        b2 = await RawClient.connect(server.host, server.port)
        a.client_id, b1.client_id, b2.client_id = "a", "b-first", "b-again"
        ja = await join(a, (await join(a)).member_id)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join, b1, (await join(b1)).member_id)  # b joins: a rebalance, parked
            await trio.testing.wait_all_tasks_blocked()
            jb_id = server.broker.groups.shard_for(GROUP).group(GROUP).leader_id
            members = list(server.broker.groups.shard_for(GROUP).group(GROUP).members)
            b_id = next(m for m in members if m != jb_id)
            nursery.start_soon(join, b2, b_id)  # the same member again: the first join is answered
            await trio.testing.wait_all_tasks_blocked()
            await join(a, ja.member_id)  # completes the join phase for the second one
        for c in (a, b1, b2):
            await c.aclose()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    answers = [e for e in events if e["type"] == "response" and e["client"] == "b-first" and e["api"] == "JoinGroup"]
    assert [err["error"] for e in answers for err in e["errors"]] == ["MEMBER_ID_REQUIRED", "REBALANCE_IN_PROGRESS"]
    assert answers[1]["errors"][0]["reason"].startswith("a newer JoinGroup from member 'b-first-")


async def test_data_path_reasons_and_kafkas_own_error_messages(tmp_path):
    from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
    from protocol.messages.find_coordinator import FindCoordinatorRequest

    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", topics={"orders": 1}, settings={"transcript.file": str(path)}) as server:
        client = await RawClient.connect(server.host, server.port)
        await client.request(
            ApiKey.FETCH,
            12,
            FetchRequest(
                replica_id=-1,
                max_wait_ms=0,
                max_bytes=1 << 20,
                topics=[
                    FetchTopic(
                        topic="orders",
                        partitions=[FetchPartition(partition=0, fetch_offset=99, partition_max_bytes=1 << 20)],
                    )
                ],
            ),
        )
        await client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="share", key_type=2))
        await client.aclose()
    answers = {e["api"]: e["errors"] for e in map(json.loads, path.read_text().splitlines()) if e["type"] == "response"}
    assert answers["Fetch"] == [
        {
            "code": 1,
            "error": "OFFSET_OUT_OF_RANGE",
            "reason": "fetch offset 99 of orders-0 is outside [log start 0, high watermark 0]",
        }
    ]
    # No explain() there: the response's own error message is the reason.
    assert answers["FindCoordinator"][0]["error"] == "INVALID_REQUEST"
    assert "v6+" in answers["FindCoordinator"][0]["reason"]


async def test_a_failing_transcript_never_costs_the_request(tmp_path, monkeypatch):
    from coordinator.observe.transcript import Transcript

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Transcript, "response", broken)
    async with open_server(tmp_path / "data", settings={"transcript.file": str(tmp_path / "t.jsonl")}) as server:
        client = await RawClient.connect(server.host, server.port)
        assert (await join(client)).error_code == 79  # answered all the same
        await client.aclose()


async def test_a_connection_closed_for_an_unserved_version_says_why(tmp_path):
    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", settings={"transcript.file": str(path)}) as server:
        client = await RawClient.connect(server.host, server.port)
        _, frame = client.encode(ApiKey.HEARTBEAT, 4, HeartbeatRequest(group_id=GROUP, member_id="m"))
        await client.send_raw(frame[:6] + b"\x00\x63" + frame[8:])  # version 99
        assert await client.closed_by_server()
        await client.aclose()
        await trio.testing.wait_all_tasks_blocked()
    closes = [e for e in map(json.loads, path.read_text().splitlines()) if e["type"] == "disconnect"]
    assert [e["reason"] for e in closes] == ["HEARTBEAT v99 is not served (this broker serves v0-v4)"]
