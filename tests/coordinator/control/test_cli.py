"""`kgc control VERB ...` against FakeControlPlane behind the real HTTP API: each verb's call and
effect, JSON on stdout, and one line on stderr with exit 2 for every refusal."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from coordinator.__main__ import main as kgc_main
from coordinator.control.cli import main
from coordinator.control.http_api import ControlServer, serve_control
from protocol.api import ApiKey
from protocol.messages import heartbeat
from tests.coordinator.control.fake_plane import FakeControlPlane


@pytest.fixture
def plane() -> FakeControlPlane:
    return FakeControlPlane()


@pytest.fixture
async def server(plane: FakeControlPlane, nursery: trio.Nursery) -> AsyncIterator[ControlServer]:
    yield await nursery.start(serve_control, plane, "127.0.0.1", 0, "tok")


async def kgc(
    server: ControlServer, capsys: pytest.CaptureFixture[str], *argv: str, token: str = "tok"
) -> tuple[int, Any, str]:
    code = await trio.to_thread.run_sync(main, ["--url", server.url, "--token", token, *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else None, err


async def test_fail_delay_and_friends_add_rules(
    server: ControlServer, plane: FakeControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await kgc(server, capsys, "fail", "OffsetCommit", "NOT_COORDINATOR", "--count", "1") == (0, {"id": 1}, "")
    await kgc(server, capsys, "fail", "JoinGroup", "COORDINATOR_LOAD_IN_PROGRESS,NONE,15", "--group", "g")
    await kgc(server, capsys, "fail", "Heartbeat", "REBALANCE_IN_PROGRESS", "--every", "--state", "Stable")
    await kgc(server, capsys, "delay", "Fetch", "500", "--broker", "1", "--topic", "orders", "--partition", "2")
    await kgc(server, capsys, "drop", "SyncGroup", "--nth", "2")
    await kgc(server, capsys, "close", "OffsetCommit", "--after", "--client-id", "app", "--for-ms", "1000")
    await kgc(server, capsys, "throttle", "Produce", "250", "--min-version", "7", "--max-version", "9")
    await kgc(server, capsys, "rule", '{"api": "LeaveGroup", "member": "static-1", "close": "before"}')
    assert [v.rule for v in plane.faults()] == [
        {"api": "OffsetCommit", "errors": ["NOT_COORDINATOR"], "count": 1},
        {"api": "JoinGroup", "group": "g", "errors": ["COORDINATOR_LOAD_IN_PROGRESS", "NONE", 15]},
        {"api": "Heartbeat", "group_state": "Stable", "error": "REBALANCE_IN_PROGRESS"},
        {"api": "Fetch", "broker": 1, "topic": "orders", "partition": 2, "delay_ms": 500},
        {"api": "SyncGroup", "nth": 2, "drop_response": True},
        {"api": "OffsetCommit", "client_id": "app", "close": "after", "for_ms": 1000},
        {"api": "Produce", "min_version": 7, "max_version": 9, "throttle_ms": 250},
        {"api": "LeaveGroup", "member": "static-1", "close": "before"},
    ]
    code, listed, _ = await kgc(server, capsys, "faults")
    assert code == 0 and [f["id"] for f in listed] == list(range(1, 9))
    assert (await kgc(server, capsys, "unfault", "3"))[:2] == (0, {"removed": 3})
    assert (await kgc(server, capsys, "clear-faults"))[:2] == (0, {"removed": 7})


async def test_cluster_clock_and_request_verbs(
    server: ControlServer, plane: FakeControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    code, brokers, _ = await kgc(server, capsys, "brokers")
    assert code == 0 and [b["node_id"] for b in brokers] == [0, 1, 2]
    assert (await kgc(server, capsys, "broker-down", "2"))[1]["up"] is False
    assert (await kgc(server, capsys, "broker-up", "2"))[1]["up"] is True
    assert (await kgc(server, capsys, "group", "g"))[1]["state"] == "Stable"
    assert (await kgc(server, capsys, "group", "a/b"))[1]["group_id"] == "a/b"  # "/" in a group id
    assert (await kgc(server, capsys, "group", "a/b/rebalance"))[1]["group_id"] == "a/b/rebalance"
    assert (await kgc(server, capsys, "rebalance", "a/b"))[1] == {"rebalancing": "a/b"}
    assert (await kgc(server, capsys, "move-coordinator", "g", "0"))[1]["leader"] == 0
    assert (await kgc(server, capsys, "expire", "g", "m-2"))[1] == {"expired": "m-2"}
    assert (await kgc(server, capsys, "rebalance", "g"))[1] == {"rebalancing": "g"}
    assert (await kgc(server, capsys, "move-leader", "orders", "1", "2"))[1]["leader"] == 2
    assert (await kgc(server, capsys, "leaderless", "orders", "1"))[1]["leader"] == -1
    assert (await kgc(server, capsys, "load-delay", "2000"))[1] == {"ms": 2000}
    assert (await kgc(server, capsys, "limit-version", "Metadata", "9"))[1]["max_version"] == 9
    assert (await kgc(server, capsys, "versions"))[1][3]["max_version"] == 9
    assert (await kgc(server, capsys, "clear-versions"))[0] == 0 and plane.limits.table[3] == (0, 12)
    assert (await kgc(server, capsys, "clock"))[1]["mode"] == "manual"
    assert (await kgc(server, capsys, "advance", "30000"))[1]["now_ms"] == 1_700_000_030_000
    for group in ("a", "b"):
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
    code, page, _ = await kgc(server, capsys, "requests", "--since", "0", "--api", "Heartbeat", "--group", "b")
    assert code == 0 and page["next"] == 2 and [r["group"] for r in page["requests"]] == ["b"]
    assert set((await kgc(server, capsys, "snapshot"))[1]) >= {"groups", "topics", "offsets"}
    assert plane.calls == [
        ("down", 2),
        ("up", 2),
        ("rebalance", "a/b"),
        ("move_coordinator", "g", 0),
        ("expire", "g", "m-2"),
        ("rebalance", "g"),
    ]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["fail", "OffsetComit", "NOT_COORDINATOR"], "kgc control: 400 unknown API 'OffsetComit'"),
        (["fail", "OffsetCommit", "NOT_COORDINATOR,15", "--every"], "kgc control: --every takes one error"),
        (["broker-down", "9"], "kgc control: 404 unknown broker 9"),
        (["group", "x/y"], "kgc control: 404 unknown group 'x/y'"),
        (["rule", "{nope"], "kgc control: the rule is not JSON"),
        (["requests", "--since", "99"], "kgc control: 400 cursor 99 is outside 0..0"),
    ],
)
async def test_refusals_are_one_line_on_stderr_with_exit_2(
    server: ControlServer, plane: FakeControlPlane, capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    code, out, err = await kgc(server, capsys, *argv)
    assert (code, out) == (2, None)
    assert err.startswith(line) and err.count("\n") == 1
    assert plane.faults() == [] and plane.calls == []


async def test_a_wrong_token_is_refused(
    server: ControlServer, plane: FakeControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await kgc(server, capsys, "broker-down", "0", token="nope") == (
        2,
        None,
        "kgc control: 401 missing or wrong bearer token\n",
    )
    assert plane.calls == []


async def test_no_url_or_no_server(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KGC_CONTROL_URL", raising=False)
    assert main(["brokers"]) == 2
    assert "give --url or set KGC_CONTROL_URL" in capsys.readouterr().err
    listener = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener[0].socket.getsockname()[1]
    await listener[0].aclose()  # a port nothing listens on
    code = await trio.to_thread.run_sync(main, ["--url", f"http://127.0.0.1:{port}", "clock"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"kgc control: cannot reach http://127.0.0.1:{port}")


async def test_kgc_hands_control_to_this_module(
    server: ControlServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KGC_CONTROL_URL", server.url)
    monkeypatch.setenv("KGC_CONTROL_TOKEN", "tok")

    def run() -> object:
        with pytest.raises(SystemExit) as exit_info:
            kgc_main(["control", "clock"])
        return exit_info.value.code

    assert await trio.to_thread.run_sync(run) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "manual"


async def test_security_verbs(
    server: ControlServer, plane: FakeControlPlane, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, added, _ = await kgc(server, capsys, "acl", "GROUP", "orders-", "User:alice", "READ", "--prefixed", "--deny")
    assert code == 0 and (added["pattern_type"], added["permission"]) == ("PREFIXED", "DENY")
    assert (await kgc(server, capsys, "acls"))[1] == [added]
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret-from-stdin\n"))  # never on the command line
    code, answer, _ = await kgc(server, capsys, "scram-user", "alice", "--mechanism", "SCRAM-SHA-256")
    assert code == 0 and answer == {"user": "alice", "mechanism": "SCRAM-SHA-256", "iterations": 4096}
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, _, err = await kgc(server, capsys, "scram-user", "bob")
    assert code == 2 and "password on stdin" in err and plane.scram_users == ["alice"]
