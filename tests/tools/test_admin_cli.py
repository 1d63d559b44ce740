"""`kgc topics`, `kgc configs` and `kgc delete-records` against a real server (EmbeddedServer), each
checked against what the server then holds; bad input is one line on stderr and exit 2."""

from __future__ import annotations

import json

import pytest

from coordinator.__main__ import main
from coordinator.embed.embedded import EmbeddedServer
from tests.tools import wire


@pytest.fixture(scope="module")
def server():
    with EmbeddedServer(topics={"orders": 3}) as running:
        yield running


def kgc(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_topics_create_describe_grow_list_delete(server, capsys):
    b = ("--bootstrap-server", server.bootstrap)
    code, out, err = kgc(
        capsys, "topics", *b, "--create", "--topic", "cli", "--partitions", "2", "--config", "retention.ms=5000"
    )
    assert (code, out, err) == (0, "Created topic cli.\n", "")
    assert kgc(capsys, "topics", *b, "--alter", "--topic", "cli", "--partitions", "4")[0] == 0
    code, out, _ = kgc(capsys, "topics", *b, "--describe", "--topic", "cli")
    lines = out.splitlines()
    assert lines[0].startswith("Topic: cli\tTopicId: ") and "PartitionCount: 4\tReplicationFactor: 1" in lines[0]
    assert lines[0].endswith("Configs: retention.ms=5000")
    assert [line.split("\t")[2] for line in lines[1:]] == [f"Partition: {p}" for p in range(4)]
    code, out, _ = kgc(capsys, "topics", *b, "--list", "--exclude-internal")
    assert out.split() == ["cli", "orders"]
    for argv, words in [
        (("--alter", "--topic", "cli", "--partitions", "3"), "INVALID_PARTITIONS"),
        (("--create", "--topic", "cli"), "TOPIC_ALREADY_EXISTS"),
        (("--alter", "--topic", "cli"), "--partitions"),
        (("--describe", "--topic", "nope"), "UNKNOWN_TOPIC_OR_PARTITION"),
        (("--create", "--topic", "x", "--config", "retention.ms"), "NAME=VALUE"),
    ]:
        code, out, err = kgc(capsys, "topics", *b, *argv)
        assert code == 2 and len(err.splitlines()) == 1 and words in err, (argv, err)
    assert kgc(capsys, "topics", *b, "--create", "--topic", "cli", "--if-not-exists")[0] == 0
    assert kgc(capsys, "topics", *b, "--delete", "--topic", "cli") == (0, "", "")
    assert kgc(capsys, "topics", *b, "--list", "--exclude-internal")[1].split() == ["orders"]
    assert kgc(capsys, "topics", *b, "--delete", "--topic", "cli", "--if-exists")[0] == 0


def test_configs_describe_and_alter_topics_brokers_groups(server, capsys):
    b = ("--bootstrap-server", server.bootstrap)
    alter = ("configs", *b, "--alter")
    assert kgc(
        capsys,
        *alter,
        "--entity-type",
        "topics",
        "--entity-name",
        "orders",
        "--add-config",
        "retention.ms=1000,cleanup.policy=[delete]",
    ) == (0, "Completed updating config for topic orders.\n", "")
    code, out, _ = kgc(capsys, "configs", *b, "--describe", "--entity-type", "topics", "--entity-name", "orders")
    assert out.splitlines()[0] == "Dynamic configs for topic orders are:"
    assert "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, " in out
    assert (
        kgc(capsys, *alter, "--entity-type", "topics", "--entity-name", "orders", "--delete-config", "retention.ms")[0]
        == 0
    )
    code, out, _ = kgc(capsys, "configs", *b, "--describe", "--entity-type", "topics", "--entity-name", "orders")
    assert "retention.ms" not in out and "cleanup.policy=delete" in out
    code, out, _ = kgc(
        capsys, *alter, "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=7200000"
    )
    assert out == "Completed updating default config for brokers in the cluster.\n"
    code, out, _ = kgc(capsys, "configs", *b, "--describe", "--entity-type", "brokers", "--entity-default")
    assert out.splitlines() == [
        "Default configs for brokers in the cluster are:",
        "  log.retention.ms=7200000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=7200000}",
    ]
    code, out, _ = kgc(capsys, "configs", *b, "--describe", "--entity-type", "brokers", "--entity-name", "0", "--all")
    assert out.splitlines()[0] == "All configs for broker 0 are:" and "  control.token=null sensitive=true" in out
    assert (
        kgc(
            capsys,
            *alter,
            "--entity-type",
            "groups",
            "--entity-name",
            "g",
            "--add-config",
            "share.delivery.count.limit=3",
        )[0]
        == 0
    )
    code, out, _ = kgc(capsys, "configs", *b, "--describe", "--entity-type", "groups")
    assert out.splitlines()[:2] == [
        "Dynamic configs for group g are:",
        "  share.delivery.count.limit=3 sensitive=false synonyms={GROUP_CONFIG:share.delivery.count.limit=3}",
    ]
    for argv, words in [
        (("--entity-type", "topics", "--entity-name", "orders", "--add-config", "nope.ms=1"), "INVALID_CONFIG"),
        (("--entity-type", "brokers", "--entity-name", "0", "--add-config", "group.max.size=2"), "INVALID_REQUEST"),
        (
            ("--entity-type", "groups", "--entity-name", "g", "--add-config", "share.isolation.level=x"),
            "INVALID_CONFIG",
        ),
        (("--entity-type", "topics", "--entity-name", "orders"), "--add-config"),
        (("--entity-type", "topics", "--entity-default", "--add-config", "a=1"), "--entity-default"),
        (("--entity-type", "topics", "--entity-name", "orders", "--add-config", "a"), "K=V"),
    ]:
        code, out, err = kgc(capsys, *alter, *argv)
        assert code == 2 and len(err.splitlines()) == 1 and words in err, (argv, err)


def test_delete_records_by_json_file_and_by_flags(server, capsys, tmp_path):
    conn = wire.connect(server.bootstrap)
    wire.produce(conn, "orders", 1, [1, 2, 3, 4, 5])
    conn.close()
    b = ("--bootstrap-server", server.bootstrap)
    spec = tmp_path / "offsets.json"
    spec.write_text(json.dumps({"partitions": [{"topic": "orders", "partition": 1, "offset": 3}], "version": 1}))
    code, out, err = kgc(capsys, "delete-records", *b, "--offset-json-file", str(spec))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Executing records delete operation",
        "Records delete operation completed:",
        "partition: orders-1\tlow_watermark: 3",
    ]
    code, out, err = kgc(capsys, "delete-records", *b, "--topic", "orders", "--partition", "1", "--offset", "99")
    assert code == 2 and "partition: orders-1\terror: OFFSET_OUT_OF_RANGE" in out and len(err.splitlines()) == 1
    spec.write_text("{not json")
    for argv in (
        ("--offset-json-file", str(spec)),
        ("--topic", "orders"),
        ("--offset-json-file", str(tmp_path / "no")),
    ):
        code, out, err = kgc(capsys, "delete-records", *b, *argv)
        assert code == 2 and len(err.splitlines()) == 1 and out == "", (argv, err)
