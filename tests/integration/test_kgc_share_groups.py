"""`kgc share-groups` (kafka-share-groups.sh's views) against a real server with share groups,
driven over the wire by the tools' own Connection: --list [--state], --describe with --offsets
(start offset and lag), --members [--verbose], --state [--verbose], --delete, an unknown group,
JSON output, and one line with exit 2 when nothing listens."""

from __future__ import annotations

import json

import pytest

from coordinator.__main__ import main
from coordinator.share.persister import ShareState
from coordinator.tools.kafka_connection import Connection
from protocol.api import ApiKey
from protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from tests.coordinator.groups.share.support import FakePersister
from tests.integration.share_support import ThreadedShareServer


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ThreadedShareServer(tmp_path_factory.mktemp("share-cli"), FakePersister()) as running:
        host, port = running.bootstrap.rsplit(":", 1)
        conn = Connection(host, int(port), "cli", 30)
        epochs = {}
        for member in ("m1", "m2", "m1"):  # m1 heartbeats again: it gives up a partition to m2
            request = ShareGroupHeartbeatRequest(
                group_id="sg", member_id=member, member_epoch=epochs.get(member, 0), subscribed_topic_names=["orders"]
            )
            answer = conn.send(ApiKey.SHARE_GROUP_HEARTBEAT, 1, request)
            assert answer.error_code == 0
            epochs[member] = answer.member_epoch
        key = next(k for k in running.persister.states if k.partition == 0)
        running.persister.states[key] = ShareState(1, 0, 0, 0, ())  # start offset 0, nothing delivered
        conn.close()
        yield running


def kgc(server, capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["share-groups", "--bootstrap-server", server.bootstrap, *argv])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_list_with_and_without_states(server, capsys):
    assert kgc(server, capsys, "--list") == (0, "sg\n", "")
    code, out, _ = kgc(server, capsys, "--list", "--state")
    assert code == 0 and out == "GROUP           STATE\nsg              Stable\n"
    assert kgc(server, capsys, "--list", "--state", "Empty") == (0, "GROUP           STATE\n", "")


def test_describe_offsets_shows_start_offsets_and_lag(server, capsys):
    code, out, err = kgc(server, capsys, "--describe", "--group", "sg")
    assert (code, err) == (0, "")
    assert out == (
        "\nGROUP           TOPIC           PARTITION  START-OFFSET  LAG"
        "\nsg              orders          0          0             0"
        "\nsg              orders          1          -             -\n"
    )
    code, out, _ = kgc(server, capsys, "--describe", "--group", "sg", "--offsets", "--verbose")
    assert out.splitlines()[1].split() == ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG"]


def test_describe_members_and_state(server, capsys):
    code, out, _ = kgc(server, capsys, "--describe", "--group", "sg", "--members", "--verbose")
    lines = [line.split() for line in out.splitlines() if line]
    assert lines[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT"]
    assert sorted(row[1] for row in lines[1:]) == ["m1", "m2"]
    assert sorted(row[6] for row in lines[1:]) == ["orders:0", "orders:1"]  # one each
    code, out, _ = kgc(server, capsys, "--describe", "--group", "sg", "--state", "--verbose")
    assert out.strip().splitlines()[0].split()[:3] == ["GROUP", "COORDINATOR", "(ID)"]
    assert out.strip().splitlines()[1].split()[-4:] == ["Stable", "3", "3", "2"]
    code, out, _ = kgc(server, capsys, "--describe", "--group", "sg", "--members", "--output", "json")
    assert sorted(m["member_id"] for m in json.loads(out)) == ["m1", "m2"]


def test_an_unknown_group_and_an_unreachable_broker(server, capsys):
    assert kgc(server, capsys, "--describe", "--group", "nope") == (
        0,
        "\nError: Share group 'nope' does not exist.\n",
        "",
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["share-groups", "--bootstrap-server", "127.0.0.1:1", "--list"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("kgc share-groups: cannot reach 127.0.0.1:1")


def test_delete_a_group_with_members_is_refused(server, capsys):
    code, out, _ = kgc(server, capsys, "--delete", "--group", "sg")
    assert code == 1 and "* Group 'sg' could not be deleted due to: NON_EMPTY_GROUP" in out
