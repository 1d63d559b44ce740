"""The HTTP API against FakeControlPlane over a real loopback socket: every endpoint and its
shape, one-line 4xx errors, the bearer token, loopback-only binding, and openapi.json."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from coordinator.control.errors import ControlError
from coordinator.control.faults import RequestInfo
from coordinator.control.http_api import ControlServer, is_loopback, serve_control
from coordinator.control.plane_api import ControlPlane
from protocol.api import ApiKey
from protocol.messages import heartbeat
from tests.coordinator.control.fake_plane import FakeControlPlane

_: type[ControlPlane] = FakeControlPlane  # the fake implements the whole interface (mypy checks)


class Client:
    def __init__(self, server: ControlServer, token: str | None = None) -> None:
        self.server = server
        self.token = token

    async def call(
        self, method: str, path: str, body: Any = None, content: bytes | None = None, token: str | None = None
    ) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token or self.token:
            headers["Authorization"] = f"Bearer {token or self.token}"

        def send() -> httpx.Response:  # a blocking client on a thread, as any other-language client
            with httpx.Client(base_url=self.server.url, timeout=30) as client:
                return client.request(method, path, json=body, content=content, headers=headers)

        response = await trio.to_thread.run_sync(send)
        return response.status_code, response.json()


@pytest.fixture
def plane() -> FakeControlPlane:
    return FakeControlPlane()


@pytest.fixture
async def api(plane: FakeControlPlane, nursery: trio.Nursery) -> AsyncIterator[Client]:
    server = await nursery.start(serve_control, plane)
    yield Client(server)


async def test_the_server_reports_its_loopback_port(api: Client) -> None:
    assert api.server.host == "127.0.0.1" and api.server.port > 0
    assert api.server.url == f"http://127.0.0.1:{api.server.port}"


async def test_brokers(api: Client, plane: FakeControlPlane) -> None:
    status, body = await api.call("GET", "/v1/brokers")
    assert status == 200 and body[1] == {"node_id": 1, "host": "127.0.0.1", "port": 9093, "up": True}
    assert await api.call("POST", "/v1/brokers/1/down") == (200, {**body[1], "up": False})
    assert plane.brokers_[1].up is False
    assert await api.call("POST", "/v1/brokers/1/up") == (200, body[1])
    assert plane.calls == [("down", 1), ("up", 1)]


async def test_faults(api: Client, plane: FakeControlPlane) -> None:
    status, body = await api.call(
        "POST", "/v1/faults", {"api": "OffsetCommit", "errors": ["NOT_COORDINATOR"], "count": 1}
    )
    assert (status, body) == (200, {"id": 1})
    assert (await api.call("POST", "/v1/faults", {"api": 12, "error": 27, "broker": 2}))[1] == {"id": 2}
    request = heartbeat.HeartbeatRequest(group_id="g")
    assert plane.rules.match(RequestInfo(int(ApiKey.HEARTBEAT), 4, 2, "c", 1, request)) is not None
    status, listed = await api.call("GET", "/v1/faults")
    assert status == 200
    assert [(f["id"], f["api"], f["hits"], f["active"]) for f in listed] == [
        (1, "OffsetCommit", 0, True),
        (2, "Heartbeat", 1, True),
    ]
    assert listed[0]["rule"] == {"api": "OffsetCommit", "errors": ["NOT_COORDINATOR"], "count": 1}
    assert await api.call("DELETE", "/v1/faults/1") == (200, {"removed": 1})
    assert await api.call("DELETE", "/v1/faults/1") == (404, {"error": "no fault rule 1"})
    assert await api.call("DELETE", "/v1/faults") == (200, {"removed": 1})
    assert plane.rules.active is False


async def test_groups(api: Client, plane: FakeControlPlane) -> None:
    status, group = await api.call("GET", "/v1/groups/g")
    assert status == 200
    assert {k: group[k] for k in ("state", "generation", "coordinator", "protocol", "leader")} == {
        "state": "Stable",
        "generation": 3,
        "coordinator": 1,
        "protocol": "range",
        "leader": "m-1",
    }
    assert group["members"][1] == {
        "member_id": "m-2",
        "group_instance_id": "static-2",
        "client_id": "app",
        "client_host": "/127.0.0.1",
        "session_timeout_ms": 45_000,
        "rebalance_timeout_ms": 300_000,
        "subscription": ["orders"],
        "assignment": [{"topic": "orders", "partitions": [2]}],
        "member_epoch": None,
    }
    status, moved = await api.call("POST", "/v1/groups/g/coordinator", {"node_id": 2})
    assert status == 200 and moved["leader"] == 2 and moved["topic"] == "__consumer_offsets"
    assert await api.call("POST", "/v1/groups/g/members/m-1/expire") == (200, {"expired": "m-1"})
    assert await api.call("POST", "/v1/groups/g/rebalance") == (200, {"rebalancing": "g"})
    assert plane.calls == [("move_coordinator", "g", 2), ("expire", "g", "m-1"), ("rebalance", "g")]


async def test_partitions_load_delay_and_versions(api: Client, plane: FakeControlPlane) -> None:
    status, moved = await api.call("POST", "/v1/partitions/orders/1/leader", {"node_id": 0})
    assert status == 200 and (moved["leader"], moved["leader_epoch"]) == (0, 1)
    status, gone = await api.call("POST", "/v1/partitions/orders/1/leaderless")
    assert status == 200 and (gone["leader"], gone["leader_epoch"]) == (-1, 2)
    assert await api.call("POST", "/v1/coordinator-load-delay", {"ms": 1500}) == (200, {"ms": 1500})
    assert plane.load_delay_ms == 1500
    status, limited = await api.call("POST", "/v1/versions", {"api": "Fetch", "max_version": 11})
    assert status == 200 and limited == {
        "api": "Fetch",
        "api_key": 1,
        "min_version": 4,
        "max_version": 11,
        "limited": True,
    }
    assert plane.limits.table[1] == (4, 11)
    status, listed = await api.call("DELETE", "/v1/versions")
    assert status == 200 and not any(v["limited"] for v in listed) and plane.limits.table[1] == (4, 16)


async def test_clock_requests_and_snapshot(api: Client, plane: FakeControlPlane) -> None:
    assert await api.call("GET", "/v1/clock") == (200, {"mode": "manual", "now_ms": 1_700_000_000_000})
    assert await api.call("POST", "/v1/clock/advance", {"ms": 30_000}) == (
        200,
        {"mode": "manual", "now_ms": 1_700_000_030_000},
    )
    for group in ("a", "b", "a"):
        plane.log.record(
            int(ApiKey.HEARTBEAT),
            4,
            0,
            1,
            "c",
            1,
            2,
            heartbeat.HeartbeatRequest(group_id=group),
            heartbeat.HeartbeatResponse(),
        )
    status, page = await api.call("GET", "/v1/requests?since=0&group=a&api=Heartbeat")
    assert status == 200 and page["next"] == 3 and [r["cursor"] for r in page["requests"]] == [0, 2]
    assert page["requests"][0]["request"]["group_id"] == "a" and page["missed"] == 0
    status, page = await api.call("GET", "/v1/requests?since=1&limit=1")
    assert [r["cursor"] for r in page["requests"]] == [1] and page["next"] == 2
    assert await api.call("DELETE", "/v1/requests") == (200, {"cleared": True})
    status, snap = await api.call("GET", "/v1/snapshot")
    assert status == 200 and set(snap) == {"clock", "brokers", "groups", "offsets", "topics"}


async def test_security_endpoints(api: Client, plane: FakeControlPlane) -> None:
    acl = {"resource_type": "GROUP", "name": "g", "principal": "User:alice", "operation": "READ", "permission": "DENY"}
    assert (await api.call("POST", "/v1/acls", acl))[0] == 200
    assert (await api.call("GET", "/v1/acls"))[1][0]["permission"] == "DENY"
    status, answer = await api.call("POST", "/v1/scram-users", {"user": "alice", "password": "pw-not-echoed"})
    assert status == 200 and answer == {"user": "alice", "mechanism": "SCRAM-SHA-512", "iterations": 4096}
    assert (await api.call("GET", "/v1/security"))[1] == {"listeners": [], "acls": 1}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "error"),
    [
        ("POST", "/v1/faults", {"api": "OffsetComit", "error": "NOT_COORDINATOR"}, 400, "unknown API 'OffsetComit'"),
        ("POST", "/v1/faults", {"api": "OffsetCommit", "error": "NOT_A_THING"}, 400, "unknown error 'NOT_A_THING'"),
        ("POST", "/v1/faults", {"api": "OffsetCommit", "errors": []}, 400, "errors is empty"),
        ("POST", "/v1/faults", {"api": "Fetch", "group": "g", "delay_ms": 5}, 400, "Fetch requests never name a group"),
        ("POST", "/v1/faults", {"api": "OffsetCommit", "eror": "X"}, 400, "eror: unknown field"),
        ("POST", "/v1/faults", {"api": "OffsetCommit", "close": "sideways"}, 400, "close: Input should be"),
        ("POST", "/v1/faults", {"api": "OffsetCommit", "delay_ms": "soon"}, 400, "delay_ms: Input should be"),
        ("POST", "/v1/faults", [1, 2], 400, "Input should be"),
        ("POST", "/v1/brokers/7/down", None, 404, "unknown broker 7"),
        ("POST", "/v1/brokers/x/down", None, 400, "path.node_id: Input should be a valid integer"),
        ("GET", "/v1/groups/nope", None, 404, "unknown group 'nope'"),
        ("POST", "/v1/groups/g/coordinator", {}, 400, "node_id: Field required"),
        ("POST", "/v1/groups/g/coordinator", {"node_id": 9}, 404, "unknown broker 9"),
        ("POST", "/v1/groups/g/members/ghost/expire", None, 404, "group 'g' has no member 'ghost'"),
        ("POST", "/v1/partitions/orders/9/leader", {"node_id": 0}, 404, "unknown partition orders-9"),
        ("POST", "/v1/clock/advance", {"ms": -5}, 400, "ms: Input should be greater than or equal to 0"),
        ("POST", "/v1/versions", {"api": "Fetch", "max_version": 99}, 400, "not within the served v4-v16"),
        ("GET", "/v1/requests?since=5", None, 400, "cursor 5 is outside 0..0"),
        ("GET", "/v1/requests?api=Bogus", None, 400, "unknown API 'Bogus'"),
        ("GET", "/v1/nowhere", None, 404, "Not Found"),
        ("PUT", "/v1/brokers", None, 405, "Method Not Allowed"),
    ],
)
async def test_bad_input_is_a_one_line_4xx(
    api: Client, method: str, path: str, body: Any, status: int, error: str
) -> None:
    got_status, got = await api.call(method, path, body)
    assert got_status == status and set(got) == {"error"}
    assert error in got["error"] and "\n" not in got["error"]


async def test_malformed_json_and_state_conflicts(api: Client, plane: FakeControlPlane) -> None:
    status, body = await api.call("POST", "/v1/faults", content=b'{"api": "OffsetCommit",')
    assert status == 400 and body["error"].startswith("malformed JSON")
    await plane.broker_down(2)
    assert await api.call("POST", "/v1/groups/g/coordinator", {"node_id": 2}) == (409, {"error": "broker 2 is down"})
    assert await api.call("POST", "/v1/partitions/orders/0/leader", {"node_id": 2}) == (
        409,
        {"error": "broker 2 is down"},
    )
    plane.manual = False
    status, body = await api.call("POST", "/v1/clock/advance", {"ms": 1})
    assert status == 409 and "clock.mode=manual" in body["error"]
    assert plane.faults() == []  # none of the refusals changed anything


async def test_openapi_lists_every_endpoint(api: Client) -> None:
    status, spec = await api.call("GET", "/openapi.json")
    assert status == 200
    listed = {(method.upper(), path) for path, item in spec["paths"].items() for method in item}
    assert listed == {
        ("GET", "/v1/brokers"),
        ("POST", "/v1/brokers/{node_id}/down"),
        ("POST", "/v1/brokers/{node_id}/up"),
        ("POST", "/v1/faults"),
        ("GET", "/v1/faults"),
        ("DELETE", "/v1/faults"),
        ("DELETE", "/v1/faults/{fault_id}"),
        ("GET", "/v1/groups/{group_id}"),
        ("POST", "/v1/groups/{group_id}/coordinator"),
        ("POST", "/v1/groups/{group_id}/members/{member_id}/expire"),
        ("POST", "/v1/groups/{group_id}/rebalance"),
        ("POST", "/v1/partitions/{topic}/{partition}/leader"),
        ("POST", "/v1/partitions/{topic}/{partition}/leaderless"),
        ("POST", "/v1/coordinator-load-delay"),
        ("GET", "/v1/versions"),
        ("POST", "/v1/versions"),
        ("DELETE", "/v1/versions"),
        ("GET", "/v1/clock"),
        ("POST", "/v1/clock/advance"),
        ("GET", "/v1/requests"),
        ("DELETE", "/v1/requests"),
        ("GET", "/v1/snapshot"),
        ("GET", "/v1/transitions"),
        ("GET", "/v1/share/settings"),
        ("PATCH", "/v1/share/settings"),
        ("GET", "/v1/share/groups/{group_id}/partitions"),
        ("GET", "/v1/security"),
        ("GET", "/v1/acls"),
        ("POST", "/v1/acls"),
        ("POST", "/v1/scram-users"),
        ("GET", "/v1/telemetry/clients"),
        ("GET", "/v1/telemetry/clients/{client}"),
        ("GET", "/v1/telemetry/subscriptions"),
        ("PUT", "/v1/telemetry/subscriptions/{name}"),
        ("DELETE", "/v1/telemetry/subscriptions/{name}"),
        ("GET", "/"),
    }
    fault_schema = spec["components"]["schemas"]["FaultSpec"]
    assert fault_schema["additionalProperties"] is False and "errors" in fault_schema["properties"]


async def test_a_token_guards_everything_and_a_refusal_changes_nothing(
    plane: FakeControlPlane, nursery: trio.Nursery
) -> None:
    server = await nursery.start(serve_control, plane, "127.0.0.1", 0, "s3cret")
    anonymous, wrong, right = Client(server), Client(server, "guess"), Client(server, "s3cret")
    for client in (anonymous, wrong):
        assert await client.call("POST", "/v1/brokers/0/down") == (401, {"error": "missing or wrong bearer token"})
        assert (await client.call("POST", "/v1/faults", {"api": "Heartbeat", "delay_ms": 5}))[0] == 401
        assert (await client.call("GET", "/openapi.json"))[0] == 401
    assert plane.calls == [] and plane.faults() == [] and plane.brokers_[0].up
    assert (await right.call("POST", "/v1/brokers/0/down"))[0] == 200 and plane.calls == [("down", 0)]


async def test_a_non_loopback_host_needs_a_token(plane: FakeControlPlane) -> None:
    with pytest.raises(ControlError, match="control.host 0.0.0.0 is not loopback: set control.token too"):
        await serve_control(plane, "0.0.0.0", 0, None)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("") and not is_loopback("example.com")


async def test_cancelling_the_nursery_stops_the_server(plane: FakeControlPlane) -> None:
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve_control, plane)
            assert (await Client(server).call("GET", "/v1/clock"))[0] == 200
            scope.cancel()
    with pytest.raises(OSError):
        await trio.open_tcp_stream("127.0.0.1", server.port)


async def test_the_docs_describe_every_endpoint(api: Client) -> None:
    docs = (Path(__file__).parents[3] / "docs" / "control-plane.md").read_text()
    documented = {
        re.sub(r"\{[^}]*\}", "{}", m) for m in re.findall(r"`((?:GET|POST|PUT|PATCH|DELETE) /(?:v1/)?[^`?]*)", docs)
    }
    _, spec = await api.call("GET", "/openapi.json")
    served = {
        f"{method.upper()} {re.sub(r'{[^}]*}', '{}', path)}" for path, item in spec["paths"].items() for method in item
    }
    assert served <= documented, served - documented


async def test_share_settings_change_at_run_time_and_a_bad_one_changes_nothing(api: Client) -> None:
    status, before = await api.call("GET", "/v1/share/settings")
    assert status == 200 and before["group.share.record.lock.duration.ms"] == 30000
    status, after = await api.call("PATCH", "/v1/share/settings", {"group.share.record.lock.duration.ms": 5000})
    assert status == 200 and after["group.share.record.lock.duration.ms"] == 5000
    bad = {"group.share.delivery.count.limit": 3, "share.isolation.level": "sometimes"}
    status, answer = await api.call("PATCH", "/v1/share/settings", bad)
    assert status == 400 and "share.isolation.level" in answer["error"]
    status, now = await api.call("GET", "/v1/share/settings")
    assert now["group.share.delivery.count.limit"] == before["group.share.delivery.count.limit"]
    status, answer = await api.call("PATCH", "/v1/share/settings", {"group.share.nope": 1})
    assert status == 400 and "unknown share setting" in answer["error"]
