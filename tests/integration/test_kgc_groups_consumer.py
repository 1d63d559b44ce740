"""`kgc groups --describe` on a KIP-848 consumer group (ConsumerGroupDescribe), against a real
server driven over the wire by the tools' own Connection: members with their epochs and current vs
target assignment (Kafka 4.1's --members --verbose columns, UPGRADED when classic and
consumer-protocol members mix), --state --verbose with the group and target assignment epochs."""

from __future__ import annotations

import json

import pytest

from coordinator.__main__ import main
from coordinator.embed.embedded import EmbeddedServer
from coordinator.tools.kafka_connection import Connection
from protocol.api import ApiKey
from protocol.consumer_protocol import ConsumerProtocolSubscription, encode_subscription
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol


@pytest.fixture(scope="module")
def server():
    with EmbeddedServer(topics={"orders": 4}) as running:
        yield running


def connect(server: EmbeddedServer, client_id: str) -> Connection:
    return Connection(server.host, server.port, client_id, timeout=30)


def join(conn: Connection, group: str, member_id: str) -> object:
    response = conn.send(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        1,
        ConsumerGroupHeartbeatRequest(
            group_id=group,
            member_id=member_id,
            member_epoch=0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=["orders"],
            topic_partitions=[],
        ),
    )
    assert response.error_code == 0, response
    return response


def kgc(server, capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["groups", "--bootstrap-server", server.bootstrap, *argv])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_members_verbose_shows_epochs_and_current_vs_target(server, capsys):
    conn = connect(server, "cli-kip848")
    join(conn, "kip848-cli", "m1")
    join(conn, "kip848-cli", "m2")  # m2 waits for m1 to give up two partitions
    code, out, err = kgc(server, capsys, "--describe", "--group", "kip848-cli", "--members", "--verbose")
    assert code == 0 and err.strip() == "Warning: Consumer group 'kip848-cli' is rebalancing."
    lines = out.splitlines()
    assert lines[1].split() == [
        "GROUP",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        "CURRENT-EPOCH",
        "CURRENT-ASSIGNMENT",
        "TARGET-EPOCH",
        "TARGET-ASSIGNMENT",
    ]
    assert [line.split() for line in lines[2:]] == [
        ["kip848-cli", "m1", "/127.0.0.1", "cli-kip848", "4", "1", "orders:0,1,2,3", "2", "orders:0,1"],
        ["kip848-cli", "m2", "/127.0.0.1", "cli-kip848", "0", "2", "-", "2", "orders:2,3"],
    ]
    code, out, _ = kgc(server, capsys, "--describe", "--group", "kip848-cli", "--members", "--output", "json")
    states = {r["consumer_id"]: r["member_state"] for r in json.loads(out)["rows"]}
    assert states == {"m1": "UNREVOKED_PARTITIONS", "m2": "UNRELEASED_PARTITIONS"}
    conn.close()


def test_state_verbose_shows_the_group_and_target_epochs(server, capsys):
    conn = connect(server, "cli-kip848")
    join(conn, "kip848-state", "m1")
    code, out, _ = kgc(server, capsys, "--describe", "--group", "kip848-state", "--state", "--verbose")
    header, row = out.splitlines()[1].split(), out.splitlines()[2].split()
    assert header == [
        "GROUP",
        "COORDINATOR",
        "(ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        "#MEMBERS",
    ]
    assert row[0] == "kip848-state" and row[-5:] == ["uniform", "Stable", "1", "1", "1"]
    code, out, _ = kgc(server, capsys, "--list", "--state")
    assert ["kip848-state", "Stable"] in [line.split() for line in out.splitlines()]
    conn.close()


def test_a_mixed_group_shows_which_members_upgraded(server, capsys):
    conn = connect(server, "cli-kip848")
    join(conn, "kip848-mixed", "m1")
    sub = encode_subscription(ConsumerProtocolSubscription(version=1, topics=["orders"]))
    request = JoinGroupRequest(
        group_id="kip848-mixed",
        session_timeout_ms=30_000,
        rebalance_timeout_ms=30_000,
        member_id="",
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=sub)],
    )
    first = conn.send(ApiKey.JOIN_GROUP, 5, request)
    request.member_id = first.member_id
    assert conn.send(ApiKey.JOIN_GROUP, 5, request).error_code == 0
    code, out, _ = kgc(server, capsys, "--describe", "--group", "kip848-mixed", "--members", "--verbose")
    lines = out.splitlines()
    assert lines[1].split()[-1] == "UPGRADED"
    assert sorted(line.split()[-1] for line in lines[2:]) == ["false", "true"]
    conn.close()
