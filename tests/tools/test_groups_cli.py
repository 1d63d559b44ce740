"""`kgc groups` against a real server (EmbeddedServer): every action, checked against what the
test itself produced, committed and assigned over the wire."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from coordinator.__main__ import main
from coordinator.embed.embedded import EmbeddedServer
from coordinator.tools.groups_cli import parse_duration
from tests.tools import wire

HOUR_MS = 3_600_000
NOW_MS = int(time.time() * 1000)
OLD_MS = NOW_MS - 5 * HOUR_MS  # the first 4 records of each partition; the other 6 are "now"


@pytest.fixture(scope="module")
def server():
    with EmbeddedServer(topics={"orders": 3}, settings={"group.initial.rebalance.delay.ms": 0}) as running:
        conn = wire.connect(running.bootstrap)
        for p in range(3):
            wire.produce(conn, "orders", p, [OLD_MS] * 4 + [NOW_MS] * 6)  # log end offset 10
        conn.close()
        yield running


@pytest.fixture
def member(server, request):
    """A Stable group (named after the test) whose one member owns orders 0-2 and committed 3, 5, 7."""
    conn = wire.connect(server.bootstrap, client_id="cli-test")
    group = request.node.name.replace("[", "-").replace("]", "")
    m = wire.join_and_sync(conn, group, "orders", [0, 1, 2])
    wire.commit(conn, m, "orders", {0: 3, 1: 5, 2: 7})
    yield conn, m
    conn.close()


def kgc(server, capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["groups", "--bootstrap-server", server.bootstrap, *argv])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()[1:]]


def test_describe_shows_offsets_lag_and_owner(server, member, capsys):
    conn, m = member
    code, out, err = kgc(server, capsys, "--describe", "--group", m.group)
    assert code == 0 and err == ""
    header = out.splitlines()[1]
    assert header.split() == [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ]
    assert rows(out) == [
        [m.group, "orders", str(p), str(c), "10", str(10 - c), m.member_id, "/127.0.0.1", "cli-test"]
        for p, c in ((0, 3), (1, 5), (2, 7))
    ]
    # Kafka's column layout: group and topic padded to 15, partition to 10, offsets to 15.
    assert out.splitlines()[2].startswith(f"{m.group:<15} orders          0          3               10 ")


def test_list_members_and_state_views(server, member, capsys):
    conn, m = member
    code, out, _ = kgc(server, capsys, "--list")
    assert code == 0 and m.group in out.split()
    code, out, _ = kgc(server, capsys, "--list", "--state", "Stable")
    assert [m.group, "Stable"] in rows(out)
    code, out, _ = kgc(server, capsys, "--list", "--state", "Empty")
    assert m.group not in out
    code, out, _ = kgc(server, capsys, "--describe", "--group", m.group, "--members", "--verbose")
    assert rows(out) == [[m.group, m.member_id, "/127.0.0.1", "cli-test", "3", "orders(0,1,2)"]]
    code, out, _ = kgc(server, capsys, "--describe", "--group", m.group, "--state")
    assert rows(out) == [[m.group, f"127.0.0.1:{server.port}", "(0)", "range", "Stable", "1"]]


def test_reset_is_refused_while_the_group_is_active(server, member, capsys):
    conn, m = member
    code, out, _ = kgc(
        server, capsys, "--reset-offsets", "--group", m.group, "--to-earliest", "--all-topics", "--execute"
    )
    assert code == 1
    assert (
        f"Error: Assignments can only be reset if the group '{m.group}' is inactive, but the current state is Stable."
    ) in out


def committed(server, capsys, group: str) -> dict[int, str]:
    _, out, _ = kgc(server, capsys, "--describe", "--group", group)
    return {int(r[2]): r[3] for r in rows(out)}


@pytest.mark.parametrize(
    "scenario, expected",
    [
        (["--to-earliest"], {0: 0, 1: 0, 2: 0}),
        (["--to-latest"], {0: 10, 1: 10, 2: 10}),
        (["--to-offset", "42"], {0: 10, 1: 10, 2: 10}),  # clamped to the log end, as Kafka does
        (["--shift-by", "-4"], {0: 0, 1: 1, 2: 3}),  # 3-4 clamps to the log start
        (["--by-duration", "PT1H"], {0: 4, 1: 4, 2: 4}),  # the first record newer than an hour ago
        (
            [
                "--to-datetime",
                datetime.fromtimestamp((OLD_MS + HOUR_MS) / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000+00:00"),
            ],
            {0: 4, 1: 4, 2: 4},
        ),
    ],
)
def test_reset_offsets_dry_run_then_execute(server, member, capsys, scenario, expected):
    conn, m = member
    wire.leave(conn, m)
    before = committed(server, capsys, m.group)
    code, out, _ = kgc(server, capsys, "--reset-offsets", "--group", m.group, "--topic", "orders", *scenario)
    assert code == 0
    assert rows(out) == [[m.group, "orders", str(p), str(o)] for p, o in expected.items()]
    assert committed(server, capsys, m.group) == before  # dry run by default
    code, out, _ = kgc(
        server, capsys, "--reset-offsets", "--group", m.group, "--topic", "orders", *scenario, "--execute"
    )
    assert code == 0
    assert committed(server, capsys, m.group) == {p: str(o) for p, o in expected.items()}


def test_empty_group_shows_unowned_offsets_and_json(server, member, capsys):
    conn, m = member
    wire.leave(conn, m)
    code, out, err = kgc(server, capsys, "--describe", "--group", m.group)
    assert f"Consumer group '{m.group}' has no active members." in err
    assert rows(out)[0] == [m.group, "orders", "0", "3", "10", "7", "-", "-", "-"]
    code, out, _ = kgc(server, capsys, "--describe", "--group", m.group, "--output", "json")
    described = json.loads(out)
    assert described["state"] == "Empty"
    lags = [(r["partition"], r["current_offset"], r["lag"]) for r in described["rows"]]
    assert lags == [(0, 3, 7), (1, 5, 5), (2, 7, 3)]


def test_delete_offsets_then_delete_group(server, member, capsys):
    conn, m = member
    code, out, _ = kgc(server, capsys, "--delete", "--group", m.group)
    assert code == 1 and "NON_EMPTY_GROUP" in out
    wire.leave(conn, m)
    code, out, _ = kgc(server, capsys, "--delete-offsets", "--group", m.group, "--topic", "orders:0,1")
    assert code == 0 and f"Request succeed for deleting offsets with topic orders:0,1 group {m.group}" in out
    assert rows(out.split("\n\n")[1]) == [["orders", "0", "Successful"], ["orders", "1", "Successful"]]
    assert committed(server, capsys, m.group) == {2: "7"}
    code, out, _ = kgc(server, capsys, "--delete", "--group", m.group)
    assert code == 0 and f"Deletion of requested consumer groups ('{m.group}') was successful." in out
    code, out, _ = kgc(server, capsys, "--describe", "--group", m.group)
    assert code == 1 and f"Error: Consumer group '{m.group}' does not exist." in out


def test_duration_parsing():
    assert parse_duration("PT1H") == HOUR_MS
    assert parse_duration("P1DT2H3M4.5S") == ((24 + 2) * 60 + 3) * 60_000 + 4500
    with pytest.raises(ValueError):
        parse_duration("1 hour")


def test_unreachable_broker_is_a_clean_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["groups", "--bootstrap-server", "127.0.0.1:1", "--list"])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "kgc groups: cannot reach 127.0.0.1:1: " in captured.err
